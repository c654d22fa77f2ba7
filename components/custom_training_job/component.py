"""custom_training_job: run a training application as a Vertex AI custom job."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from typing import Optional

from kfp.dsl import Dataset, Input, Metrics, Model, Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def custom_training_job(
    display_name: str,
    base_output_directory: str,
    model: Output[Model],
    metrics: Output[Metrics],
    gcp_resources: OutputPath(str),
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
    """Runs a training application as a Vertex AI CustomJob and waits for it.

    Give either a container (`container_image_uri`, optional `command`/`args`) or a Python package
    (`python_package_uris`, or `trainer_dir` built into a source distribution and staged next to
    `base_output_directory`, plus `python_module` and a prebuilt training image by
    `executor_image_uri` or `framework`/`framework_version`). Inputs are validated before the job
    is created; the job's name goes to `gcp_resources` as soon as it exists, a retried task resumes
    that job instead of starting another, and SIGTERM cancels it.

    Args:
        display_name: The job's display name (1..128 characters).
        base_output_directory: gs:// directory for the job's outputs. Each task execution gets
            its own folder `<base_output_directory>/run-<id>` (the same on a retry), so a rerun
            never overwrites a registered model's artifacts; Vertex sets AIP_MODEL_DIR to
            `<folder>/model`, AIP_CHECKPOINT_DIR to `<folder>/checkpoints`,
            AIP_TENSORBOARD_LOG_DIR to `<folder>/logs`.
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
        model: The model directory `<base_output_directory>/model`.
        metrics: The numbers in the trainer's `metrics.json`, when it writes one.
        gcp_resources: GCPC GcpResources JSON naming the CustomJob.
    """
    arguments = dict(locals())  # the job settings, by name, before anything else
    from vertexkit.context import CloudContext
    from vertexkit.runtime.gcp_resources import execution_folder
    from vertexkit.runtime.kfp_outputs import write_json
    from vertexkit.runtime.training import TrainingConfig, run_custom_training

    config = TrainingConfig.from_component_arguments(arguments)
    config.base_output_directory = execution_folder(base_output_directory, gcp_resources)
    result = run_custom_training(
        CloudContext.from_env(project or None, location or None),
        config,
        gcp_resources,
    )
    model.uri = result.model_dir
    model.metadata["custom_job"] = result.job_name
    for name, value in (result.metrics or {}).items():
        metrics.log_metric(name, value)
    write_json(metrics.path, result.metrics or {})
