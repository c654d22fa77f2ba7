"""Display names, labels, resource IDs and names, regions: Vertex's naming rules."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from vertexkit.specs.catalog import catalog
from vertexkit.specs.errors import SpecError, allowed, join_path

MAX_DISPLAY_NAME = 128
MAX_LABELS = 64
MAX_LABEL_LENGTH = 63
LABEL_RULE = (
    "lowercase letters (international letters allowed), digits, '_' and '-'; keys 1..63 "
    "characters starting with a lowercase letter, values 0..63 characters"
)


def validate_display_name(name: Any, field: str = "displayName") -> str:
    """Non-empty, at most 128 UTF-8 characters (Vertex counts characters, not bytes)."""
    if not isinstance(name, str) or not name.strip():
        raise SpecError(field, "required: a non-empty name of at most 128 UTF-8 characters")
    if len(name) > MAX_DISPLAY_NAME:
        raise SpecError(
            field, f"at most {MAX_DISPLAY_NAME} UTF-8 characters; got {len(name)} characters"
        )
    return name


def _label_char(char: str) -> bool:
    # Lowercase or caseless letters (e.g. CJK) count as lowercase, as Google's label rules allow.
    return char in "_-" or char.isdigit() or unicodedata.category(char) in ("Ll", "Lo")


def _label_start(char: str) -> bool:
    return unicodedata.category(char) in ("Ll", "Lo")


def validate_labels(labels: Any, field: str = "labels") -> dict[str, str]:
    """At most 64 labels; keys and values of lowercase letters, digits, `_`, `-`."""
    if labels is None:
        return {}
    if not isinstance(labels, dict):
        raise SpecError(field, f"must be a map of label key to value; got {shorten(labels)}")
    if len(labels) > MAX_LABELS:
        raise SpecError(field, f"at most {MAX_LABELS} labels; got {len(labels)}")
    for key, value in labels.items():
        _check_label(key, value, join_path(field, shorten(key, quote=False)))
    return labels


def _check_label(key: Any, value: Any, where: str) -> None:
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_LABEL_LENGTH:
        size = len(key) if isinstance(key, str) else key
        raise SpecError(where, f"label key must be 1..63 characters, got {size}; {LABEL_RULE}")
    if not _label_start(key[0]) or not all(_label_char(char) for char in key):
        raise SpecError(where, f"invalid label key {key!r}; allowed: {LABEL_RULE}")
    if not isinstance(value, str):
        raise SpecError(where, f"label value must be a string; got {shorten(value)}")
    if len(value) > MAX_LABEL_LENGTH:
        raise SpecError(where, f"label value has {len(value)} characters; {LABEL_RULE}")
    if not all(_label_char(char) for char in value):
        raise SpecError(where, f"invalid label value {value!r}; allowed: {LABEL_RULE}")


def shorten(value: Any, limit: int = 80, quote: bool = True) -> str:
    """A value for a message, cut so a huge input never comes back whole in the answer."""
    text = repr(value) if quote else str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def validate_region(region: Any, field: str = "location") -> str:
    """A Vertex AI region from the data file (e.g. us-central1)."""
    regions = catalog().regions
    if region not in regions:
        raise SpecError(field, f"unknown Vertex AI region {region!r}; allowed: {allowed(regions)}")
    return region


MODEL_ID = re.compile(r"^[a-z_][a-z0-9_-]{0,62}$")
ENDPOINT_ID_WORD = re.compile(r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$")
ENDPOINT_ID_NUMBER = re.compile(r"^[1-9][0-9]{0,8}$")
PROJECT_ID = re.compile(r"^([a-z][a-z0-9-]{4,28}[a-z0-9]|[0-9]{1,20})$")


def validate_project_id(project: Any, field: str = "project") -> str:
    """A project ID (6..30 of [a-z0-9-], letter first, no trailing '-') or a project number."""
    if not isinstance(project, str) or not PROJECT_ID.match(project):
        raise SpecError(field, f"invalid project {project!r}: a project ID or number")
    return project


def validate_model_id(model_id: str, field: str = "modelId") -> str:
    """Model IDs: up to 63 of [a-z0-9_-], not starting with a digit or hyphen."""
    if not MODEL_ID.match(model_id):
        raise SpecError(
            field,
            "up to 63 characters of [a-z0-9_-], not starting with a digit or '-'; "
            f"got {model_id!r}",
        )
    return model_id


def validate_endpoint_id(endpoint_id: str, field: str = "endpointId") -> str:
    """Endpoint IDs: a word of up to 63 [a-z0-9-] (letter first, no trailing '-'),
    or a number of up to 9 digits without leading zeros."""
    if ENDPOINT_ID_WORD.match(endpoint_id) or ENDPOINT_ID_NUMBER.match(endpoint_id):
        return endpoint_id
    raise SpecError(
        field,
        "either up to 63 characters of [a-z0-9-] starting with a letter and ending with a "
        f"letter or digit, or up to 9 digits without a leading zero; got {endpoint_id!r}",
    )


def parse_resource_name(name: str, collection: str, field: str = "name") -> dict[str, str]:
    """`projects/P/locations/L/<collection>/ID` -> {"project", "location", "id"}."""
    pattern = rf"^projects/([^/]+)/locations/([^/]+)/{re.escape(collection)}/([^/]+)$"
    match = re.match(pattern, name or "")
    if not match:
        raise SpecError(
            field,
            f"must look like projects/PROJECT/locations/REGION/{collection}/ID; got {name!r}",
        )
    project, location, resource_id = match.groups()
    validate_project_id(project, field)
    return {"project": project, "location": location, "id": resource_id}
