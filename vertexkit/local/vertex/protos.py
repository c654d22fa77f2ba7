"""Requests parsed with the `aiplatform_v1` proto types, responses written from them.

Parsing with the real types is what makes the local cloud reject what Vertex rejects: an
unknown field or a wrong-typed value is a 400 INVALID_ARGUMENT that names the field.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from google.protobuf import json_format

from vertexkit.local.errors import bad_request

M = TypeVar("M")


def parse(message_type: type[M], body: dict[str, Any]) -> M:
    """Parses a REST JSON body into a proto-plus message, or raises a 400 naming the field."""
    try:
        return message_type.from_json(json.dumps(body), ignore_unknown_fields=False)  # type: ignore[attr-defined]
    except json_format.ParseError as exc:
        raise bad_request(f"Invalid JSON payload received. {exc}") from exc


def to_dict(message: Any) -> dict[str, Any]:
    """A proto-plus message as the camelCase JSON Vertex answers with (defaults omitted)."""
    return json.loads(
        type(message).to_json(
            message, including_default_value_fields=False, use_integers_for_enums=False
        )
    )


def normalize(message_type: type[Any], body: dict[str, Any]) -> dict[str, Any]:
    """Round-trips a body through its proto type: validates it and canonicalises its JSON."""
    return to_dict(parse(message_type, body))


def with_defaults(message_type: type[Any], body: dict[str, Any]) -> dict[str, Any]:
    """A body as Vertex reads it: every field without presence that proto3 JSON leaves out
    when it is zero (a `minValue` of 0, an empty list, an unset enum) filled with its default,
    so a reader never mistakes "zero" for "missing"."""
    message = parse(message_type, body)
    return json.loads(
        type(message).to_json(
            message, including_default_value_fields=True, use_integers_for_enums=False
        )
    )
