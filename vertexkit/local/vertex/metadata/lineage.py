"""artifacts:queryArtifactLineageSubgraph: the artifacts and executions reachable from an
artifact through events, as a LineageSubgraph.

Events are kept on their execution (`_events`, written by addExecutionEvents). One hop is one
event edge, artifact to execution or execution to artifact; `maxHops` absent walks the whole
graph, 0 answers the artifact alone, a negative value is INVALID_ARGUMENT (the reference).
`filter` (read with `filters.compile_filter`) is the condition an artifact meets to be part of
the subgraph: an artifact that fails it is left out and not walked through; the queried
artifact is always in. The answer's events are those between the answer's nodes.
"""

from __future__ import annotations

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex.core.filters import Predicate, compile_filter
from vertexkit.local.vertex.store import Resource, ResourceStore

UNLIMITED = -1


def max_hops(value: str | None) -> int:
    if value in (None, ""):
        return UNLIMITED
    try:
        hops = int(value)
    except ValueError as exc:
        raise bad_request(f"maxHops: {value!r} is not an integer.") from exc
    if hops < 0:
        raise bad_request(f"maxHops: must be 0 or more; got {hops}.")
    return hops


def artifact_lineage(store: ResourceStore, artifact: Resource, query: dict[str, str]) -> Resource:
    hops = max_hops(query.get("maxHops"))
    keep = compile_filter(query.get("filter"))
    executions = store.list("metadataExecutions")
    artifacts, reached = walk(store, artifact, executions, hops, keep)
    events = [{**event, "execution": e["name"]} for e in reached for event in e.get("_events", [])
              if event.get("artifact") in artifacts]  # fmt: skip
    graph: Resource = {"artifacts": [public(a) for a in artifacts.values()]}
    if reached:
        graph["executions"] = [public(e) for e in reached]
    if events:
        graph["events"] = events
    return graph


def walk(
    store: ResourceStore, start: Resource, executions: list[Resource], hops: int, keep: Predicate
) -> tuple[dict[str, Resource], list[Resource]]:
    """Breadth first from `start`, alternating artifact and execution levels."""
    artifacts: dict[str, Resource] = {start["name"]: start}
    reached: dict[str, Resource] = {}
    frontier, depth = [start["name"]], 0
    while frontier and depth != hops:
        depth += 1
        if depth % 2:
            found = executions_naming(frontier, executions, reached)
            reached.update((e["name"], e) for e in found)
        else:
            found = artifacts_named(store, [reached[n] for n in frontier], artifacts, keep)
            artifacts.update((a["name"], a) for a in found)
        frontier = [node["name"] for node in found]
    return artifacts, list(reached.values())


def executions_naming(
    artifacts: list[str], executions: list[Resource], reached: dict[str, Resource]
) -> list[Resource]:
    """The executions not yet reached with an event naming one of `artifacts`."""
    return [e for e in executions if e["name"] not in reached
            and any(ev.get("artifact") in artifacts for ev in e.get("_events", []))]  # fmt: skip


def artifacts_named(
    store: ResourceStore, executions: list[Resource], known: dict[str, Resource], keep: Predicate
) -> list[Resource]:
    """The artifacts the executions' events name, not yet known and meeting the filter."""
    names = sorted({ev["artifact"] for e in executions for ev in e.get("_events", [])} - set(known))
    return [a for a in map(store.find, names) if a is not None and keep(a)]


def public(resource: Resource) -> Resource:
    return {key: value for key, value in resource.items() if not key.startswith("_")}
