"""The `operations` sub-collection of every Vertex resource, and of each location.

Google's `google.longrunning.Operations` methods at `{resource}/operations[/{id}]`: list, get,
delete, `:cancel`, `:wait`, for every collection of the families served (a custom job's, a
trial's, a TensorBoard time series'...). One matcher answers them all, so a new resource type
gets its operations without writing any.

- `cancel` is best effort, as `google.longrunning` allows ("the server makes a best effort to
  cancel ... clients can use GetOperation to check whether the cancellation succeeded or whether
  the operation completed despite cancellation"): the local cloud's operations are short steps
  of work already under way, so they complete; a job is cancelled with the job's own `:cancel`.
- `wait` waits until the operation is done or `timeout` (default and cap: 60 s, a REST
  request's own limit) passes, and answers the operation as it then is.
- `list` honours `filter` for `done=true` / `done=false` (a filter it cannot read is a 400
  naming `filter`) and `pageSize`/`pageToken`; `returnPartialSuccess` has nothing to do here:
  no location of the local cloud is ever unreachable.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex.operations import COLLECTION, Operations
from vertexkit.local.vertex.router import Handler, VertexRequest
from vertexkit.local.vertex.store import Resource, ResourceStore, page

MAX_WAIT_SECONDS = 60.0
POLL_SECONDS = 0.05
DONE_FILTER = re.compile(r"^\s*done\s*=\s*(true|false)\s*$", re.IGNORECASE)
DURATION = re.compile(r"^(\d+(?:\.\d+)?)s$")


class OperationsCollection:
    """The handlers; `match` tells the router which one a path is for."""

    def __init__(self, store: ResourceStore, operations: Operations) -> None:
        self._store = store
        self._operations = operations

    def match(
        self, method: str, segments: list[str], verb: str | None, served: Callable[[str], bool]
    ) -> Handler | None:
        """The handler for `.../operations` or `.../operations/{id}[:verb]` under a location
        or a resource of a served family (`served(family)`), else None."""
        if len(segments) < 5 or segments[0] != "projects" or segments[2] != "locations":
            return None
        if not (segments[4] == "operations" or served(segments[4])):
            return None
        if segments[-1] == "operations" and len(segments) % 2 == 1:
            return self.list if (method, verb) == ("GET", None) else None
        if len(segments) >= 6 and segments[-2] == "operations" and len(segments) % 2 == 0:
            return {("GET", None): self.get, ("DELETE", None): self.delete,
                    ("POST", "cancel"): self.cancel, ("POST", "wait"): self.wait,
                    }.get((method, verb))  # fmt: skip
        return None

    def get(self, request: VertexRequest) -> Resource:
        return self._operations.get(_name(request))

    def delete(self, request: VertexRequest) -> Resource:
        name = _name(request)
        self._operations.get(name)  # a 404 for an operation that does not exist
        self._store.delete(name)
        return {}

    def cancel(self, request: VertexRequest) -> Resource:
        self._operations.get(_name(request))  # best effort: see the module's docstring
        return {}

    def wait(self, request: VertexRequest) -> Resource:
        name = _name(request)
        deadline = time.monotonic() + wait_seconds(request.query.get("timeout"))
        operation = self._operations.get(name)
        while not operation.get("done") and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
            operation = self._operations.get(name)
        return operation

    def list(self, request: VertexRequest) -> Resource:
        keep = done_filter(request.query.get("filter"))
        prefix = request.path.rstrip("/") + "/"
        found = [
            Operations.public(operation)
            for operation in self._store.list(COLLECTION)
            if operation["name"].startswith(prefix) and keep(operation)
        ]
        return page(found, request.query, "operations")


def _name(request: VertexRequest) -> str:
    return request.path.split(":", 1)[0] if ":" in request.path.rsplit("/", 1)[-1] else request.path


def wait_seconds(timeout: str | None) -> float:
    """`timeout` as a google.protobuf.Duration in JSON ("30s"), capped at MAX_WAIT_SECONDS."""
    if not timeout:
        return MAX_WAIT_SECONDS
    match = DURATION.match(timeout.strip())
    if not match:
        raise bad_request(f'timeout: "{timeout}" is not a duration such as "30s".')
    return min(float(match.group(1)), MAX_WAIT_SECONDS)


def done_filter(text: str | None) -> Callable[[Resource], bool]:
    if not text or not text.strip():
        return lambda operation: True
    match = DONE_FILTER.match(text)
    if not match:
        raise bad_request(f'filter: the local cloud lists operations by "done=true" or '
                          f'"done=false"; cannot read {text!r}.')  # fmt: skip
    wanted = match.group(1).lower() == "true"
    return lambda operation: bool(operation.get("done")) == wanted
