"""Pipeline job and schedule state: the states Vertex reports and the transitions that set them.

Resources are stored as the camelCase JSON Vertex answers with; keys that start with `_` are the
local runner's bookkeeping and are stripped before answering (see `responses.py`).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex.store import Resource, new_job_resource, now_rfc3339, stamp_state

PIPELINE_JOBS = "pipelineJobs"
SCHEDULES = "schedules"
FIRINGS = "scheduleFirings"

QUEUED = "PIPELINE_STATE_QUEUED"
PENDING = "PIPELINE_STATE_PENDING"
RUNNING = "PIPELINE_STATE_RUNNING"
SUCCEEDED = "PIPELINE_STATE_SUCCEEDED"
FAILED = "PIPELINE_STATE_FAILED"
CANCELLING = "PIPELINE_STATE_CANCELLING"
CANCELLED = "PIPELINE_STATE_CANCELLED"
TERMINAL_STATES = frozenset({SUCCEEDED, FAILED, CANCELLED})

# PipelineTaskDetail.State values.
TASK_RUNNING = "RUNNING"
TASK_SUCCEEDED = "SUCCEEDED"
TASK_FAILED = "FAILED"
TASK_SKIPPED = "SKIPPED"  # Vertex's word for a cache hit
TASK_CANCELLED = "CANCELLED"
TASK_NOT_TRIGGERED = "NOT_TRIGGERED"  # its trigger policy's condition was false
TASK_TERMINAL = frozenset(
    {TASK_SUCCEEDED, TASK_FAILED, TASK_SKIPPED, TASK_CANCELLED, TASK_NOT_TRIGGERED}
)
_COLOUR = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# Schedule.State values.
ACTIVE = "ACTIVE"
PAUSED = "PAUSED"
COMPLETED = "COMPLETED"

# google.rpc.Code values Vertex puts in `error.code`.
CODE_CANCELLED = 1
CODE_UNKNOWN = 2
CODE_FAILED_PRECONDITION = 9
CODE_INTERNAL = 13

STOPPED_WITH_CLOUD = "the local cloud stopped while the pipeline job was running"
JOB_ID_PATTERN = re.compile(r"^[a-z][-a-z0-9]{0,127}$")


def parse_time(value: str) -> datetime:
    """An RFC 3339 timestamp (any precision, `Z` or offset) as an aware UTC datetime."""
    text = value.strip()
    match = re.match(r"^(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$", text)
    if not match:
        raise ValueError(f"not an RFC 3339 timestamp: {value!r}")
    seconds, fraction, zone = match.groups()
    micros = (fraction or ".0")[1:7].ljust(6, "0")
    zone = "+00:00" if zone == "Z" else zone
    return datetime.fromisoformat(f"{seconds}.{micros}{zone}").astimezone(timezone.utc)


def format_time(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# -- pipeline jobs --------------------------------------------------------------------------------
def new_pipeline_job(name: str, body: Resource) -> Resource:
    """Vertex answers a just-created pipeline job PIPELINE_STATE_PENDING, then RUNNING (Google's
    logs and samples: "PipelineJob ... current state: PipelineState.PIPELINE_STATE_PENDING")."""
    return new_job_resource(name, body, PENDING)


def set_state(job: Resource, state: str) -> None:
    stamp_state(job, state, RUNNING, frozenset(TERMINAL_STATES))


def is_terminal(job: Resource) -> bool:
    return job.get("state") in TERMINAL_STATES


def task_details(job: Resource) -> list[Resource]:
    return job.setdefault("jobDetail", {}).setdefault("taskDetails", [])


def root_task(job: Resource, task_id: int) -> Resource:
    """Vertex lists the pipeline's root DAG as a task named after the pipeline."""
    pipeline_name = job.get("pipelineSpec", {}).get("pipelineInfo", {}).get("name", "pipeline")
    now = now_rfc3339()
    return {
        "taskId": str(task_id),
        "taskName": pipeline_name,
        "taskUniqueName": pipeline_name,
        "createTime": now,
        "startTime": now,
        "state": TASK_RUNNING,
        "pipelineTaskStatus": [{"updateTime": now, "state": TASK_RUNNING}],
    }


def set_task_state(task: Resource, state: str, at: str, error: str | None = None) -> None:
    task["state"] = state
    status: Resource = {"updateTime": at, "state": state}
    if state == TASK_RUNNING:
        task.setdefault("startTime", at)
    if state in TASK_TERMINAL:
        task.setdefault("startTime", at)
        task["endTime"] = at
    if error:
        message = plain_text(error)
        task["error"] = status["error"] = {"code": CODE_UNKNOWN, "message": message}
    task.setdefault("pipelineTaskStatus", []).append(status)


def end_open_tasks(job: Resource, state: str) -> None:
    """Closes every task still running when the job ends (cancelled, or the cloud stopped)."""
    now = now_rfc3339()
    for task in task_details(job):
        if task.get("state") not in TASK_TERMINAL:
            set_task_state(task, state, now)


def plain_text(text: str) -> str:
    """A message without terminal colour codes (a task's log may carry them)."""
    return _COLOUR.sub("", text)


def dag_failure_message(failed_tasks: list[str], causes: list[str] | None = None) -> str:
    """The job error Vertex writes when tasks fail, and each failed task's cause after it (the
    first line of its error: the rest is in the task's detail)."""
    names = ", ".join(failed_tasks)
    message = f"The DAG failed because some tasks failed. The failed tasks are: [{names}]."
    for task, cause in zip(failed_tasks, causes or [], strict=False):
        headline = plain_text(cause).strip().splitlines()[0] if cause.strip() else ""
        if headline:
            message += f"\n{task}: {headline}"
    return message


# -- list filters ----------------------------------------------------------------------------------
_FILTER_TERM = re.compile(r'^\s*([A-Za-z_][\w.\-]*)\s*(=|!=)\s*(?:"([^"]*)"|(\S+))\s*$')
_FILTER_FIELDS = {
    "display_name": "displayName",
    "displayname": "displayName",
    "state": "state",
    "schedule_name": "scheduleName",
    "schedulename": "scheduleName",
    "pipeline_name": "pipelineSpec.pipelineInfo.name",
    "pipelinename": "pipelineSpec.pipelineInfo.name",
    "create_time": "createTime",
    "createtime": "createTime",
}


def _lookup(resource: Resource, path: str) -> Any:
    value: Any = resource
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def parse_filter(text: str) -> list[tuple[str, str, str]]:
    """`a=b AND labels.k="v"` -> [(json path, op, value)]; other syntax is a 400 naming it."""
    terms = []
    for raw in re.split(r"\s+AND\s+", text.strip()) if text.strip() else []:
        match = _FILTER_TERM.match(raw)
        if not match:
            raise bad_request(
                f'filter: unsupported expression "{raw}"; use field=value joined by AND'
            )
        field, op, quoted, bare = match.groups()
        value = quoted if quoted is not None else bare
        if field.startswith("labels."):
            path = "labels." + field.removeprefix("labels.")
        elif field.lower() in _FILTER_FIELDS:
            path = _FILTER_FIELDS[field.lower()]
        else:
            allowed = ", ".join(sorted({*_FILTER_FIELDS.values(), "labels.KEY"}))
            raise bad_request(f'filter: unknown field "{field}"; allowed: {allowed}')
        terms.append((path, op, value))
    return terms


def matches(resource: Resource, terms: list[tuple[str, str, str]]) -> bool:
    for path, op, value in terms:
        actual = _lookup(resource, path)
        equal = str(actual) == value if actual is not None else False
        if (op == "=") != equal:
            return False
    return True


def order(items: list[Resource], order_by: str) -> list[Resource]:
    """`create_time desc, display_name` style ordering over the stored JSON."""
    for clause in reversed([c.strip() for c in order_by.split(",") if c.strip()]):
        field, _, direction = clause.partition(" ")
        path = _FILTER_FIELDS.get(field.lower().replace("_desc", ""), field)
        descending = direction.strip().lower() == "desc" or field.lower().endswith("_desc")
        items = sorted(items, key=lambda item: str(_lookup(item, path) or ""), reverse=descending)
    return items
