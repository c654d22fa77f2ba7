"""Following a PipelineJob to its end, on Vertex AI or on the local cloud, the same way.

`follow` polls the job with backoff (`vertexkit.runtime.polling`) over Vertex AI's REST API
(`vertexkit.vertex_rest`, which imports no `aiplatform_v1` type) and reports each task's state
change as it is seen: one line with the time, the task, its state and, once it ended, its
duration (a failed task: its error).

`pipeline_outputs` reads a finished job's outputs back from its task details, the way Vertex
reports them: artifacts in `PipelineTaskDetail.outputs` (`uri`, `schemaTitle`, `metadata`) and
output parameters as `output:NAME` in the task's execution metadata. The pipeline spec's root
DAG says which task produced which pipeline output, so this works for every pipeline.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from vertexkit.job_progress import JobProgress, fetcher
from vertexkit.runtime.polling import poll_until

if TYPE_CHECKING:
    from google.cloud import aiplatform_v1

    from vertexkit.context import CloudContext

JOB_TERMINAL = {"PIPELINE_STATE_SUCCEEDED", "PIPELINE_STATE_FAILED", "PIPELINE_STATE_CANCELLED"}
TASK_ENDED = {"SUCCEEDED", "SKIPPED", "FAILED", "CANCELLED"}
# What a poll of `follow` reads (Google's `fields` partial response, which Vertex AI and the
# local cloud both answer): the job's state and time (`TaskProgress._observe_job`,
# `task_states`, JOB_TERMINAL), and of each task what `_root_task_ids`, `task_line`,
# `task_states` and `JobProgress` (its launched jobs, in `execution.metadata`'s
# `output:gcp_resources`) read. Not the pipelineSpec nor the tasks' inputs and outputs: most of
# a job's ~100 KB. The whole job is asked for once it has ended, for its outputs and summary.
POLL_FIELDS = (
    "state,updateTime,error,jobDetail/taskDetails(taskId,parentTaskId,taskName,state,"
    "startTime,endTime,error,execution/metadata)"
)


class PipelineJobFailed(RuntimeError):
    """The job ended FAILED or CANCELLED; the message names the failed tasks and their errors."""


def as_dict(job: aiplatform_v1.PipelineJob) -> dict[str, Any]:
    """The job as Vertex's JSON (camelCase, enums by name, Structs as plain dicts)."""
    from google.protobuf import json_format

    return json_format.MessageToDict(type(job).pb(job))


def create_job(ctx: CloudContext, body: dict[str, Any], job_id: str) -> str:
    """Creates the job from its JSON (`pipelineJobs.create`, as the GAPIC client sends it; not
    `PipelineJob.submit()`, whose bucket check asks Resource Manager, a hard-coded Google host,
    for the project number); returns its name. A refusal raises `ServiceRefused`."""
    from vertexkit.vertex_rest import VertexRest

    created = VertexRest.for_context(ctx).post(
        f"{ctx.parent}/pipelineJobs", body, {"pipelineJobId": job_id}
    )
    return created["name"]


def cancel_job(ctx: CloudContext, job_name: str) -> None:
    """`pipelineJobs.cancel`: the job ends CANCELLED, its running tasks stopped."""
    from vertexkit.vertex_rest import VertexRest

    VertexRest.for_context(ctx).post(f"{job_name}:cancel", {})


def request_from_sdk_job(sdk_job: Any) -> aiplatform_v1.PipelineJob:
    """The request `aiplatform.PipelineJob.submit()` would send, as an `aiplatform_v1` message."""
    from google.cloud import aiplatform_v1

    resource = sdk_job._gca_resource  # built offline by the SDK's constructor
    if isinstance(resource, aiplatform_v1.PipelineJob):
        return resource
    return aiplatform_v1.PipelineJob.deserialize(type(resource).serialize(resource))


@dataclass
class TaskProgress:
    """Remembers each task's last state and prints one line per change; with `jobs`, also the
    jobs a running task launched (`job_progress`: a tuning job's trials, a custom job's state),
    between the task's start and end lines."""

    emit: Callable[[str], None]
    jobs: JobProgress | None = None
    seen: dict[str, str] = field(default_factory=dict)
    job_state: str = ""

    def observe(self, job: dict[str, Any]) -> None:
        """Job state first while it runs, last once it ended: the lines read in time order."""
        ended = job.get("state") in JOB_TERMINAL
        if not ended:
            self._observe_job(job)
        self._observe_tasks(job)
        if ended:
            self._observe_job(job)

    def _observe_tasks(self, job: dict[str, Any]) -> None:
        root_ids = _root_task_ids(job)
        for task in job.get("jobDetail", {}).get("taskDetails", []):
            if task.get("taskId") in root_ids:
                continue  # the pipeline itself: reported by the job's state below
            state = task.get("state", "STATE_UNSPECIFIED")
            key = task.get("taskId") or task.get("taskName", "")
            changed = self.seen.get(key) != state
            if changed and state in TASK_ENDED:
                self._observe_jobs(task, ended=True)  # its last trials before its end line
            if changed:
                self.seen[key] = state
                self.emit(task_line(task))
            if state == "RUNNING":
                self._observe_jobs(task, ended=False)

    def _observe_jobs(self, task: dict[str, Any], ended: bool) -> None:
        # a cached task's jobs ran in an earlier run: nothing of theirs is news
        if self.jobs is not None and task.get("state") != "SKIPPED":
            self.jobs.observe(task, ended)

    def changes(self) -> int:
        """How many lines the launched jobs printed (progress, for the polling's backoff)."""
        return self.jobs.lines if self.jobs is not None else 0

    def _observe_job(self, job: dict[str, Any]) -> None:
        state = job.get("state", "")
        if state != self.job_state:
            self.job_state = state
            self.emit(f"{clock(job.get('updateTime'))}  {'job':<28} {_short(state)}")


def task_line(task: dict[str, Any]) -> str:
    state = task.get("state", "")
    when = task.get("endTime") if state in TASK_ENDED else task.get("startTime")
    line = f"{clock(when)}  {task.get('taskName', '?'):<28} {state:<10}"
    seconds = duration_seconds(task)
    if state == "SKIPPED":
        line += "  (cached)"
    elif seconds is not None and state in TASK_ENDED:
        line += f" {seconds:7.1f} s"
    if state == "FAILED" and task.get("error", {}).get("message"):
        line += f"  {first_line(task['error']['message'])}"
    return line.rstrip()


def follow(
    ctx: CloudContext,
    job_name: str,
    emit: Callable[[str], None],
    timeout: float | None = None,
) -> dict[str, Any]:
    """Polls the job until it ends, printing task changes; returns the final job as JSON (the
    whole of it: the polls ask only for POLL_FIELDS)."""
    from vertexkit.runtime.polling import TRANSIENT_ERRORS, cap_for
    from vertexkit.vertex_rest import TRANSIENT, VertexRest

    vertex = VertexRest.for_context(ctx)
    progress = TaskProgress(emit, JobProgress(emit, fetcher(vertex)))
    transient = TRANSIENT_ERRORS + TRANSIENT
    poll_until(
        lambda: vertex.get(job_name, {"fields": POLL_FIELDS}),
        lambda job: job.get("state") in JOB_TERMINAL,
        cap=cap_for(ctx),
        timeout=timeout,
        describe=f"pipeline job {job_name}",
        on_poll=progress.observe,
        progress=lambda job: (task_states(job), progress.changes()),
        transient=transient,
    )
    # an ended job changes no more: one GET of all of it, retried as a poll is
    return poll_until(
        lambda: vertex.get(job_name), lambda _: True, describe=f"pipeline job {job_name}",
        transient=transient,
    )  # fmt: skip


def task_states(job: dict[str, Any]) -> tuple[Any, ...]:
    """A pipeline job's progress: its state and each task's."""
    tasks = job.get("jobDetail", {}).get("taskDetails", [])
    return (job.get("state"), *((t.get("taskId"), t.get("state")) for t in tasks))


def raise_unless_succeeded(job: dict[str, Any]) -> None:
    state = job.get("state", "")
    if state == "PIPELINE_STATE_SUCCEEDED":
        return
    failed = [
        task
        for task in job.get("jobDetail", {}).get("taskDetails", [])
        if task.get("state") == "FAILED" and task.get("taskId") not in _root_task_ids(job)
    ]
    if failed:
        reasons = "; ".join(
            f"task {t.get('taskName')!r}: {first_line(t.get('error', {}).get('message', ''))}"
            for t in failed
        )
        raise PipelineJobFailed(f"{_short(state).lower()}: {reasons}")
    message = job.get("error", {}).get("message") or "no error reported"
    raise PipelineJobFailed(f"{_short(state).lower()}: {first_line(message)}")


# -- outputs ---------------------------------------------------------------------------------------
def task_outputs(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Task name -> {output name: artifact dict (the first) or parameter value}."""
    found: dict[str, dict[str, Any]] = {}
    for task in job.get("jobDetail", {}).get("taskDetails", []):
        outputs: dict[str, Any] = {}
        for name, listed in (task.get("outputs") or {}).items():
            artifacts = listed.get("artifacts") or []
            if artifacts:
                outputs[name] = artifacts[0]
        metadata = (task.get("execution") or {}).get("metadata") or {}
        for key, value in metadata.items():
            if key.startswith("output:"):
                outputs[key.removeprefix("output:")] = _parameter_value(value)
        found[task.get("taskName", "")] = outputs
    return found


def pipeline_outputs(job: dict[str, Any]) -> dict[str, Any]:
    """The pipeline's declared outputs, resolved through the root DAG to the producing tasks."""
    dag = job.get("pipelineSpec", {}).get("root", {}).get("dag", {})
    dag_outputs = dag.get("outputs", {})
    by_name = task_outputs(job)
    # Task details are named by the task's display name (`taskInfo.name`), the DAG by its key.
    by_task = {
        key: by_name.get((task.get("taskInfo") or {}).get("name", key), by_name.get(key, {}))
        for key, task in (dag.get("tasks") or {}).items()
    }
    resolved: dict[str, Any] = {}
    for name, spec in (dag_outputs.get("artifacts") or {}).items():
        for selector in spec.get("artifactSelectors", []):
            value = by_task.get(selector["producerSubtask"], {}).get(selector["outputArtifactKey"])
            if value is not None:
                resolved[name] = value
    for name, spec in (dag_outputs.get("parameters") or {}).items():
        source = spec.get("valueFromParameter", {})
        value = by_task.get(source.get("producerSubtask", ""), {}).get(
            source.get("outputParameterKey", "")
        )
        if value is not None:
            resolved[name] = value
    return resolved


def _parameter_value(value: Any) -> Any:
    """Vertex may store a structured output parameter as its JSON text."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


# -- small helpers ---------------------------------------------------------------------------------
def _root_task_ids(job: dict[str, Any]) -> set[str]:
    return {
        task.get("taskId", "")
        for task in job.get("jobDetail", {}).get("taskDetails", [])
        if not task.get("parentTaskId") or task.get("parentTaskId") == "0"
    }


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    text = value.replace("Z", "+00:00")
    head, dot, rest = text.partition(".")
    if dot:  # Python < 3.11 takes at most 6 fraction digits
        digits = "".join(c for c in rest if c.isdigit())
        text = f"{head}.{digits[:6]}{rest[len(digits) :]}"
    return datetime.fromisoformat(text)


def duration_seconds(task: dict[str, Any]) -> float | None:
    start, end = parse_time(task.get("startTime")), parse_time(task.get("endTime"))
    if start is None or end is None:
        return None
    return max((end - start).total_seconds(), 0.0)


def clock(value: str | None) -> str:
    """HH:MM:SS of an RFC 3339 time in local time (now, when unset)."""
    moment = parse_time(value)
    return (
        moment.astimezone().strftime("%H:%M:%S") if moment else datetime.now().strftime("%H:%M:%S")
    )


def _short(state: str) -> str:
    return state.removeprefix("PIPELINE_STATE_")


def first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else ""
