"""hyperparameter_tuning_job: run a Vertex AI hyperparameter tuning job over a trainer."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from typing import Optional

from kfp.dsl import Artifact, Dataset, Input, Model, Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def hyperparameter_tuning_job(
    display_name: str,
    base_output_directory: str,
    metric_id: str,
    goal: str,
    parameters: list,
    best_model: Output[Model],
    trials: Output[Artifact],
    gcp_resources: OutputPath(str),
    best_parameters: OutputPath(dict),
    best_metric: OutputPath(float),
    algorithm: str = "ALGORITHM_UNSPECIFIED",
    max_trial_count: int = 10,
    parallel_trial_count: int = 2,
    max_failed_trial_count: int = 0,
    project: str = "",
    location: str = "us-central1",
    container_image_uri: str = "",
    command: list = [],  # noqa: B006 (KFP defaults are data, never mutated)
    args: list = [],  # noqa: B006
    python_package_uris: list = [],  # noqa: B006
    trainer_dir: str = "",
    python_module: str = "",
    executor_image_uri: str = "",
    framework: str = "",
    framework_version: str = "",
    machine_type: str = "n1-standard-4",
    accelerator_type: str = "",
    accelerator_count: int = 0,
    replica_count: int = 1,
    worker_pool_specs: list = [],  # noqa: B006
    reduction_server_replica_count: int = 0,
    reduction_server_machine_type: str = "n1-highcpu-16",
    boot_disk_type: str = "pd-ssd",
    boot_disk_size_gb: int = 100,
    env: dict = {},  # noqa: B006
    service_account: str = "",
    network: str = "",
    encryption_spec_key_name: str = "",
    timeout: str = "604800s",
    restart_job_on_worker_restart: bool = False,
    tensorboard: str = "",
    labels: dict = {},  # noqa: B006
    training_data: Optional[Input[Dataset]] = None,
    validation_data: Optional[Input[Dataset]] = None,
    test_data: Optional[Input[Dataset]] = None,
):
    """Runs trials of a training application with different hyperparameters; picks the best.

    Each trial runs the same job settings as `custom_training_job` with `--name=value` arguments
    for the trial's parameters appended; the trainer reports `metric_id` through cloudml-hypertune.
    Validated before anything is created; the job goes to `gcp_resources` at once, a retried task
    resumes it, SIGTERM cancels it.

    Args:
        display_name: The tuning job's display name.
        base_output_directory: gs:// directory. Each task execution gets its own folder
            `<base_output_directory>/run-<id>` (the same on a retry); trial N writes its model
            to `<folder>/N/model`.
        metric_id: The metric the trainer reports with hypertune, e.g. accuracy.
        goal: MAXIMIZE or MINIMIZE.
        parameters: Parameter specs, compact form, e.g.
            [{"parameter_id": "max_depth", "type": "integer", "min": 2, "max": 8},
             {"parameter_id": "learning_rate", "type": "double", "min": 0.01, "max": 0.3,
               "scale": "log"},
             {"parameter_id": "model_type", "type": "categorical", "values": ["a", "b"]},
             {"parameter_id": "n_estimators", "type": "discrete", "values": [50, 100]}];
            type is double, integer, categorical or discrete; scale is linear, log or
            reverse_log. Vertex REST ParameterSpec dicts are accepted as they are.
        algorithm: ALGORITHM_UNSPECIFIED (Vertex's Bayesian optimisation), GRID_SEARCH or
            RANDOM_SEARCH.
        max_trial_count: Trials to run in total.
        parallel_trial_count: Trials running at once (<= max_trial_count).
        max_failed_trial_count: Failed trials tolerated before the job fails (0: Vertex decides).
        project: Google Cloud project; empty means GOOGLE_CLOUD_PROJECT.
        location: Vertex AI region, e.g. us-central1.
        container_image_uri: A training container image (custom or prebuilt). Excludes a package.
        command: Overrides the container's ENTRYPOINT, e.g. ["python", "-m", "trainer.task"].
        args: Arguments for the trainer (container args or python module args).
        python_package_uris: gs:// URIs of Python source distributions to install.
        trainer_dir: A local trainer folder (with pyproject.toml or setup.py) to build and stage
            instead of `python_package_uris`.
        python_module: Module to run from the package, e.g. tabular_trainer.task.
        executor_image_uri: Prebuilt training image to run the package in.
        framework: Picks the prebuilt training image when `executor_image_uri` is empty:
            sklearn, xgboost, tensorflow or pytorch.
        framework_version: Version of `framework`; empty means the newest listed.
        machine_type: Machine of each replica, e.g. n1-standard-4, a2-highgpu-1g.
        accelerator_type: GPU/TPU type per replica, e.g. NVIDIA_TESLA_T4; empty for none.
        accelerator_count: Accelerators per replica (allowed counts depend on the machine).
        replica_count: Total replicas: one chief (pool 0) plus `replica_count - 1` workers (pool 1)
            on the same machine and image.
        worker_pool_specs: Extra worker pools appended as Vertex REST JSON (camelCase
            WorkerPoolSpec dicts), e.g. an evaluator pool.
        reduction_server_replica_count: Replicas of a Reduction Server pool (pool 2) that speeds
            up all-reduce between GPU workers; 0 for none.
        reduction_server_machine_type: Machine of the Reduction Server replicas.
        boot_disk_type: pd-ssd (default) or pd-standard.
        boot_disk_size_gb: Boot disk size, 100..64000 GiB.
        env: Environment variables for the trainer.
        service_account: Service account the job runs as.
        network: VPC network to peer, projects/NUMBER/global/networks/NAME.
        encryption_spec_key_name: Cloud KMS key (CMEK) protecting the job.
        timeout: Maximum run time as a duration, e.g. "3600s".
        restart_job_on_worker_restart: Restart the whole job when a worker restarts.
        tensorboard: A Vertex TensorBoard resource name to stream logs to.
        labels: Labels on the job.
        training_data: Training split; its URI reaches the trainer as `--training-data-uri=` and
            AIP_TRAINING_DATA_URI.
        validation_data: Validation split (`--validation-data-uri=`, AIP_VALIDATION_DATA_URI).
        test_data: Test split (`--test-data-uri=`, AIP_TEST_DATA_URI).


    Returns:
        best_model: The best trial's model directory, `<base>/<trial_id>/model`.
        trials: JSON file (`trials.json` in the artifact) with every trial as Vertex reports it.
        gcp_resources: GCPC GcpResources JSON naming the HyperparameterTuningJob.
        best_parameters: The best trial's parameters, {parameter_id: value}.
        best_metric: The best trial's final value of `metric_id`.
    """
    arguments = dict(locals())  # the job settings, by name, before anything else
    import json
    import os

    from vertexkit.context import CloudContext
    from vertexkit.runtime.gcp_resources import execution_folder
    from vertexkit.runtime.training import StudyConfig, TrainingConfig, run_tuning

    config = TrainingConfig.from_component_arguments(arguments)
    config.base_output_directory = execution_folder(base_output_directory, gcp_resources)
    result = run_tuning(
        CloudContext.from_env(project or None, location or None),
        config,
        StudyConfig(
            metric_id=metric_id,
            goal=goal,
            parameters=parameters,
            algorithm=algorithm,
            max_trial_count=max_trial_count,
            parallel_trial_count=parallel_trial_count,
            max_failed_trial_count=max_failed_trial_count,
        ),
        gcp_resources,
    )
    best_model.uri = result.best_model_dir
    best_model.metadata.update({"tuning_job": result.job_name, "trial_id": result.best_trial_id})
    os.makedirs(trials.path, exist_ok=True)
    with open(os.path.join(trials.path, "trials.json"), "w") as handle:
        json.dump(result.trials, handle, indent=2)
    trials.metadata["trial_count"] = len(result.trials)
    with open(best_parameters, "w") as handle:
        json.dump(result.best_parameters, handle)
    with open(best_metric, "w") as handle:
        handle.write(repr(result.best_metric))
