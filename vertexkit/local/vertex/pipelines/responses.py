"""The wire format: stored resources as Vertex answers them (private keys removed)."""

from __future__ import annotations

from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex.store import Resource
from vertexkit.runtime.gapic import aiplatform_v1


def public(resource: Resource) -> Resource:
    return {key: value for key, value in resource.items() if not key.startswith("_")}


def pipeline_job_list_item(job: Resource) -> Resource:
    """Vertex leaves `jobDetail` out of list responses ("not available in the list view")."""
    return {key: value for key, value in public(job).items() if key != "jobDetail"}


def read_mask(raw: str | None) -> list[list[str]] | None:
    """ListPipelineJobsRequest.read_mask, as the REST query carries it (a FieldMask's JSON:
    comma-separated, camelCase; snake_case read too): each path as its segments, checked
    against the PipelineJob message; unset means every field."""
    if not raw:
        return None
    paths = [[_camel(part) for part in path.strip().split(".")] for path in raw.split(",")]
    known = set(aiplatform_v1.PipelineJob.meta.pb.DESCRIPTOR.fields_by_camelcase_name)
    for path in paths:
        if path[0] not in known:
            raise bad_request(f"readMask: {'.'.join(path)!r} is not a PipelineJob field")
    return paths


def masked(resource: Resource, paths: list[list[str]]) -> Resource:
    """Only the fields the mask names (a nested path keeps its parents, and only its leaf)."""
    kept: Resource = {}
    for path in paths:
        source: Any = resource
        for part in path:
            if not isinstance(source, dict) or part not in source:
                break
            source = source[part]
        else:
            target = kept
            for part in path[:-1]:
                target = target.setdefault(part, {})
            target[path[-1]] = source
    return kept


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
