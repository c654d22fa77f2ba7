"""Rules every Vertex AI request shares: the region in the parent, display names and labels
of the resource, list paging, and pipeline parameter values against their declared types."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vertexkit.specs.errors import SpecError, allowed, join_path
from vertexkit.specs.inputs import as_integer, as_number
from vertexkit.specs.naming import (
    shorten,
    validate_display_name,
    validate_labels,
    validate_region,
)

# KFP parameter types -> the check of a JSON value given for one.
PARAMETER_TYPES = {
    "NUMBER_INTEGER": as_integer,
    "NUMBER_DOUBLE": as_number,
    "STRING": lambda value, field: _instance(value, str, field, "a string"),
    "BOOLEAN": lambda value, field: _instance(value, bool, field, "true or false"),
    "LIST": lambda value, field: _instance(value, list, field, "a JSON list"),
    "STRUCT": lambda value, field: _instance(value, dict, field, "a JSON object"),
}


def _instance(value: Any, kind: type, field: str, expected: str) -> None:
    if not isinstance(value, kind):
        raise SpecError(field, f"must be {expected}; got {shorten(value)}")


def validate_parent(project: str, location: str) -> None:
    """`projects/PROJECT/locations/REGION` of a create request: the region must be a Vertex AI
    region (the project is not checked: Vertex answers an unknown one with 403, not 400)."""
    del project
    validate_region(location, "location")


def validate_metadata(
    resource: Mapping[str, Any], prefix: str, *, display_name_required: bool = True
) -> None:
    """A resource's `displayName` (1..128 characters) and `labels` (Google's label rules)."""
    name = resource.get("displayName")
    if display_name_required or name is not None:
        validate_display_name(name, join_path(prefix, "displayName"))
    validate_labels(resource.get("labels"), join_path(prefix, "labels"))


def validate_page_size(value: Any, field: str = "pageSize") -> int | None:
    """A list page size: unset, or an integer >= 0 (0 means the server's default)."""
    if value in (None, ""):
        return None
    try:
        size = int(value)
    except (TypeError, ValueError):
        raise SpecError(field, f"must be an integer >= 0; got {shorten(value)}") from None
    if size < 0:
        raise SpecError(field, f"must be >= 0; got {size}")
    return size


def validate_list_query(query: Mapping[str, str]) -> None:
    """`pageSize` and `pageToken` of a Vertex list request (tokens are the ones we issued)."""
    validate_page_size(query.get("pageSize"))
    token = query.get("pageToken") or ""
    if token and not token.isdigit():
        raise SpecError("pageToken", f"invalid page token {token!r}: pass a nextPageToken back")


def validate_parameter_values(
    declared: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any], field: str
) -> None:
    """Values for a pipeline's root parameters: known names, every required one, right types."""
    unknown = sorted(set(values) - set(declared))
    if unknown:
        raise SpecError(
            field,
            f"unknown parameter(s) {', '.join(unknown)}; the pipeline takes: "
            f"{allowed(sorted(declared)) or 'none'}",
        )
    missing = sorted(
        name
        for name, definition in declared.items()
        if name not in values
        and "defaultValue" not in definition
        and not definition.get("isOptional")
    )
    if missing:
        raise SpecError(field, f"missing required parameter(s) {', '.join(missing)}")
    for name, value in values.items():
        kind = declared[name].get("parameterType", "")
        if kind in PARAMETER_TYPES and value is not None:
            PARAMETER_TYPES[kind](value, join_path(field, name))


def validate_update(patch: Mapping[str, Any], fields: set[str], prefix: str) -> None:
    """A PATCH body's `displayName` and `labels` when the update mask names them."""
    if "displayName" in fields:
        validate_display_name(patch.get("displayName"), join_path(prefix, "displayName"))
    if "labels" in fields:
        validate_labels(patch.get("labels"), join_path(prefix, "labels"))
