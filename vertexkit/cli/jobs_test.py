"""`vertexkit logs` against a job that really ran on the local cloud."""

from __future__ import annotations

import json
import time
from pathlib import Path

from typer.testing import CliRunner

from vertexkit.cli import app
from vertexkit.cli.jobs import JOB_STATES, PIPELINE_STATES, duration_text
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


def _failed_custom_job(cloud_context: CloudContext, display_name: str) -> str:
    client = cloud_context.job_client()
    pool = {
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": 1,
        "container_spec": {"image_uri": "img", "command": ["python", str(FAIL_SCRIPT)]},
    }
    job = client.create_custom_job(
        parent=cloud_context.parent,
        custom_job={"display_name": display_name, "job_spec": {"worker_pool_specs": [pool]}},
    )
    while client.get_custom_job(name=job.name).state.name != "JOB_STATE_FAILED":
        time.sleep(0.05)
    return job.name


def test_jobs_list_shows_kind_state_and_duration_and_filters_by_state(
    local_cloud: LocalCloud, cloud_context: CloudContext
) -> None:
    name = _failed_custom_job(cloud_context, "jobs-list-probe")
    job_id = name.rsplit("/", 1)[-1]
    home = ["--home", str(local_cloud.home)]
    listed = CliRunner().invoke(app, ["jobs", "list", "--state", "FAILED", "--json", *home])
    assert listed.exit_code == 0, listed.output
    [row] = [row for row in json.loads(listed.output) if row["id"] == job_id]
    assert row["kind"] == "custom job" and row["displayName"] == "jobs-list-probe"
    assert row["state"] == "JOB_STATE_FAILED" and row["durationSeconds"] >= 0
    succeeded = CliRunner().invoke(app, ["jobs", "list", "--state", "succeeded", "--json", *home])
    assert job_id not in {row["id"] for row in json.loads(succeeded.output)}
    table = CliRunner().invoke(app, ["jobs", "list", *home], env={"COLUMNS": "300"})
    [line] = [line for line in table.output.splitlines() if job_id in line]
    assert "custom job" in line and "jobs-list-probe" in line and "FAILED" in line
    shown = CliRunner().invoke(app, ["jobs", "show", job_id, *home], env={"COLUMNS": "300"})
    assert shown.exit_code == 0, shown.output
    assert f"name:          {name}" in shown.output and "state:         FAILED" in shown.output
    assert f"vertexkit logs {job_id}" in shown.output and "error:" in shown.output


def test_jobs_list_refuses_a_state_vertex_has_not() -> None:
    result = CliRunner().invoke(app, ["jobs", "list", "--state", "DONE"])
    assert result.exit_code == 2
    assert "--state: unknown state 'DONE'" in " ".join(result.output.split())


def test_jobs_show_of_an_unknown_job_names_it(local_cloud: LocalCloud) -> None:
    result = CliRunner().invoke(app, ["jobs", "show", "12345", "--home", str(local_cloud.home)])
    assert result.exit_code == 2
    assert "JOB: no custom job, tuning job, training pipeline or batch job '12345'" in " ".join(
        result.output.split()
    )


def test_the_states_are_vertex_ais_own() -> None:
    """`JobState` and `PipelineState` of the REST reference, as aiplatform_v1's enums name them
    (Google's own proto descriptors)."""
    from google.cloud import aiplatform_v1

    assert tuple(s.name for s in aiplatform_v1.JobState) == JOB_STATES
    assert tuple(s.name for s in aiplatform_v1.PipelineState) == PIPELINE_STATES


def test_durations_read_as_the_console_shows_them() -> None:
    assert [duration_text(s) for s in (None, 4.24, 185, 7620)] == [
        "-", "4.2 s", "3 min 5 s", "2 h 7 min",
    ]  # fmt: skip
