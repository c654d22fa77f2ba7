"""The IR's semantics, each case run as a PipelineJob through the aiplatform SDK on the local
cloud (the `local_cloud` fixture) and checked task by task. The expected values come from the
semantics (KFP backend driver, `backend/src/v2/driver/`, and the KFP SDK's test pipelines under
`test_data/sdk_compiled_pipelines/valid/`), not from a run.
"""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.
import ast
import time
import uuid
from pathlib import Path
from typing import Optional

import pytest
from google.cloud import aiplatform
from google.cloud.aiplatform import pipeline_jobs
from kfp import compiler, dsl
from kfp.dsl import Dataset, Input, Output

from vertexkit.local import LocalCloud

SERVICE_ACCOUNT = "pipelines@local-project.iam.gserviceaccount.com"
PACKAGE = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline_jobs, "_JOB_WAIT_TIME", 0.2)
    monkeypatch.setattr(pipeline_jobs, "_WAIT_TIME_MULTIPLIER", 1)


def run(cloud: LocalCloud, pipeline, tmp_path: Path, wait: bool = True) -> aiplatform.PipelineJob:
    path = tmp_path / f"{uuid.uuid4().hex[:8]}.yaml"
    compiler.Compiler().compile(pipeline, str(path))
    cloud.context().init_aiplatform(service_account=SERVICE_ACCOUNT)
    job = aiplatform.PipelineJob(
        display_name="ir",
        template_path=str(path),
        pipeline_root=f"gs://pipelines-{uuid.uuid4().hex[:12]}/root",
        job_id=f"ir-{uuid.uuid4().hex[:12]}",
        enable_caching=False,
    )
    job.submit()
    if wait:
        job.wait()
    return job


def ended(cloud: LocalCloud, pipeline, tmp_path: Path) -> aiplatform.PipelineJob:
    """The job once ended, succeeded or not (wait() raises on a failed run)."""
    job = run(cloud, pipeline, tmp_path, wait=False)
    try:
        job.wait()
    except RuntimeError:
        pass
    return aiplatform.PipelineJob.get(job.resource_name)


def outputs(job: aiplatform.PipelineJob) -> dict[str, object]:
    return {
        t.task_name: t.execution.metadata.get("output:Output")
        for t in job.task_details
        if t.execution and "output:Output" in t.execution.metadata
    }


def states(job: aiplatform.PipelineJob) -> dict[str, str]:
    return {t.task_name: t.state.name for t in job.task_details}


@dsl.component(install_kfp_package=False)
def split(text: str) -> list:
    return text.split(",")


@dsl.component(install_kfp_package=False)
def join(a: str, b: str) -> str:
    return f"{a}{b}"


@dsl.component(install_kfp_package=False)
def count(items: list[str]) -> int:
    return len(items)


@dsl.component(install_kfp_package=False)
def make(content: str, out: Output[Dataset]):
    with open(out.path, "w") as handle:
        handle.write(content)


@dsl.component(install_kfp_package=False)
def read_all(data: list[Dataset]) -> str:
    return ",".join(sorted(open(d.path).read() for d in data))


@dsl.component(install_kfp_package=False)
def read_one(data: Input[Dataset]) -> str:
    return open(data.path).read()


@dsl.component(install_kfp_package=False)
def echo(text: str) -> str:
    return text


@dsl.component(install_kfp_package=False)
def fail(text: str) -> str:
    raise ValueError(f"failing on purpose: {text}")


# -- loops -----------------------------------------------------------------------------------
@dsl.pipeline(name="nested-loops")
def nested_loops() -> None:
    outer = split(text="a,b")
    inner = split(text="x,y,z")
    with dsl.ParallelFor(outer.output) as a, dsl.ParallelFor(inner.output, parallelism=2) as b:
        joined = join(a=a, b=b)
    count(items=dsl.Collected(joined.output))


def test_a_loop_inside_a_loop_and_collected_across_both(local_cloud: LocalCloud, tmp_path):
    # Collected of a task two loops deep is one flat list of every iteration's output
    # (collected_artifacts.py of the KFP test pipelines: List[Model] across nested loops).
    job = run(local_cloud, nested_loops, tmp_path)
    got = outputs(job)
    assert sorted(v for k, v in got.items() if k.startswith("join")) == sorted(
        a + b for a in "ab" for b in "xyz"
    )
    assert got["count"] == 6
    loop_ids = {t.task_id for t in job.task_details if t.task_name.startswith("for-loop")}
    joins = [t for t in job.task_details if t.task_name.startswith("join")]
    assert joins and all(t.parent_task_id in loop_ids for t in joins)  # parent: its loop


@dsl.pipeline(name="sibling-loop")
def sibling_loop() -> None:
    items = split(text="p,q,r")
    with dsl.ParallelFor(items.output) as item:
        produced = echo(text=item)
    with dsl.ParallelFor(items.output) as item:
        count(items=dsl.Collected(produced.output))


def test_collected_of_a_sibling_loop_is_the_whole_list(local_cloud: LocalCloud, tmp_path):
    job = run(local_cloud, sibling_loop, tmp_path)
    assert [v for k, v in outputs(job).items() if k.startswith("count")] == [3, 3, 3]


@dsl.pipeline(name="collected-artifacts")
def collected_artifacts() -> None:
    items = split(text="1,2,3")
    with dsl.ParallelFor(items.output) as item:
        made = make(content=item)
    read_all(data=dsl.Collected(made.outputs["out"]))


def test_a_collected_list_of_artifacts(local_cloud: LocalCloud, tmp_path):
    assert outputs(run(local_cloud, collected_artifacts, tmp_path))["read-all"] == "1,2,3"


# -- conditions and OneOf --------------------------------------------------------------------
@dsl.pipeline(name="one-of")
def one_of(pick: str = "b") -> str:
    with dsl.If(pick == "a"):
        first = make(content="from-a")
    with dsl.Elif(pick == "b"):
        second = make(content="from-b")
    with dsl.Else():
        third = make(content="from-else")
    chosen = dsl.OneOf(first.outputs["out"], second.outputs["out"], third.outputs["out"])
    return read_one(data=chosen).output


def test_one_of_artifacts_takes_the_branch_that_ran(local_cloud: LocalCloud, tmp_path):
    job = run(local_cloud, one_of, tmp_path)
    assert outputs(job)["read-one"] == "from-b"
    # a condition that is false ends NOT_TRIGGERED, never PENDING (PipelineTaskDetail.State)
    got = states(job)
    assert got["condition-2"] == "NOT_TRIGGERED" and got["condition-4"] == "NOT_TRIGGERED"
    assert got["condition-3"] == "SUCCEEDED"
    assert not {"PENDING", "RUNNING"} & set(got.values())


# -- nested pipelines ------------------------------------------------------------------------
@dsl.component(install_kfp_package=False)
def maybe(text: Optional[str] = None) -> str:
    return "unset" if text is None else text


@dsl.pipeline
def inner(text: Optional[str] = None, prefix: str = "p-") -> Dataset:
    said = maybe(text=text)
    return make(content=said.output).outputs["out"]


@dsl.pipeline(name="nested-pipeline")
def nested_pipeline() -> str:
    returned = inner()
    return read_one(data=returned.output).output


def test_a_nested_pipeline_with_an_unset_optional_input_returns_an_artifact(
    local_cloud: LocalCloud, tmp_path
):
    assert outputs(run(local_cloud, nested_pipeline, tmp_path))["read-one"] == "unset"


# -- failures, exit handlers, final status ---------------------------------------------------
@dsl.component(install_kfp_package=False)
def cleanup(text: str = "default") -> str:
    return text


@dsl.pipeline(name="ignore-upstream")
def ignore_upstream() -> None:
    failed = fail(text="x")
    cleanup(text=failed.output).ignore_upstream_failure()


def test_ignore_upstream_failure_runs_with_the_default(local_cloud: LocalCloud, tmp_path):
    job = ended(local_cloud, ignore_upstream, tmp_path)
    assert job.state.name == "PIPELINE_STATE_FAILED"
    assert states(job)["cleanup"] == "SUCCEEDED" and outputs(job)["cleanup"] == "default"
    # the job's error names the failed task and its cause, with no colour codes
    message = job.gca_resource.error.message
    assert "[fail]" in message and "ValueError: failing on purpose: x" in message
    assert "\x1b[" not in message


@dsl.component(install_kfp_package=False)
def report(status: dsl.PipelineTaskFinalStatus) -> str:
    return f"{status.state}:{status.pipeline_task_name}"


@dsl.pipeline(name="exit-handler")
def exit_handler() -> None:
    with dsl.ExitHandler(report()):
        fail(text="y")


def test_an_exit_handler_gets_the_final_status(local_cloud: LocalCloud, tmp_path):
    job = ended(local_cloud, exit_handler, tmp_path)
    assert job.state.name == "PIPELINE_STATE_FAILED"
    assert outputs(job)["report"] == "FAILED:exit-handler-1"


# -- resources, custom paths, containers -----------------------------------------------------
@dsl.component(install_kfp_package=False)
def one() -> int:
    return 1


@dsl.pipeline(name="accelerator-from-output")
def accelerator_from_output() -> None:
    echo(text="gpu").set_accelerator_type("NVIDIA_TESLA_T4").set_accelerator_limit(one().output)


def test_a_task_output_in_a_resource_field(local_cloud: LocalCloud, tmp_path):
    assert outputs(run(local_cloud, accelerator_from_output, tmp_path))["echo"] == "gpu"


@dsl.component(install_kfp_package=False)
def custom_path(out: Output[Dataset]):
    import os

    out.set_path(f"/tmp/vertexkit-custom-out-{os.getpid()}")  # as the KFP test's /tmp/out_dataset
    with open(out.path, "w") as handle:
        handle.write("Hello, World!")


@dsl.pipeline(name="custom-path")
def custom_path_pipeline() -> str:
    return read_one(data=custom_path().outputs["out"]).output


def test_a_custom_artifact_path_reaches_the_consumer(local_cloud: LocalCloud, tmp_path):
    # pipeline_with_artifact_custom_path.py: the consumer reads what was written at the path
    assert outputs(run(local_cloud, custom_path_pipeline, tmp_path))["read-one"] == "Hello, World!"


@dsl.container_component
def shout(text: str, said: dsl.OutputPath(str)):
    return dsl.ContainerSpec(
        image="alpine:3.20", command=["sh", "-c", 'printf "%s!" "$0" > "$1"'], args=[text, said]
    )


@dsl.pipeline(name="container-and-python")
def container_and_python() -> str:
    return echo(text=shout(text="hey").outputs["said"]).output


def test_a_container_component_runs_its_command_here(local_cloud: LocalCloud, tmp_path):
    assert outputs(run(local_cloud, container_and_python, tmp_path))["echo"] == "hey!"


# -- caching and f-strings ----------------------------------------------------------------------
@dsl.component(install_kfp_package=False)
def noted(text: str, notes: str, out: Output[Dataset]):
    """Writes TEXT to OUT and one file under NOTES each time it really runs."""
    import pathlib
    import uuid

    pathlib.Path(notes, uuid.uuid4().hex).write_text(text)
    with open(out.path, "w") as handle:
        handle.write(text)


@dsl.component(install_kfp_package=False)
def noted_read(data: Input[Dataset], notes: str, args: list) -> str:
    import pathlib
    import uuid

    pathlib.Path(notes, uuid.uuid4().hex).write_text("read")
    return open(data.path).read() + " " + " ".join(args)


@dsl.pipeline(name="cached-chain")
def cached_chain(notes: str, root: str = "gs://bucket/base") -> None:
    made = noted(text=f"{root}/data", notes=notes)
    noted_read(data=made.outputs["out"], notes=notes, args=["--root", f"--at={root}/x"])


def test_an_unchanged_rerun_executes_no_task_and_shows_them_skipped(
    local_cloud: LocalCloud, tmp_path
):
    """Vertex serves an unchanged task from the cache and shows it SKIPPED (PipelineTaskDetail
    .State); the f-strings (`f"{root}/data"`, also inside a list) reach the task resolved."""
    notes = tmp_path / "notes"
    notes.mkdir()
    path = tmp_path / "cached.yaml"
    compiler.Compiler().compile(cached_chain, str(path))
    local_cloud.context().init_aiplatform(service_account=SERVICE_ACCOUNT)
    root = f"gs://pipelines-{uuid.uuid4().hex[:12]}/root"
    jobs = []
    for _ in range(2):
        job = aiplatform.PipelineJob(
            display_name="cached",
            template_path=str(path),
            pipeline_root=root,
            parameter_values={"notes": str(notes)},
            job_id=f"cached-{uuid.uuid4().hex[:12]}",  # the SDK's default: the time to the second
            enable_caching=True,
        )
        job.run()
        jobs.append(aiplatform.PipelineJob.get(job.resource_name))
    first, second = jobs
    assert states(first) == {"cached-chain": "SUCCEEDED", "noted": "SUCCEEDED",
                             "noted-read": "SUCCEEDED"}  # fmt: skip
    assert len(list(notes.iterdir())) == 2  # the first run's two tasks, the rerun's none
    assert states(second) == {"cached-chain": "SUCCEEDED", "noted": "SKIPPED",
                              "noted-read": "SKIPPED"}  # fmt: skip
    expected = "gs://bucket/base/data --root --at=gs://bucket/base/x"
    assert outputs(first)["noted-read"] == outputs(second)["noted-read"] == expected


def test_a_changed_input_misses_the_cache(local_cloud: LocalCloud, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    path = tmp_path / "cached.yaml"
    compiler.Compiler().compile(cached_chain, str(path))
    local_cloud.context().init_aiplatform(service_account=SERVICE_ACCOUNT)
    for root in ("gs://bucket/one", "gs://bucket/two"):
        aiplatform.PipelineJob(
            display_name="cached",
            template_path=str(path),
            pipeline_root=f"gs://pipelines-{uuid.uuid4().hex[:12]}/root",
            parameter_values={"notes": str(notes), "root": root},
            job_id=f"cached-{uuid.uuid4().hex[:12]}",
            enable_caching=True,
        ).run()
    assert len(list(notes.iterdir())) == 4


# -- the run's contexts and back-to-back runs ------------------------------------------------
def test_many_short_runs_each_start(local_cloud: LocalCloud, tmp_path):
    jobs = [run(local_cloud, sibling_loop, tmp_path, wait=False) for _ in range(4)]
    for job in jobs:
        job.wait()
        assert job.state.name == "PIPELINE_STATE_SUCCEEDED"
    # each run's context is a child of the pipeline's, made when the job was created
    parents = {tuple(j.gca_resource.job_detail.pipeline_run_context.parent_contexts) for j in jobs}
    assert len(parents) == 1 and all(parents)


# -- no private kfp ------------------------------------------------------------------------------
def test_vertexkit_imports_no_private_kfp_function_nor_kfp_local():
    offending = []
    for path in (PACKAGE / "vertexkit").rglob("*.py"):
        if path.name.endswith("_test.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            modules: list[str] = []
            names: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module]
                names = [alias.name for alias in node.names]
            for module in modules:
                if module.startswith("kfp") and (
                    module.startswith("kfp.local")
                    or any(p.startswith("_") for p in module.split("."))
                    or any(n.startswith("_") for n in names)
                ):
                    offending.append(f"{path.relative_to(PACKAGE)}: {module}")
    assert offending == []


@dsl.component(install_kfp_package=False)
def fail_now() -> None:
    raise RuntimeError("failed on purpose")


@dsl.component(install_kfp_package=False)
def slow_step() -> str:
    import time

    time.sleep(3)
    return "slow"


@dsl.pipeline(name="fail-fast-or-slow")
def fail_fast_pipeline() -> None:
    fail_now()
    first = slow_step()
    echo(text=first.output).set_display_name("after-slow")


@pytest.mark.parametrize(
    ("policy", "after_slow_ran"),
    [("PIPELINE_FAILURE_POLICY_FAIL_SLOW", True), ("PIPELINE_FAILURE_POLICY_FAIL_FAST", False)],
)
def test_failure_policy_decides_whether_tasks_start_after_a_failure(
    local_cloud: LocalCloud, tmp_path: Path, policy: str, after_slow_ran: bool
) -> None:
    """PipelineJob.RuntimeConfig.failurePolicy (REST reference): FAIL_SLOW "continues to
    schedule tasks after a task has failed"; FAIL_FAST "stops scheduling any new tasks when a
    task has failed. Any scheduled tasks will continue to completion." The slow step was
    running when the other failed, so it ends either way; the task after it starts only under
    FAIL_SLOW."""
    path = tmp_path / "fail-fast.yaml"
    compiler.Compiler().compile(fail_fast_pipeline, str(path))
    local_cloud.context().init_aiplatform(service_account=SERVICE_ACCOUNT)
    job = aiplatform.PipelineJob(
        display_name="ir", template_path=str(path), enable_caching=False,
        pipeline_root=f"gs://pipelines-{uuid.uuid4().hex[:12]}/root",
        job_id=f"ir-{uuid.uuid4().hex[:12]}", failure_policy=policy.split("_")[-1].lower(),
    )  # fmt: skip
    job.submit()
    with pytest.raises(RuntimeError):
        job.wait()
    ended_states = states(aiplatform.PipelineJob.get(job.resource_name))
    assert ended_states["fail-now"] == "FAILED"
    assert ended_states["slow-step"] == "SUCCEEDED"
    assert (ended_states.get("after-slow") == "SUCCEEDED") is after_slow_ran


@dsl.component(install_kfp_package=False)
def slow_echo(text: str) -> str:
    import time

    time.sleep(3)
    return text


@dsl.pipeline(name="slow-one")
def slow_one() -> None:
    slow_echo(text="x")


def test_a_job_its_follower_loses_ends_failed_not_pending(local_cloud: LocalCloud, tmp_path):
    """The job's folder removed under a running job (its events unreadable): the job ends
    FAILED naming the cause, not RUNNING for ever with its driver gone."""
    import shutil

    job = run(local_cloud, slow_one, tmp_path, wait=False)
    folder = local_cloud.home / "vertex" / "pipelineJobs" / job.job_id
    deadline = time.monotonic() + 60
    while aiplatform.PipelineJob.get(job.resource_name).state.name != "PIPELINE_STATE_RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    shutil.rmtree(folder)
    deadline = time.monotonic() + 60  # without the guard it stays RUNNING: fail, not hang
    while (ended := aiplatform.PipelineJob.get(job.resource_name)).state.name in (
        "PIPELINE_STATE_PENDING",
        "PIPELINE_STATE_RUNNING",
    ):
        assert time.monotonic() < deadline, "the job never ended"
        time.sleep(0.1)
    assert ended.state.name == "PIPELINE_STATE_FAILED"
    assert "stopped following the job: FileNotFoundError" in ended.gca_resource.error.message
