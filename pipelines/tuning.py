"""`tuning`: the training pipeline with a hyperparameter tuning job choosing the model first.

The tuning job's best trial's model goes to upload -> evaluate -> compare -> deploy if promoted.
"""

from kfp import dsl

from vertexkit.components import hyperparameter_tuning_job
from vertexkit.pipelines.training import (
    PENGUINS_QUERY,
    PipelineOutputs,
    register_evaluate_and_deploy,
    snapshot_and_split,
)

DEFAULT_PARAMETERS = [
    {"parameter_id": "n_estimators", "type": "integer", "min": 20, "max": 200},
    {"parameter_id": "max_depth", "type": "integer", "min": 2, "max": 12},
]


@dsl.pipeline(
    name="vertexkit-tuning",
    description="Tune, then train, evaluate and (if better than the champion) deploy.",
)
def tuning_pipeline(
    project: str = "local-project",
    location: str = "us-central1",
    gcs_root: str = "gs://local-project-vertexkit-pipelines/tuning",
    bq_location: str = "US",
    source_query: str = PENGUINS_QUERY,
    label_column: str = "species",
    model_display_name: str = "penguins-classifier",
    endpoint_display_name: str = "penguins-endpoint",
    framework: str = "sklearn",
    model_type: str = "random_forest",
    parameters: list = DEFAULT_PARAMETERS,
    metric_id: str = "accuracy",
    goal: str = "MAXIMIZE",
    algorithm: str = "ALGORITHM_UNSPECIFIED",
    max_trial_count: int = 6,
    parallel_trial_count: int = 2,
    machine_type: str = "n1-standard-4",
    accelerator_type: str = "",
    accelerator_count: int = 0,
    comparison_metric: str = "accuracy",
    min_improvement: float = 0.0,
    serving_machine_type: str = "n1-standard-2",
    traffic_percentage: int = 100,
) -> PipelineOutputs:
    split = snapshot_and_split(project, bq_location, source_query, gcs_root)
    tune = hyperparameter_tuning_job(
        project=project,
        location=location,
        display_name="tune-tabular",
        base_output_directory=f"{gcs_root}/tuning",
        trainer_dir="trainers/tabular",
        python_module="tabular_trainer.task",
        framework=framework,
        machine_type=machine_type,
        accelerator_type=accelerator_type,
        accelerator_count=accelerator_count,
        args=[
            f"--label-column={label_column}",
            f"--framework={framework}",
            f"--model-type={model_type}",
            f"--hptune-metric={metric_id}",
        ],
        metric_id=metric_id,
        goal=goal,
        parameters=parameters,
        algorithm=algorithm,
        max_trial_count=max_trial_count,
        parallel_trial_count=parallel_trial_count,
        training_data=split.outputs["train"],
        validation_data=split.outputs["validation"],
        test_data=split.outputs["test"],
    )
    return register_evaluate_and_deploy(
        model_dir=tune.outputs["best_model"],
        test_data=split.outputs["test"],
        project=project,
        location=location,
        label_column=label_column,
        model_display_name=model_display_name,
        endpoint_display_name=endpoint_display_name,
        framework=framework,
        comparison_metric=comparison_metric,
        min_improvement=min_improvement,
        serving_machine_type=serving_machine_type,
        traffic_percentage=traffic_percentage,
    )
