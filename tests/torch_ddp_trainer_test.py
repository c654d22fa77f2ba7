"""The PyTorch trainer (trainers/torch_ddp) as Vertex runs it: a staged python package, two
replicas in one job on the local cloud, torch.distributed over gloo (no GPU here), checkpoints
in AIP_CHECKPOINT_DIR and a resumed second run. Needs the optional `vertexkit[torch]` extra."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.cloud import storage
from palmerpenguins import load_penguins

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.runtime.training import TrainingConfig, run_custom_training

pytest.importorskip(
    "torch",
    reason="PyTorch is not installed: it is the optional extra `pip install vertexkit[torch]`",
)

TRAINER_DIR = Path(__file__).resolve().parents[1] / "trainers" / "torch_ddp"
BUCKET = "torch-trainer-test"


@pytest.fixture(scope="module")
def penguins(local_cloud: LocalCloud) -> dict[str, str]:
    ctx = local_cloud.context()
    client = ctx.storage_client()
    if not client.bucket(BUCKET).exists():
        client.create_bucket(BUCKET)
    frame = load_penguins().sample(frac=1.0, random_state=3).reset_index(drop=True)
    cut = int(len(frame) * 0.8)
    base = f"gs://{BUCKET}/penguins"
    frame.iloc[:cut].to_parquet(f"{base}/train.parquet", storage_options=ctx.storage_options())
    frame.iloc[cut:].to_parquet(f"{base}/valid.parquet", storage_options=ctx.storage_options())
    return {"training": f"{base}/train.parquet", "validation": f"{base}/valid.parquet"}


def two_replica_run(penguins: dict[str, str], epochs: int) -> TrainingConfig:
    return TrainingConfig(
        display_name="torch-ddp",
        base_output_directory=f"gs://{BUCKET}/run",
        trainer_dir=str(TRAINER_DIR),
        python_module="torch_ddp.task",
        framework="pytorch",
        replica_count=2,
        data_uris=dict(penguins),
        args=[f"--epochs={epochs}", "--checkpoint-every=3"],
    )


def read_json(client: storage.Client, uri: str) -> dict:
    bucket, _, name = uri.removeprefix("gs://").partition("/")
    return json.loads(client.bucket(bucket).blob(name).download_as_bytes())


def replica_logs(cloud: LocalCloud, job_name: str) -> list[str]:
    job_dir = cloud.home / "vertex" / "training" / job_name.rsplit("/", 1)[1]
    return [(job_dir / f"{pool}-0.log").read_text() for pool in ("workerpool0", "workerpool1")]


def test_two_replicas_train_over_gloo_checkpoint_and_resume(
    cloud_context: CloudContext, local_cloud: LocalCloud, penguins: dict[str, str]
) -> None:
    client = cloud_context.storage_client()
    first = run_custom_training(cloud_context, two_replica_run(penguins, epochs=6), None)
    assert first.metrics is not None
    assert first.metrics["world_size"] == 2 and first.metrics["resumed_from_epoch"] == 0
    assert first.metrics["accuracy"] > 0.8
    for rank, log in enumerate(replica_logs(local_cloud, first.job_name)):
        assert f"rank {rank} of 2 joined the gloo group" in log
    reports = [read_json(client, f"{first.model_dir}/replicas/rank-{r}.json") for r in (0, 1)]
    assert [report["device"] for report in reports] == ["cpu", "cpu"]
    checkpoint = f"gs://{BUCKET}/run/checkpoints/checkpoint.pt"
    assert client.bucket(BUCKET).blob(checkpoint.split("/", 3)[3]).exists()

    second = run_custom_training(cloud_context, two_replica_run(penguins, epochs=8), None)
    assert second.metrics is not None
    assert second.metrics["resumed_from_epoch"] == 6  # epochs 7 and 8 only
    for log in replica_logs(local_cloud, second.job_name):
        assert "resumed from gs://" in log
