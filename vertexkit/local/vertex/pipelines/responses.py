"""The wire format: stored resources as Vertex answers them (private keys removed)."""

from __future__ import annotations

from vertexkit.local.vertex.store import Resource


def public(resource: Resource) -> Resource:
    return {key: value for key, value in resource.items() if not key.startswith("_")}


def pipeline_job_list_item(job: Resource) -> Resource:
    """Vertex leaves `jobDetail` out of list responses ("not available in the list view")."""
    return {key: value for key, value in public(job).items() if key != "jobDetail"}
