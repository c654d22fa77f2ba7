"""What every Vertex job collection answers alike, on the recipe: create (the area's checks,
then its engine), get, list (the jobs' filter grammar), delete once the job has ended
(Vertex: FAILED_PRECONDITION while it runs) and cancel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vertexkit.local.errors import failed_precondition
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.recipe import Recipe, StandardMethods
from vertexkit.local.vertex.jobs import states
from vertexkit.local.vertex.jobs.filters import compile_job_filter
from vertexkit.local.vertex.jobs.lifecycle import JobExecutor, Outcome
from vertexkit.local.vertex.router import Handler, VertexRequest, VertexRouter
from vertexkit.local.vertex.store import new_job_resource

Resource = dict[str, Any]
JOB_METHODS = ("create", "list", "get", "delete")  # no patch: a job is changed by cancel only
# What a job's create request may not set: Vertex fills these.
JOB_OUTPUT_ONLY = ("name", "state", "error", "createTime", "startTime", "endTime", "updateTime")


def no_rule(body: Resource) -> None:
    """A job's rules need its request (the location): the area's `check` holds them."""


def job_recipe(
    collection: str, kind: str, message: type, list_key: str, output_only: tuple[str, ...]
) -> Recipe:
    """A job collection: IDs Vertex gives, a regional parent, the jobs' filter grammar."""
    return Recipe(
        collection, kind, message, None, None, list_key, no_rule, methods=JOB_METHODS,
        output_only=output_only, filter_by=compile_job_filter, regional=True,
    )  # fmt: skip


class JobMethods(StandardMethods):
    """A job collection's standard methods and cancel. `queued` is the state a job is created
    in, `ended` says whether it has ended, `stop` cancels a running one (its area's engine)."""

    def __init__(
        self,
        backend: VertexBackend,
        recipe: Recipe,
        *,
        queued: str = states.QUEUED,
        ended: Callable[[Resource], bool] = states.is_terminal,
        stop: Callable[[str], None],
    ) -> None:
        super().__init__(backend, recipe)
        self.queued, self.ended, self.stop = queued, ended, stop

    def register(
        self, router: VertexRouter, collection: str, own: dict[str, Handler] | None = None
    ) -> None:
        super().register(router, collection, own)
        router.route("POST", f"{collection}/{{job}}:cancel")(self.cancel)

    def build(self, name: str, body: Resource) -> Resource:
        return new_job_resource(name, body, self.queued)

    def check_delete(self, job: Resource) -> None:
        if not self.ended(job):
            raise failed_precondition(
                f"{job['name']} is in state {job['state']}; cancel it before deleting it."
            )

    def cancel(self, request: VertexRequest) -> Resource:
        name = request.path.rsplit(":", 1)[0]
        job = self.store.get(name, kind=self.kind.kind)
        if self.ended(job):
            raise failed_precondition(f"{name} is already in state {job['state']}; cannot cancel.")
        self.stop(name)
        return {}


def cancel_on(executor: JobExecutor) -> Callable[[str], None]:
    """Cancel for a job the executor runs: CANCELLING, then its process stopped; a job with
    no process (still queued) ends CANCELLED at once."""

    def stop(name: str) -> None:
        executor.set_state(name, states.CANCELLING)
        if not executor.stop(name, "cancel"):
            executor.finish(name, Outcome(states.CANCELLED, states.CODE_CANCELLED, "CANCELED"))

    return stop


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
    for job in backend.store.list_in_states(collection, active):
        finish(job["name"], stopped)
