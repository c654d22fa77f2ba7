"""`vertexkit logs` against a job that really ran on the local cloud."""

from __future__ import annotations

import time
from pathlib import Path

from typer.testing import CliRunner

from vertexkit.cli import app
from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud

FAIL_SCRIPT = Path(__file__).parents[1] / "local/vertex/training/testdata/fail.py"


def test_logs_prints_job_and_replica_logs(
    local_cloud: LocalCloud, cloud_context: CloudContext
) -> None:
    client = cloud_context.job_client()
    pool = {
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": 1,
        "container_spec": {"image_uri": "img", "command": ["python", str(FAIL_SCRIPT)]},
    }
    job = client.create_custom_job(
        parent=cloud_context.parent,
        custom_job={"display_name": "logs", "job_spec": {"worker_pool_specs": [pool]}},
    )
    while client.get_custom_job(name=job.name).state.name != "JOB_STATE_FAILED":
        time.sleep(0.05)
    result = CliRunner().invoke(app, ["logs", job.name, "--home", str(local_cloud.home)])
    assert result.exit_code == 0, result.output
    assert "job.log" in result.output and "workerpool0-0.log" in result.output
    assert "step 29" in result.output and "gs://nowhere/data.csv" in result.output


def test_logs_of_unknown_job_fails(local_cloud: LocalCloud) -> None:
    result = CliRunner().invoke(app, ["logs", "12345", "--home", str(local_cloud.home)])
    assert result.exit_code == 2
    assert "JOB: no logs for job '12345'" in result.output
