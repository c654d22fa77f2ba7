"""Job state, shared by every job type (custom, tuning, batch prediction): the JobState values
Vertex uses, the google.rpc codes it puts in `error.code`, and the timestamps each transition
sets.

A job is stored as the camelCase JSON Vertex answers with; keys that start with `_` are private
(the local runner's bookkeeping) and are stripped before answering.
"""

from __future__ import annotations

from typing import Any

from vertexkit.local.vertex.store import Resource, new_job_resource, stamp_state

QUEUED = "JOB_STATE_QUEUED"
PENDING = "JOB_STATE_PENDING"
RUNNING = "JOB_STATE_RUNNING"
SUCCEEDED = "JOB_STATE_SUCCEEDED"
FAILED = "JOB_STATE_FAILED"
CANCELLING = "JOB_STATE_CANCELLING"
CANCELLED = "JOB_STATE_CANCELLED"

TERMINAL_STATES = frozenset({SUCCEEDED, FAILED, CANCELLED})
ACTIVE_STATES = frozenset({QUEUED, PENDING, RUNNING, CANCELLING})

# google.rpc.Code values Vertex puts in a job's `error.code`.
CODE_CANCELLED = 1
CODE_INVALID_ARGUMENT = 3
CODE_DEADLINE_EXCEEDED = 4
CODE_INTERNAL = 13

STOPPED_WITH_CLOUD = "the local cloud stopped while the job was running"


def new_job(name: str, body: dict[str, Any]) -> Resource:
    return new_job_resource(name, body, QUEUED)


def set_state(job: Resource, state: str) -> None:
    stamp_state(job, state, RUNNING, frozenset(TERMINAL_STATES))


def set_error(job: Resource, code: int, message: str) -> None:
    job["error"] = {"code": code, "message": message}


def is_terminal(job: Resource) -> bool:
    return job.get("state") in TERMINAL_STATES


def public(job: Resource) -> Resource:
    """The job as Vertex answers it: private bookkeeping keys removed."""
    return {key: value for key, value in job.items() if not key.startswith("_")}
