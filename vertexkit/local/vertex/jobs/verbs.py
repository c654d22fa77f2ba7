"""The verbs every Vertex job collection answers alike: its five routes, and the rule that a job
is deleted only once it has ended (Vertex: FAILED_PRECONDITION while it runs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from vertexkit.local.errors import failed_precondition
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.jobs import states
from vertexkit.local.vertex.jobs.lifecycle import Outcome
from vertexkit.local.vertex.router import Handler, VertexRouter

Resource = dict[str, Any]


class JobArea(Protocol):
    def list(self, request: Any) -> Resource: ...
    def get(self, request: Any) -> Resource: ...
    def delete(self, request: Any) -> Resource: ...
    def cancel(self, request: Any) -> Resource: ...


def register_job_collection(
    router: VertexRouter, collection: str, create: Handler, area: JobArea
) -> None:
    """`collection` is the template `projects/{project}/locations/{location}/<jobs>`."""
    job = f"{collection}/{{job}}"
    router.route("POST", collection)(create)
    router.route("GET", collection)(area.list)
    router.route("GET", job)(area.get)
    router.route("DELETE", job)(area.delete)
    router.route("POST", f"{job}:cancel")(area.cancel)


def refuse_cancel_when_ended(name: str, job: Resource, ended: Callable[[Resource], bool]) -> None:
    if ended(job):
        raise failed_precondition(f"{name} is already in state {job['state']}; cannot cancel.")


def delete_ended(
    backend: VertexBackend, name: str, kind: str, ended: Callable[[Resource], bool]
) -> Resource:
    """Deletes a job that has ended; answers Vertex's delete operation, already done."""
    job = backend.store.get(name, kind=kind)
    if not ended(job):
        raise failed_precondition(
            f"{name} is in state {job['state']}; cancel it before deleting it."
        )
    backend.store.delete(name)
    operation = backend.operations.start(name, "DeleteOperationMetadata")
    return backend.operations.finish(operation["name"])


def fail_left_running(
    backend: VertexBackend,
    collection: str,
    active: frozenset[str],
    finish: Callable[[str, Outcome], None],
    failed_state: str,
) -> None:
    """At start: jobs a previous process left active can never finish; end them FAILED, saying
    why (a restart never finds a job stuck RUNNING)."""
    stopped = Outcome(failed_state, states.CODE_INTERNAL, states.STOPPED_WITH_CLOUD)
    for job in backend.store.list(collection):
        if job.get("state") in active:
            finish(job["name"], stopped)
