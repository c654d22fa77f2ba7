"""Every Vertex job type a component runs, launched and followed the same way.

A component creates its job through `launch_and_wait` with the `JobApi` of its type (how to
create, get and cancel it through the JobServiceClient): the job is recorded in GCPC's
`gcp_resources` as soon as it exists, a retried task resumes it instead of creating a second,
SIGTERM cancels it, and a job that does not end SUCCEEDED raises `JobFailedError` with its error.
Beside `operations` (the long-running operations of create/deploy calls).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vertexkit.context import CloudContext
from vertexkit.runtime.cancellation import cancel_on_sigterm
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.runtime.gcp_resources import find_vertex_resource, record_vertex_resource
from vertexkit.runtime.polling import cap_for, poll_until

log = logging.getLogger(__name__)

JobState = aiplatform_v1.JobState
FINAL_STATES = frozenset(
    {
        JobState.JOB_STATE_SUCCEEDED,
        JobState.JOB_STATE_FAILED,
        JobState.JOB_STATE_CANCELLED,
        JobState.JOB_STATE_PAUSED,
        JobState.JOB_STATE_EXPIRED,
        JobState.JOB_STATE_PARTIALLY_SUCCEEDED,
    }
)
# A retried task whose earlier job ended like this runs a new job: retrying is the point.
RETRYABLE_STATES = frozenset(
    {JobState.JOB_STATE_FAILED, JobState.JOB_STATE_CANCELLED, JobState.JOB_STATE_EXPIRED}
)


class JobFailedError(RuntimeError):
    """A job ended in a state other than SUCCEEDED; the message carries the job's error."""

    def __init__(self, resource_type: str, name: str, state: str, message: str) -> None:
        super().__init__(f"{resource_type} {name} ended {state}: {message or 'no error message'}")
        self.name = name
        self.state = state


@dataclass(frozen=True)
class JobApi:
    """How to create/get/cancel one kind of Vertex job through the JobServiceClient."""

    resource_type: str
    message: type
    create: Callable[[Any, str, Any], Any]
    get: Callable[[Any, str], Any]
    cancel: Callable[[Any, str], None]


CUSTOM_JOB = JobApi(
    "CustomJob",
    aiplatform_v1.CustomJob,
    lambda client, parent, job: client.create_custom_job(parent=parent, custom_job=job),
    lambda client, name: client.get_custom_job(name=name),
    lambda client, name: client.cancel_custom_job(name=name),
)
TUNING_JOB = JobApi(
    "HyperparameterTuningJob",
    aiplatform_v1.HyperparameterTuningJob,
    lambda client, parent, job: client.create_hyperparameter_tuning_job(
        parent=parent, hyperparameter_tuning_job=job
    ),
    lambda client, name: client.get_hyperparameter_tuning_job(name=name),
    lambda client, name: client.cancel_hyperparameter_tuning_job(name=name),
)


def _resumable(api: JobApi, client: Any, gcp_resources: str | None) -> str | None:
    """The job a previous attempt of this task created, unless it already failed."""
    name = find_vertex_resource(gcp_resources, api.resource_type)
    if name is None:
        return None
    state = api.get(client, name).state
    if state in RETRYABLE_STATES:
        log.info("previous %s %s ended %s: starting a new one", api.resource_type, name, state.name)
        return None
    log.info("resuming %s %s (%s) instead of creating another", api.resource_type, name, state.name)
    return name


def launch_and_wait(
    ctx: CloudContext,
    api: JobApi,
    job_json: dict[str, Any],
    gcp_resources: str | None,
    *,
    poll_cap: float | None = None,
) -> Any:
    """Creates the job (or resumes the one in gcp_resources), waits for a final state.

    Returns the finished job message; raises JobFailedError unless it SUCCEEDED. While waiting,
    SIGTERM cancels the job before the process exits.
    """
    client = ctx.job_client()
    with cancel_on_sigterm() as scope:
        name = _resumable(api, client, gcp_resources)
        if name is None:
            created = api.create(client, ctx.parent, api.message.from_json(json.dumps(job_json)))
            name = created.name
            scope.cancel_with(lambda: api.cancel(client, name))
            record_vertex_resource(gcp_resources, api.resource_type, ctx.region, name)
            log.info("created %s %s", api.resource_type, name)
        scope.cancel_with(lambda: api.cancel(client, name))
        job = poll_until(
            lambda: api.get(client, name),
            lambda job: job.state in FINAL_STATES,
            cap=poll_cap if poll_cap is not None else cap_for(ctx),
            describe=name,
            on_poll=_state_logger(name),
        )
    if job.state != JobState.JOB_STATE_SUCCEEDED:
        raise JobFailedError(api.resource_type, name, job.state.name, job.error.message)
    return job


def _state_logger(name: str) -> Callable[[Any], None]:
    last: list[Any] = [None]

    def log_change(job: Any) -> None:
        if job.state != last[0]:
            last[0] = job.state
            log.info("%s: %s", name, job.state.name)

    return log_change
