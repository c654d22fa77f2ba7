"""A PipelineJob's compiled KFP spec and its output directory, checked before anything exists.

The KFP IR (pipeline_spec.proto): `root.dag.tasks[T].componentRef.name` names an entry of
`components`, and so does every task of a component that is itself a DAG. A spec whose tasks
name no component cannot run, so it is refused at create, not after a QUEUED record exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vertexkit.specs.errors import SpecError
from vertexkit.specs.naming import shorten


def validate_output_directory(uri: str, field: str) -> None:
    """`gs://BUCKET/PATH` whose path has no `.` or `..` segment: such a path would leave the
    pipeline root (Cloud Storage object names cannot be `.` or `..` either)."""
    _, _, path = uri.removeprefix("gs://").partition("/")
    if any(segment in (".", "..") for segment in path.split("/")):
        raise SpecError(field, f"must not hold a '.' or '..' path segment; got {shorten(uri)}")


def validate_component_refs(spec: Mapping[str, Any], field: str) -> None:
    """Every task's componentRef names a component of `spec.components`."""
    components = spec.get("components") or {}
    dags = [("root", spec.get("root", {}).get("dag", {}))]
    dags += [(f"components.{name}", c.get("dag", {})) for name, c in components.items()]
    for where, dag in dags:
        for task_name, task in (dag.get("tasks") or {}).items():
            _check_task(components, task, f"{field}.{where}.dag.tasks.{task_name}", field)


def _check_task(
    components: Mapping[str, Any], task: Mapping[str, Any], task_field: str, field: str
) -> None:
    ref = (task.get("componentRef") or {}).get("name")
    if not ref:
        raise SpecError(f"{task_field}.componentRef.name", "is required")
    if not components:
        raise SpecError(
            f"{field}.components",
            f"is required: task {task_field.rsplit('.', 1)[-1]!r} names component {ref!r}",
        )
    if ref not in components:
        known = ", ".join(sorted(components))
        raise SpecError(
            f"{task_field}.componentRef.name",
            f"{shorten(ref)} is not a component of {field}.components ({known})",
        )
