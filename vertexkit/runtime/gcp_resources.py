"""GCPC's `gcp_resources` output: which cloud resources a component created.

The file holds `GcpResources` JSON (google_cloud_pipeline_components.proto.gcp_resources_pb2):

    {"resources": [{"resourceType": "CustomJob",
                    "resourceUri": "https://us-central1-aiplatform.googleapis.com/v1/projects/..."}]}

A component writes it as soon as its resource exists. When the task is retried (preemption, a
restarted pod), the file is still there: the component reads it and resumes polling that resource
instead of creating a second one. URIs always use the public Vertex/BigQuery form, also against the
local cloud, so the file means the same thing everywhere and parses back to the resource name.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format
from google_cloud_pipeline_components.proto.gcp_resources_pb2 import GcpResources

BIGQUERY_URI_PREFIX = "https://www.googleapis.com/bigquery/v2/"
_VERTEX_URI = re.compile(
    r"^https://(?P<region>[a-z0-9-]+)-aiplatform\.googleapis\.com/v1/(?P<name>.+)$"
)
_BIGQUERY_JOB_URI = re.compile(
    r"^https://www\.googleapis\.com/bigquery/v2/projects/(?P<project>[^/]+)/jobs/(?P<job_id>[^?]+)"
    r"(?:\?location=(?P<location>.+))?$"
)


@dataclass(frozen=True)
class GcpResource:
    """One GcpResources entry: a type (CustomJob, VertexLro, BigQueryJob, ...) and a URI."""

    resource_type: str
    resource_uri: str


@dataclass(frozen=True)
class BigQueryJobRef:
    project: str
    job_id: str
    location: str | None


def vertex_resource_uri(region: str, name: str) -> str:
    """The URI GCPC writes for a Vertex resource or operation name."""
    return f"https://{region}-aiplatform.googleapis.com/v1/{name}"


def vertex_name_from_uri(uri: str) -> str:
    """Inverse of `vertex_resource_uri`: the resource name (`projects/.../customJobs/123`)."""
    match = _VERTEX_URI.match(uri)
    if not match or not match.group("name"):
        raise ValueError(f"gcp_resources: not a Vertex AI resource URI: {uri!r}")
    return match.group("name")


def bigquery_job_uri(project: str, job_id: str, location: str | None) -> str:
    """The URI GCPC writes for a BigQuery job."""
    uri = f"{BIGQUERY_URI_PREFIX}projects/{project}/jobs/{job_id}"
    return f"{uri}?location={location}" if location else uri


def bigquery_job_from_uri(uri: str) -> BigQueryJobRef:
    match = _BIGQUERY_JOB_URI.match(uri)
    if not match:
        raise ValueError(f"gcp_resources: not a BigQuery job URI: {uri!r}")
    return BigQueryJobRef(match.group("project"), match.group("job_id"), match.group("location"))


def write_gcp_resources(path: str | os.PathLike[str], resources: list[GcpResource]) -> None:
    """Writes the file atomically: a retry must never read half a file."""
    message = GcpResources()
    for resource in resources:
        entry = message.resources.add()
        entry.resource_type = resource.resource_type
        entry.resource_uri = resource.resource_uri
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_text(json_format.MessageToJson(message))
    partial.replace(target)


def read_gcp_resources(path: str | os.PathLike[str] | None) -> list[GcpResource]:
    """The resources a previous attempt wrote; empty when there was none."""
    if not path or not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    text = Path(path).read_text()
    try:
        message = json_format.Parse(text, GcpResources())
    except json_format.ParseError as error:
        raise ValueError(f"gcp_resources at {path} is not GcpResources JSON: {error}") from error
    return [GcpResource(r.resource_type, r.resource_uri) for r in message.resources]


def find_resource(path: str | os.PathLike[str] | None, resource_type: str) -> str | None:
    """The URI of the first resource of this type a previous attempt wrote, else None."""
    for resource in read_gcp_resources(path):
        if resource.resource_type == resource_type:
            return resource.resource_uri
    return None


def find_vertex_resource(path: str | os.PathLike[str] | None, resource_type: str) -> str | None:
    """The Vertex resource name (not URI) of a previously written resource of this type."""
    uri = find_resource(path, resource_type)
    return vertex_name_from_uri(uri) if uri else None


def record_vertex_resource(
    path: str | os.PathLike[str] | None, resource_type: str, region: str, name: str
) -> None:
    """Adds (or replaces, by type) one Vertex resource in the file; no-op without a path."""
    if not path:
        return
    uri = vertex_resource_uri(region, name)
    kept = [r for r in read_gcp_resources(path) if r.resource_type != resource_type]
    write_gcp_resources(path, [*kept, GcpResource(resource_type, uri)])


def write_empty(path: str | os.PathLike[str] | None) -> None:
    """For components that created nothing: KFP still expects the output file."""
    if path and not os.path.exists(path):
        write_gcp_resources(path, [])


def as_json(path: str | os.PathLike[str]) -> dict:
    return json.loads(Path(path).read_text())


def execution_folder(base_uri: str, gcp_resources_path: str | os.PathLike[str]) -> str:
    """`<base_uri>/run-<id>`: a folder of its own for one task execution.

    The id hashes the task's gcp_resources output path, which is new for every pipeline run and
    the same for every retry of one task. So a rerun never overwrites the artifacts a registered
    model version points at, a retry resumes into the same folder, and a task's parameters stay
    constant between runs (which is what lets KFP serve it from cache).
    """
    import hashlib

    digest = hashlib.sha256(str(Path(gcp_resources_path).resolve()).encode()).hexdigest()[:12]
    return f"{base_uri.rstrip('/')}/run-{digest}"
