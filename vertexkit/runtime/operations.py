"""Waiting on Vertex long-running operations (upload, endpoint create, deploy) with our backoff.

The operation's name goes into gcp_resources as a `VertexLro` as soon as it exists, so a retried
task polls the same operation instead of starting a second upload or deploy.
"""

from __future__ import annotations

from typing import Any

from vertexkit.context import CloudContext
from vertexkit.runtime.cancellation import cancel_on_sigterm
from vertexkit.runtime.gcp_resources import find_vertex_resource, record_vertex_resource
from vertexkit.runtime.polling import cap_for, poll_until

LRO_RESOURCE_TYPE = "VertexLro"


class OperationFailedError(RuntimeError):
    pass


def wait_for_operation(
    ctx: CloudContext, client: Any, name: str, response_type: type, *, describe: str = ""
) -> Any:
    """Polls `name` until done; returns its response unpacked as `response_type`."""

    def fetch() -> Any:
        return client.get_operation(request={"name": name})

    with cancel_on_sigterm() as scope:
        scope.cancel_with(lambda: client.cancel_operation(request={"name": name}))
        operation = poll_until(
            fetch, lambda op: op.done, cap=cap_for(ctx), describe=describe or name
        )
    if operation.HasField("error") and operation.error.code:
        raise OperationFailedError(f"{describe or name} failed: {operation.error.message}")
    return response_type.deserialize(operation.response.value)


def start_or_resume(
    ctx: CloudContext,
    client: Any,
    start: Any,
    response_type: type,
    gcp_resources: str | None,
    *,
    resource_type: str = LRO_RESOURCE_TYPE,
    describe: str = "",
) -> Any:
    """Runs `start()` (returning an api_core Operation) unless gcp_resources names one; waits."""
    name = find_vertex_resource(gcp_resources, resource_type)
    if name is None:
        name = start().operation.name
        record_vertex_resource(gcp_resources, resource_type, ctx.region, name)
    return wait_for_operation(ctx, client, name, response_type, describe=describe)
