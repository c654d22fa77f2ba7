"""`gpu_training`: BigQuery query -> split and export -> distributed PyTorch training on GPUs.

The PyTorch trainer in `trainers/torch_ddp` runs as a python package on Vertex's prebuilt PyTorch
image chosen by `framework` and the accelerator (a `pytorch-gpu.*` image for an NVIDIA GPU), with
`replica_count` replicas (one chief, the rest workers) that train together with torch.distributed
(NCCL on GPUs). Locally each replica gets its own GPUs when the machine has them, and runs on CPU
(gloo) when it has none. The trained model and its metrics are the pipeline's outputs.
"""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Metrics, Model

from vertexkit.components import custom_training_job
from vertexkit.pipelines.training import PENGUINS_QUERY, snapshot_and_split


class GpuTrainingOutputs(NamedTuple):
    model: Model
    metrics: Metrics


@dsl.pipeline(
    name="vertexkit-gpu-training",
    description="Train a PyTorch classifier with DistributedDataParallel on GPU replicas.",
)
def gpu_training_pipeline(
    project: str = "local-project",
    location: str = "us-central1",
    gcs_root: str = "gs://local-project-vertexkit-pipelines/gpu-training",
    bq_location: str = "US",
    source_query: str = PENGUINS_QUERY,
    label_column: str = "species",
    framework_version: str = "",
    machine_type: str = "n1-standard-8",
    accelerator_type: str = "NVIDIA_TESLA_T4",
    accelerator_count: int = 1,
    replica_count: int = 2,
    epochs: int = 30,
    batch_size: int = 32,
    learning_rate: float = 0.005,
    hidden_units: int = 64,
) -> GpuTrainingOutputs:
    split = snapshot_and_split(project, bq_location, source_query, gcs_root)
    train = custom_training_job(
        project=project,
        location=location,
        display_name="train-torch-ddp",
        base_output_directory=f"{gcs_root}/training",
        trainer_dir="trainers/torch_ddp",
        python_module="torch_ddp.task",
        framework="pytorch",
        framework_version=framework_version,
        machine_type=machine_type,
        accelerator_type=accelerator_type,
        accelerator_count=accelerator_count,
        replica_count=replica_count,
        args=[
            f"--label-column={label_column}",
            f"--epochs={epochs}",
            f"--batch-size={batch_size}",
            f"--learning-rate={learning_rate}",
            f"--hidden-units={hidden_units}",
        ],
        training_data=split.outputs["train"],
        validation_data=split.outputs["validation"],
        test_data=split.outputs["test"],
    )
    return GpuTrainingOutputs(model=train.outputs["model"], metrics=train.outputs["metrics"])
