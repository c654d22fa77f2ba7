"""Pipeline jobs on the local Vertex AI through the real SDK: `PipelineJob.submit()` + `wait()`.

The pipelines are tiny two-task pipelines defined here (not the built-in ones), compiled with the
real KFP compiler and run by the local cloud with kfp.local in a separate process.
"""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import time
import uuid
from pathlib import Path

import pytest
import yaml
from google.api_core import exceptions
from google.cloud import aiplatform
from google.cloud.aiplatform import pipeline_jobs
from kfp import compiler, dsl

from vertexkit.local import LocalCloud

# The SDK's submit() checks the pipeline root's bucket: if it exists, it asks Cloud Resource
# Manager (a hard-coded Google host) for the project number, which costs about 60 s offline; if
# it does not, it creates it and, given a service account, skips that lookup. So each job here
# gets a fresh bucket and a service account, as a first run on a laptop would.
SERVICE_ACCOUNT = "pipelines@local-project.iam.gserviceaccount.com"


def fresh_root() -> str:
    return f"gs://pipelines-{uuid.uuid4().hex[:12]}/root"


@dsl.component(install_kfp_package=False)
def add(a: int, b: int) -> int:
    return a + b


@dsl.component(install_kfp_package=False)
def describe(total: int, prefix: str) -> str:
    if total < 0:
        raise ValueError(f"negative total {total}: refusing")
    return f"{prefix}{total}"


@dsl.component(install_kfp_package=False)
def sleep_then_add(a: int, seconds: float) -> int:
    import time

    time.sleep(seconds)
    return a + 1


@dsl.pipeline(name="tiny-two-step")
def tiny_pipeline(a: int = 1, b: int = 2, prefix: str = "sum=") -> str:
    total = add(a=a, b=b)
    return describe(total=total.output, prefix=prefix).output


@dsl.pipeline(name="slow-two-step")
def slow_pipeline(seconds: float = 30.0) -> int:
    first = sleep_then_add(a=1, seconds=seconds)
    return sleep_then_add(a=first.output, seconds=seconds).output


def compile_pipeline(function: object, path: Path) -> str:
    compiler.Compiler().compile(function, str(path))
    return str(path)


@pytest.fixture(autouse=True)
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SDK polls every 5 s doubling to 5 min; the local cloud answers in milliseconds, so
    # poll often. This changes only the wait between real GET requests.
    monkeypatch.setattr(pipeline_jobs, "_JOB_WAIT_TIME", 0.2)
    monkeypatch.setattr(pipeline_jobs, "_WAIT_TIME_MULTIPLIER", 1)


@pytest.fixture
def tiny_template(tmp_path: Path) -> str:
    return compile_pipeline(tiny_pipeline, tmp_path / "tiny.yaml")


def new_job(local_cloud: LocalCloud, template: str, **kwargs: object) -> aiplatform.PipelineJob:
    local_cloud.context().init_aiplatform(service_account=SERVICE_ACCOUNT)
    kwargs.setdefault("pipeline_root", fresh_root())
    # The SDK names jobs by the second; two quick submissions (a cached rerun) would collide.
    kwargs.setdefault("job_id", f"tiny-{uuid.uuid4().hex[:12]}")
    return aiplatform.PipelineJob(display_name="tiny", template_path=template, **kwargs)


def test_submit_and_wait_succeeds_with_task_details(
    local_cloud: LocalCloud, tiny_template: str
) -> None:
    root = fresh_root()
    job = new_job(
        local_cloud,
        tiny_template,
        pipeline_root=root,
        parameter_values={"a": 20, "b": 22},
        labels={"team": "ml"},
        enable_caching=False,
    )
    job.submit()
    job.wait()

    assert job.state.name == "PIPELINE_STATE_SUCCEEDED"
    tasks = {task.task_name: task for task in job.task_details}
    assert {"tiny-two-step", "add", "describe"} <= set(tasks)
    for name in ("add", "describe"):
        assert tasks[name].state.name == "SUCCEEDED"
        assert tasks[name].end_time >= tasks[name].start_time
    assert job.gca_resource.labels["team"] == "ml"
    listed = aiplatform.PipelineJob.list(filter='display_name="tiny"')
    assert job.resource_name in [j.resource_name for j in listed]
    # the output of the real run is in the local Cloud Storage under the pipeline root
    root_dir = local_cloud.storage.gs_uri_to_path(root)
    outputs = [p.read_text() for p in root_dir.rglob("*") if p.is_file()]
    assert any("sum=42" in text for text in outputs), outputs


def test_caching_marks_second_run_skipped(local_cloud: LocalCloud, tiny_template: str) -> None:
    params = {"a": 5, "b": 6, "prefix": "cached-"}
    first = new_job(local_cloud, tiny_template, parameter_values=params, enable_caching=True)
    first.submit()
    first.wait()
    second = new_job(local_cloud, tiny_template, parameter_values=params, enable_caching=True)
    second.submit()
    second.wait()
    states = {t.task_name: t.state.name for t in second.task_details}
    assert states["add"] == "SKIPPED" and states["describe"] == "SKIPPED"


def test_failing_task_fails_the_job_with_its_error(
    local_cloud: LocalCloud, tiny_template: str
) -> None:
    job = new_job(local_cloud, tiny_template, parameter_values={"a": -5, "b": 1})
    job.submit()
    with pytest.raises(RuntimeError, match="describe"):
        job.wait()
    assert job.state.name == "PIPELINE_STATE_FAILED"
    failed = next(t for t in job.task_details if t.task_name == "describe")
    assert failed.state.name == "FAILED"
    assert "negative total -4: refusing" in failed.error.message
    assert next(t for t in job.task_details if t.task_name == "add").state.name == "SUCCEEDED"


def test_cancel_kills_the_run(local_cloud: LocalCloud, tmp_path: Path) -> None:
    template = compile_pipeline(slow_pipeline, tmp_path / "slow.yaml")
    job = new_job(local_cloud, template, enable_caching=False)
    job.submit()
    deadline = time.monotonic() + 30
    while not any(t.task_name == "sleep-then-add" for t in job.task_details):
        assert time.monotonic() < deadline, "the first task never started"
        time.sleep(0.2)
    started = time.monotonic()
    job.cancel()
    job.wait()  # the SDK returns without raising for CANCELLED, as against Vertex
    assert job.state.name == "PIPELINE_STATE_CANCELLED"
    assert time.monotonic() - started < 15  # killed, not waited out (a task sleeps 30 s)
    task = next(t for t in job.task_details if t.task_name == "sleep-then-add")
    assert task.state.name == "CANCELLED"
    job.delete()
    with pytest.raises(exceptions.NotFound):
        aiplatform.PipelineJob.get(job.resource_name)


def test_refusals_name_the_field(local_cloud: LocalCloud, tiny_template: str) -> None:
    # The SDK checks parameter names itself; the GAPIC client sends what it is given, so the
    # server's own refusals are tested through it.
    client = local_cloud.context().pipeline_client()
    parent = local_cloud.context().parent
    spec = yaml.safe_load(Path(tiny_template).read_text())
    runtime = {"gcs_output_directory": fresh_root()}
    refusals = [
        ({"display_name": "refused"}, "pipelineSpec is required"),
        ({"display_name": "refused", "pipeline_spec": spec}, "gcsOutputDirectory is required"),
        (
            {
                "display_name": "refused",
                "pipeline_spec": spec,
                "runtime_config": {**runtime, "parameter_values": {"nope": 1}},
            },
            "unknown parameter.*nope.*the pipeline takes: a, b, prefix",
        ),
        (
            {
                "display_name": "refused",
                "pipeline_spec": spec,
                "runtime_config": {"gcs_output_directory": "/tmp/not-gcs"},
            },
            "gcsOutputDirectory must be gs://",
        ),
    ]
    for job, message in refusals:
        with pytest.raises(exceptions.BadRequest, match=message):
            client.create_pipeline_job(parent=parent, pipeline_job=job)
    listed = client.list_pipeline_jobs(
        request={"parent": parent, "filter": 'display_name="refused"'}
    )
    assert list(listed) == []


def test_running_job_fails_when_the_cloud_restarts(tmp_path: Path) -> None:
    template = compile_pipeline(slow_pipeline, tmp_path / "slow.yaml")
    home = tmp_path / "home"
    with LocalCloud(home=home) as cloud:
        cloud.context().init_aiplatform(service_account=SERVICE_ACCOUNT)
        job = aiplatform.PipelineJob(
            display_name="slow", template_path=template, pipeline_root=fresh_root()
        )
        job.submit()
        name = job.resource_name
    with LocalCloud(home=home) as cloud:
        cloud.context().init_aiplatform()
        again = aiplatform.PipelineJob.get(name)
        assert again.state.name == "PIPELINE_STATE_FAILED"
        assert "stopped" in again.gca_resource.error.message


# -- What a task's process gets, whichever way the local cloud starts it (a child of its warm task
# worker, or a process of its own): what Vertex documents for a task's container.
@dsl.component(install_kfp_package=False)
def read_flavour() -> str:
    import os

    return os.environ.get("FLAVOUR", "unset")


@dsl.component(install_kfp_package=False)
def die_by_signal() -> str:
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)
    return "unreachable"


@dsl.pipeline(name="env-per-task")
def env_pipeline() -> str:
    flavoured = read_flavour().set_env_variable("FLAVOUR", "lemon")
    plain = read_flavour().after(flavoured)
    return plain.output


@dsl.pipeline(name="killed-task")
def killed_pipeline() -> str:
    return die_by_signal().output


def test_an_env_variable_set_on_a_task_reaches_that_task_only(
    local_cloud: LocalCloud, tmp_path: Path
) -> None:
    # `PipelineTask.set_env_variable` sets the variable in that task's container (kfp docs).
    template = compile_pipeline(env_pipeline, tmp_path / "env.yaml")
    job = new_job(local_cloud, template, enable_caching=False)
    job.submit()
    job.wait()
    outputs = {
        t.task_name: t.execution.metadata["output:Output"]
        for t in job.task_details
        if t.task_name.startswith("read-flavour")
    }
    assert outputs == {"read-flavour": "lemon", "read-flavour-2": "unset"}


def test_a_task_killed_by_a_signal_fails_the_task_and_the_job(
    local_cloud: LocalCloud, tmp_path: Path
) -> None:
    template = compile_pipeline(killed_pipeline, tmp_path / "killed.yaml")
    job = new_job(local_cloud, template, enable_caching=False)
    job.submit()
    with pytest.raises(RuntimeError, match="die-by-signal"):
        job.wait()
    assert job.state.name == "PIPELINE_STATE_FAILED"
    [task] = [t for t in job.task_details if t.task_name == "die-by-signal"]
    assert task.state.name == "FAILED"
