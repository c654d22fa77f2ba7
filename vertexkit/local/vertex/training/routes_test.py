"""Custom jobs through the real GAPIC JobServiceClient (REST) against the local cloud."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.projects import project_number

TESTDATA = Path(__file__).parent / "testdata"
TERMINAL = {
    aiplatform_v1.JobState.JOB_STATE_SUCCEEDED,
    aiplatform_v1.JobState.JOB_STATE_FAILED,
    aiplatform_v1.JobState.JOB_STATE_CANCELLED,
}


def script_pool(script: str, *args: str, replicas: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "machine_spec": {"machine_type": "n1-standard-4", **extra.pop("machine", {})},
        "replica_count": replicas,
        "container_spec": {
            "image_uri": "us-docker.pkg.dev/my-project/trainers/app:latest",
            "command": ["python", str(TESTDATA / script)],
            "args": list(args),
            **extra,
        },
    }


def create(client: aiplatform_v1.JobServiceClient, parent: str, pools: list[dict], **spec: Any):
    job = {"display_name": "test-job", "job_spec": {"worker_pool_specs": pools, **spec}}
    return client.create_custom_job(parent=parent, custom_job=job)


def wait(client: aiplatform_v1.JobServiceClient, name: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get_custom_job(name=name)
        if job.state in TERMINAL:
            return job
        time.sleep(0.05)
    raise AssertionError(f"{name} did not finish in {timeout}s")


@pytest.fixture
def client(cloud_context: CloudContext) -> aiplatform_v1.JobServiceClient:
    return cloud_context.job_client()


def test_container_job_runs_with_vertex_environment(
    client: aiplatform_v1.JobServiceClient, cloud_context: CloudContext, tmp_path: Path
) -> None:
    out = tmp_path / "env.json"
    pool = script_pool(
        "env_dump.py", str(out), "--epochs=2", env=[{"name": "MY_SETTING", "value": "7"}]
    )
    pool["machine_spec"].update(accelerator_type="NVIDIA_TESLA_T4", accelerator_count=1)
    job = create(
        client, cloud_context.parent, [pool],
        base_output_directory={"output_uri_prefix": "gs://out-bucket/run1"},
    )  # fmt: skip
    assert job.state == aiplatform_v1.JobState.JOB_STATE_QUEUED
    job = wait(client, job.name)
    assert job.state == aiplatform_v1.JobState.JOB_STATE_SUCCEEDED, job.error
    assert job.start_time and job.end_time and job.end_time >= job.start_time
    seen = json.loads(out.read_text())
    env = seen["env"]
    assert seen["argv"] == ["--epochs=2"]
    # The job's own Python (an overlay on this one, execution.job_python): its installs stay there
    own = Path(seen["python"])
    assert own.parts[-4:-2] == (job.name.rsplit("/", 1)[1], "python") and own.name == "python"
    assert (own.parents[1] / "pyvenv.cfg").is_file()
    assert env["AIP_MODEL_DIR"] == "gs://out-bucket/run1/model/"
    assert env["AIP_CHECKPOINT_DIR"] == "gs://out-bucket/run1/checkpoints/"
    assert env["AIP_TENSORBOARD_LOG_DIR"] == "gs://out-bucket/run1/logs/"
    assert env["CLOUD_ML_JOB_ID"] == job.name.rsplit("/", 1)[1]
    # The project ID, not the number the job's name carries (Vertex's training environment
    # variables: "CLOUD_ML_PROJECT_ID: the project ID of the project the job runs in").
    assert env["CLOUD_ML_PROJECT_ID"] == "local-project"
    assert job.name.split("/")[1] == project_number("local-project")
    assert env["CLOUD_ML_REGION"] == job.name.split("/")[3] == "us-central1"
    assert env["MY_SETTING"] == "7"
    assert env["STORAGE_EMULATOR_HOST"] == os.environ["STORAGE_EMULATOR_HOST"]
    cluster = json.loads(env["CLUSTER_SPEC"])
    assert list(cluster["cluster"]) == ["workerpool0"]
    assert cluster["task"] == {"type": "workerpool0", "index": 0}
    assert json.loads(env["TF_CONFIG"])["task"] == {"type": "chief", "index": 0}


def test_job_log_says_cpu_and_no_docker(
    client: aiplatform_v1.JobServiceClient,
    cloud_context: CloudContext,
    local_cloud: LocalCloud,
    tmp_path: Path,
) -> None:
    pool = script_pool("env_dump.py", str(tmp_path / "e.json"))
    pool["machine_spec"].update(accelerator_type="NVIDIA_TESLA_T4", accelerator_count=1)
    job = wait(client, create(client, cloud_context.parent, [pool]).name)
    job_id = job.name.rsplit("/", 1)[1]
    log = (local_cloud.home / "vertex" / "training" / job_id / "job.log").read_text()
    assert "running on CPU" in log
    assert "no Docker here" in log


def test_failing_replica_fails_job_with_log_tail(
    client: aiplatform_v1.JobServiceClient, cloud_context: CloudContext
) -> None:
    job = wait(client, create(client, cloud_context.parent, [script_pool("fail.py")]).name)
    assert job.state == aiplatform_v1.JobState.JOB_STATE_FAILED
    assert "non-zero status of 3" in job.error.message
    assert "gs://nowhere/data.csv" in job.error.message
    assert "step 29" in job.error.message and "step 5\n" not in job.error.message


def _wait_for_file(path: Path, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path} never written")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split()[2] == "Z")


def test_cancel_kills_every_process(
    client: aiplatform_v1.JobServiceClient, cloud_context: CloudContext, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    job = create(client, cloud_context.parent, [script_pool("sleeper.py", str(pids))])
    parent_pid, child_pid = map(int, _wait_for_file(pids).split())
    client.cancel_custom_job(name=job.name)
    job = wait(client, job.name)
    assert job.state == aiplatform_v1.JobState.JOB_STATE_CANCELLED
    assert not _alive(parent_pid) and not _alive(child_pid)
    with pytest.raises(exceptions.BadRequest, match="already in state"):
        client.cancel_custom_job(name=job.name)


def test_timeout_fails_job(
    client: aiplatform_v1.JobServiceClient, cloud_context: CloudContext, tmp_path: Path
) -> None:
    pool = script_pool("sleeper.py", str(tmp_path / "pids"))
    job = create(client, cloud_context.parent, [pool], scheduling={"timeout": "1s"})
    job = wait(client, job.name)
    assert job.state == aiplatform_v1.JobState.JOB_STATE_FAILED
    assert "timed out" in job.error.message


def test_two_replicas_train_together_from_cluster_spec(
    client: aiplatform_v1.JobServiceClient, cloud_context: CloudContext, tmp_path: Path
) -> None:
    out = tmp_path / "weights.json"
    pools = [script_pool("exchange.py", str(out)), script_pool("exchange.py", str(out))]
    job = wait(client, create(client, cloud_context.parent, pools).name)
    assert job.state == aiplatform_v1.JobState.JOB_STATE_SUCCEEDED, job.error
    result = json.loads(out.read_text())
    assert result["replicas"] == 2
    assert result["w"] == pytest.approx(3, abs=0.05) and result["b"] == pytest.approx(-2, abs=0.05)


def test_unknown_field_is_rejected(
    client: aiplatform_v1.JobServiceClient, cloud_context: CloudContext
) -> None:
    session = client._transport._session  # the REST transport's own HTTP session
    url = f"{cloud_context.vertex_endpoint}/v1/{cloud_context.parent}/customJobs"
    body = {"displayName": "x", "jobSpec": {"workerPoolSpecs": [], "bogusField": 1}}
    response = session.post(url, json=body)
    assert response.status_code == 400
    assert "bogusField" in response.json()["error"]["message"]


def test_container_without_command_is_rejected(
    client: aiplatform_v1.JobServiceClient, cloud_context: CloudContext
) -> None:
    pool = script_pool("fail.py")
    pool["container_spec"]["command"] = []
    before = len(list(client.list_custom_jobs(parent=cloud_context.parent)))
    with pytest.raises(exceptions.BadRequest, match="cannot run without Docker"):
        create(client, cloud_context.parent, [pool])
    assert len(list(client.list_custom_jobs(parent=cloud_context.parent))) == before


def test_list_get_delete(
    client: aiplatform_v1.JobServiceClient, cloud_context: CloudContext, tmp_path: Path
) -> None:
    job = wait(
        client,
        create(
            client, cloud_context.parent, [script_pool("env_dump.py", str(tmp_path / "e"))]
        ).name,
    )
    names = [j.name for j in client.list_custom_jobs(parent=cloud_context.parent)]
    assert job.name in names
    client.delete_custom_job(name=job.name).result(timeout=10)
    with pytest.raises(exceptions.NotFound):
        client.get_custom_job(name=job.name)
