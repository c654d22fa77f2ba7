"""Which pipeline run and task made a resource: the links run <-> task <-> job <-> model
version <-> endpoint, read from the runs' task details as Vertex's lineage reads them.

A model version is made by the task whose output artifact names it (`resourceName`
`projects/.../models/ID@VERSION`, what GCPC's `VertexModel` carries); a job by the task whose
`gcp_resources` name it. A task served from the cache (SKIPPED) made nothing: the run that ran
it did. Names are compared as the store keys them (`key`), so a number and an ID agree.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from vertexkit.local.console import runs

Resource = dict[str, Any]


@dataclass(frozen=True)
class Producer:
    run: str  # the pipeline job's resource name
    run_label: str  # its display name and ID
    task: str


def _label(job: Resource) -> str:
    shown = job.get("displayName") or ""
    ident = runs.job_id(job)
    return f"{shown} ({ident})" if shown and shown != ident else ident


def _ran(jobs: Iterable[Resource]) -> Iterable[tuple[Resource, str, Resource]]:
    """(job, task, detail) for every task that ran (not served from the cache), oldest first."""
    for job in sorted(jobs, key=lambda j: j.get("createTime", "")):
        for name, detail in runs.task_details(job).items():
            if detail.get("state") != "SKIPPED":
                yield job, name, detail


def _artifact_names(detail: Resource) -> Iterable[str]:
    for output in (detail.get("outputs") or {}).values():
        for artifact in output.get("artifacts") or []:
            name = (artifact.get("metadata") or {}).get("resourceName")
            if isinstance(name, str):
                yield name


def _gcp_names(detail: Resource) -> Iterable[str]:
    value = runs.output_parameters(detail).get("gcp_resources")
    for _, _, local in runs.gcp_resource_links(value) if value else []:
        if local:
            yield local


def model_version_producers(
    jobs: Iterable[Resource], key: Callable[[str], str]
) -> dict[str, Producer]:
    """`projects/.../models/ID@VERSION` (as the store keys it) -> the run and task that made it."""
    found: dict[str, Producer] = {}
    for job, task, detail in _ran(jobs):
        for name in _artifact_names(detail):
            if "/models/" in name and "@" in name:
                found.setdefault(key(name), Producer(job["name"], _label(job), task))
    return found


def resource_producer(
    jobs: Iterable[Resource], name: str, key: Callable[[str], str]
) -> Producer | None:
    """The run and task whose `gcp_resources` or output artifact names the resource `name`."""
    wanted = key(name)
    for job, task, detail in _ran(jobs):
        for found in (*_gcp_names(detail), *_artifact_names(detail)):
            if key(found.split("@", 1)[0]) == wanted:
                return Producer(job["name"], _label(job), task)
    return None


def sample_instance(model_files: Callable[[str], str | None]) -> list[Any] | None:
    """An instance in the model's feature order, from what the trainer wrote beside the model:
    `model_metadata.json`'s `sample_instance` (a real row, as the model serves it), else None.
    `model_files(name)` reads a file of the version's artifact folder (None when missing)."""
    text = model_files("model_metadata.json")
    try:
        metadata = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return None
    sample = metadata.get("sample_instance") if isinstance(metadata, dict) else None
    return sample if isinstance(sample, list) else None


def feature_columns(model_files: Callable[[str], str | None]) -> list[str]:
    text = model_files("feature_columns.json")
    try:
        columns = json.loads(text) if text else []
    except json.JSONDecodeError:
        return []
    return [str(c) for c in columns] if isinstance(columns, list) else []
