"""`vertexkit run` creates a PipelineJob on the local cloud and follows it to the end.

Through the real CLI, the real local cloud, the real training pipeline (compiled YAML, kfp.local
in a separate process) and the real trainer: progress lines per task, the summary read back from
the job's task details, a cached second run, and a failing task named in one error line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from google.auth.credentials import AnonymousCredentials
from typer.testing import CliRunner

from vertexkit import pipeline_jobs, runner
from vertexkit.cli import app
from vertexkit.local import LocalCloud
from vertexkit.local.projects import project_number

TRAINING_TASKS = [
    "bigquery-query-job",
    "bigquery-export-dataset",
    "custom-training-job",
    "upload-model",
    "evaluate-model",
    "compare-models",
    "deploy-model",
]


def _task_states(output: str) -> dict[str, list[str]]:
    """Task name -> the states its progress lines showed, in order."""
    states: dict[str, list[str]] = {}
    for match in re.finditer(r"^\d\d:\d\d:\d\d  (\S+)\s+([A-Z_]+)", output, re.MULTILINE):
        states.setdefault(match.group(1), []).append(match.group(2))
    return states


def _flat(output: str) -> str:
    return " ".join(output.split())


def _squashed(output: str) -> str:
    """The output without whitespace and table borders: wrapped table cells read whole."""
    return re.sub(r"[\s│┌┐└┘─┬┴┼├┤]", "", output)


def test_run_follows_the_job_prints_a_summary_and_a_second_run_is_cached(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = CliRunner().invoke(app, ["run", "training", "--home", str(home)])
    assert first.exit_code == 0, first.output
    states = _task_states(first.output)
    for task in TRAINING_TASKS:
        assert states.get(task, [])[-1:] == ["SUCCEEDED"], (task, first.output)
    assert states["job"][-1] == "SUCCEEDED"
    table = _squashed(first.output)
    # the model version from upload-model's artifact, the decision from compare-models' outputs,
    # the metrics from evaluate-model's, the test row from bigquery-export-dataset's `test`
    # Named as Vertex names it: the project number (local-project's, vertexkit.local.projects).
    number = project_number("local-project")
    assert re.search(rf"modelversionprojects/{number}/\S+/models/\d+@1metrics", table), table
    assert "metricsaccuracy=1," in table or "metricsaccuracy=0." in table, table
    assert "decisionpromoted:" in table, table
    prediction = re.search(r'prediction"([^"]+)"', table)
    assert prediction and "Penguin" in prediction.group(1), table

    second = CliRunner().invoke(app, ["run", "training", "--home", str(home)])
    assert second.exit_code == 0, second.output
    cached = _task_states(second.output)
    for task in TRAINING_TASKS:
        assert cached.get(task, [])[-1:] == ["SKIPPED"], (task, second.output)
    assert "model version" in second.output and "prediction" in second.output

    with LocalCloud(home=home) as cloud:  # both jobs are stored, ended, with their task outputs
        context = cloud.context()
        jobs = list(context.pipeline_client().list_pipeline_jobs(parent=context.parent))
        assert sorted(job.state.name for job in jobs) == ["PIPELINE_STATE_SUCCEEDED"] * 2
        job = pipeline_jobs.as_dict(context.pipeline_client().get_pipeline_job(name=jobs[0].name))
        outputs = pipeline_jobs.pipeline_outputs(job)
        assert outputs["test_data"]["uri"].startswith("gs://")
        assert outputs["model"]["schemaTitle"] == "google.VertexModel"
        assert outputs["promoted"] is True


def test_a_failing_task_ends_with_one_line_naming_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = CliRunner().invoke(
        app, ["run", "training", "--home", str(home), "--param", "model_type=bogus"]
    )
    assert result.exit_code == 2
    states = _task_states(result.output)
    assert states["custom-training-job"][-1] == "FAILED"
    assert "upload-model" not in states
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    flat = _flat(result.output)
    assert "task 'custom-training-job': tabular_trainer.task: error: --model-type 'bogus'" in flat
    with LocalCloud(home=home) as cloud:  # the job ended FAILED, not stuck RUNNING
        context = cloud.context()
        jobs = list(context.pipeline_client().list_pipeline_jobs(parent=context.parent))
        assert [job.state.name for job in jobs] == ["PIPELINE_STATE_FAILED"]


def test_no_cache_turns_off_caching_in_every_task_of_the_request(tmp_path: Path) -> None:
    pipeline_yaml, params = runner.prepare("training", [])
    requests = {}
    for caching in (True, False):
        sdk_job = runner.build_vertex_job(
            "training",
            params,
            pipeline_yaml,
            "local-project",
            "us-central1",
            "gs://bucket/root",
            enable_caching=caching,
            work_dir=tmp_path,
            credentials=AnonymousCredentials(),
        )
        request = pipeline_jobs.request_from_sdk_job(sdk_job)
        requests[caching] = pipeline_jobs.as_dict(request)
    for caching, request in requests.items():
        tasks = request["pipelineSpec"]["root"]["dag"]["tasks"]
        assert {t.get("cachingOptions", {}).get("enableCache", False) for t in tasks.values()} == {
            caching
        }, caching
    assert requests[False]["runtimeConfig"]["gcsOutputDirectory"] == "gs://bucket/root"


def test_progress_prints_one_line_per_change_job_first_while_running() -> None:
    lines: list[str] = []
    progress = pipeline_jobs.TaskProgress(lines.append)
    root = {"taskId": "1", "taskName": "pipe", "state": "RUNNING"}
    running = {
        "taskId": "2",
        "parentTaskId": "1",
        "taskName": "train",
        "state": "RUNNING",
        "startTime": "2026-01-01T10:00:00.000000Z",
    }
    job = {"state": "PIPELINE_STATE_RUNNING", "jobDetail": {"taskDetails": [root, running]}}
    progress.observe(job)
    progress.observe(job)  # nothing changed: nothing printed
    failed = {
        **running,
        "state": "FAILED",
        "endTime": "2026-01-01T10:00:02.500000Z",
        "error": {"message": "ValueError: bad input\nTraceback ..."},
    }
    progress.observe(
        {"state": "PIPELINE_STATE_FAILED", "jobDetail": {"taskDetails": [root, failed]}}
    )
    assert [line.split()[1:] for line in lines] == [
        ["job", "RUNNING"],
        ["train", "RUNNING"],
        ["train", "FAILED", "2.5", "s", "ValueError:", "bad", "input"],
        ["job", "FAILED"],
    ]


def test_a_poll_s_fields_hold_everything_the_progress_reads() -> None:
    """`follow` asks each poll for POLL_FIELDS only: what it prints and how it backs off must be
    what the whole job would give (a task that launched a custom job, a failed one, the root)."""
    from vertexkit.job_progress import JobProgress
    from vertexkit.local.partial_response import parse, select

    resources = {"resources": [{"resourceType": "CustomJob", "resourceUri":
                 "https://us-central1-aiplatform.googleapis.com/v1/projects/1/locations/"
                 "us-central1/customJobs/42"}]}  # fmt: skip
    root = {"taskId": "1", "taskName": "pipe", "state": "RUNNING", "inputs": {"p": {}}}
    train = {
        "taskId": "2", "parentTaskId": "1", "taskName": "train", "state": "RUNNING",
        "startTime": "2026-01-01T10:00:00Z", "createTime": "2026-01-01T09:59:59Z",
        "execution": {"name": "e", "schemaTitle": "system.ContainerExecution",
                      "metadata": {"output:gcp_resources": json.dumps(resources)}},
        "outputs": {"model": {"artifacts": [{"uri": "gs://b/m", "metadata": {"x": 1}}]}},
    }  # fmt: skip
    failed = {"taskId": "3", "parentTaskId": "1", "taskName": "eval", "state": "FAILED",
              "startTime": "2026-01-01T10:00:00Z", "endTime": "2026-01-01T10:00:04Z",
              "error": {"code": 9, "message": "ValueError: no rows\nTraceback"}}  # fmt: skip
    jobs = [
        {"name": "projects/1/locations/us-central1/pipelineJobs/p", "displayName": "p",
         "state": state, "updateTime": f"2026-01-01T10:00:0{i}Z",
         "pipelineSpec": {"root": {"dag": {"tasks": {"train": {}}}}},
         "runtimeConfig": {"gcsOutputDirectory": "gs://b"},
         "jobDetail": {"pipelineContext": {"name": "c"}, "taskDetails": tasks}}
        for i, (state, tasks) in enumerate([
            ("PIPELINE_STATE_RUNNING", [root, train]),
            ("PIPELINE_STATE_FAILED", [root, {**train, "state": "SUCCEEDED",
                                              "endTime": "2026-01-01T10:00:03Z"}, failed]),
        ])
    ]  # fmt: skip
    jobs[1]["error"] = {"code": 9, "message": "task eval failed"}

    def followed(selector: str | None) -> tuple[list[str], list[tuple]]:
        lines: list[str] = []
        custom = {"name": "customJobs/42", "state": "JOB_STATE_RUNNING",
                  "updateTime": "2026-01-01T10:00:01Z"}  # fmt: skip
        progress = pipeline_jobs.TaskProgress(
            lines.append, JobProgress(lines.append, lambda kind, name: custom)
        )
        states = []
        for job in jobs:
            polled = select(job, parse(selector)) if selector else job
            progress.observe(polled)
            states.append((pipeline_jobs.task_states(polled), progress.changes()))
        return lines, states

    whole, polled = followed(None), followed(pipeline_jobs.POLL_FIELDS)
    assert polled == whole
    assert any("custom job 42 RUNNING" in line for line in whole[0])  # the launched job's line
    assert any("ValueError: no rows" in line for line in whole[0])
    assert "pipelineSpec" not in select(jobs[0], parse(pipeline_jobs.POLL_FIELDS))


def test_follow_polls_with_the_fields_and_gets_the_whole_job_once_it_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from vertexkit.context import CloudContext
    from vertexkit.vertex_rest import VertexRest

    asked: list[tuple[str, dict[str, str] | None]] = []
    answers = iter([
        {"state": "PIPELINE_STATE_RUNNING"},
        {"state": "PIPELINE_STATE_SUCCEEDED"},
        {"state": "PIPELINE_STATE_SUCCEEDED", "pipelineSpec": {"root": {}}},
    ])  # fmt: skip

    def get(self: VertexRest, path: str, query: dict[str, str] | None = None) -> dict:
        asked.append((path, query))
        return next(answers)

    monkeypatch.setattr(VertexRest, "get", get)
    monkeypatch.setattr("vertexkit.runtime.polling.time.sleep", lambda _: None)
    ctx = CloudContext(project="p", region="us-central1", vertex_endpoint="http://127.0.0.1:1")
    job = pipeline_jobs.follow(ctx, "projects/p/locations/us-central1/pipelineJobs/j", print)
    assert job == {"state": "PIPELINE_STATE_SUCCEEDED", "pipelineSpec": {"root": {}}}
    fields = {"fields": pipeline_jobs.POLL_FIELDS}
    assert [query for _, query in asked] == [fields, fields, None]
