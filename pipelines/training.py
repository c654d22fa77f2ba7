"""`training`: BigQuery query -> split and export -> custom training -> upload -> evaluate ->
compare with the champion -> deploy only if promoted.

Defaults train a species classifier on `bigquery-public-data.ml_datasets.penguins` with the
tabular trainer in `trainers/tabular`. `project`, `location` and `gcs_root` are filled in by
`vertexkit run` (from the local cloud, or from --project/--region/--pipeline-root).
"""

from typing import Any, NamedTuple

from google_cloud_pipeline_components.types.artifact_types import VertexModel
from kfp import dsl
from kfp.dsl import Dataset, Metrics

from vertexkit.components import (
    batch_predict,
    bigquery_export_dataset,
    bigquery_query_job,
    compare_models,
    custom_training_job,
    deploy_model,
    evaluate_model,
    upload_model,
)

# One line: KFP writes parameter defaults into the YAML's comment header, and a newline there
# breaks the YAML for every reader (the SDK's PipelineJob included).
PENGUINS_QUERY = (
    "SELECT species, island, culmen_length_mm, culmen_depth_mm, flipper_length_mm, body_mass_g,"
    " sex FROM `bigquery-public-data.ml_datasets.penguins` WHERE body_mass_g IS NOT NULL"
)


class PipelineOutputs(NamedTuple):
    """What a run reports: the new version, its metrics, the decision, the test split."""

    model: VertexModel
    metrics: Metrics
    promoted: bool
    decision: str
    champion: str
    test_data: Dataset


def snapshot_and_split(project: str, bq_location: str, source_query: str, gcs_root: str) -> Any:
    """The head both built-in pipelines share: snapshot the query into a table, then split it
    into train/validation/test Parquet on Cloud Storage. Returns the export task."""
    snapshot = bigquery_query_job(project=project, location=bq_location, query=source_query)
    return bigquery_export_dataset(
        project=project,
        location=bq_location,
        source=snapshot.outputs["destination_table"],
        gcs_prefix=f"{gcs_root}/data",
    )


def register_evaluate_and_deploy(
    model_dir: Any,
    test_data: Any,
    project: str,
    location: str,
    label_column: str,
    model_display_name: str,
    endpoint_display_name: str,
    framework: str,
    comparison_metric: str,
    min_improvement: float,
    serving_machine_type: str,
    traffic_percentage: int,
    after: Any = None,
) -> PipelineOutputs:
    """The tail the built-in pipelines share: upload, evaluate, compare, deploy if promoted.

    `after`: a task the upload must wait for (retraining scores the champion first, so that a
    model's first upload, which becomes its default version, never races that evaluation).
    """
    upload = upload_model(
        project=project,
        location=location,
        display_name=model_display_name,
        model_dir=model_dir,
        framework=framework,
    )
    if after is not None:
        upload.after(after)
    evaluation = evaluate_model(
        project=project,
        location=location,
        model=upload.outputs["model"],
        test_data=test_data,
        label_column=label_column,
    )
    comparison = compare_models(
        project=project,
        location=location,
        challenger=upload.outputs["model"],
        metric=comparison_metric,
        min_improvement=min_improvement,
    ).after(evaluation)
    with dsl.If(comparison.outputs["Output"] == True, name="challenger-promoted"):  # noqa: E712
        deploy_model(
            project=project,
            location=location,
            model=upload.outputs["model"],
            endpoint_display_name=endpoint_display_name,
            machine_type=serving_machine_type,
            traffic_percentage=traffic_percentage,
        )
    return PipelineOutputs(
        model=upload.outputs["model"],
        metrics=evaluation.outputs["metrics"],
        promoted=comparison.outputs["Output"],
        decision=comparison.outputs["reason"],
        champion=comparison.outputs["champion"],
        test_data=test_data,
    )


@dsl.pipeline(
    name="vertexkit-training",
    description="Train, evaluate and (if better than the champion) deploy a tabular classifier.",
)
def training_pipeline(
    project: str = "local-project",
    location: str = "us-central1",
    gcs_root: str = "gs://local-project-vertexkit-pipelines/training",
    bq_location: str = "US",
    source_query: str = PENGUINS_QUERY,
    label_column: str = "species",
    model_display_name: str = "penguins-classifier",
    endpoint_display_name: str = "penguins-endpoint",
    framework: str = "sklearn",
    model_type: str = "random_forest",
    n_estimators: int = 100,
    max_depth: int = 8,
    machine_type: str = "n1-standard-4",
    accelerator_type: str = "",
    accelerator_count: int = 0,
    comparison_metric: str = "accuracy",
    min_improvement: float = 0.0,
    serving_machine_type: str = "n1-standard-2",
    traffic_percentage: int = 100,
    batch_predict_source: str = "",
    batch_predict_destination: str = "",
    batch_predict_excluded_fields: list = ["species"],  # noqa: B006 (KFP defaults are data)
) -> PipelineOutputs:
    split = snapshot_and_split(project, bq_location, source_query, gcs_root)
    train = custom_training_job(
        project=project,
        location=location,
        display_name="train-tabular",
        base_output_directory=f"{gcs_root}/training",
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
            f"--n-estimators={n_estimators}",
            f"--max-depth={max_depth}",
        ],
        training_data=split.outputs["train"],
        validation_data=split.outputs["validation"],
        test_data=split.outputs["test"],
    )
    outputs = register_evaluate_and_deploy(
        model_dir=train.outputs["model"],
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
    # Optional, off by default: score a BigQuery table (bq://project.dataset.table whose columns
    # are the query's, label included and excluded here) with the new version, promoted or not,
    # into `batch_predict_destination` (bq://project or bq://project.dataset).
    with dsl.If(batch_predict_source != "", name="batch-predict-requested"):
        batch_predict(
            project=project,
            location=location,
            model=outputs.model,
            job_display_name="training-batch-predict",
            bigquery_source_input_uri=batch_predict_source,
            bigquery_destination_output_uri=batch_predict_destination,
            excluded_fields=batch_predict_excluded_fields,
            machine_type=serving_machine_type,
        )
    return outputs
