"""The list `filter` of Vertex's job collections as the SDK writes it:
`display_name="x" AND state=JOB_STATE_SUCCEEDED AND labels.k="v"`. A term this grammar
cannot read, or a field it does not know, is a 400 naming `filter`."""

from __future__ import annotations

import re

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex.core.filters import Predicate
from vertexkit.local.vertex.store import Resource

FILTER_TERM = re.compile(r'^\s*([A-Za-z_.\-0-9]+)\s*=\s*"?([^"]*)"?\s*$')
FILTER_FIELDS = {"display_name": "displayName", "state": "state"}


def compile_job_filter(text: str | None) -> Predicate:
    terms = re.split(r"\s+AND\s+", text) if text and text.strip() else []
    return lambda resource: all(term_matches(resource, term) for term in terms)


def term_matches(resource: Resource, term: str) -> bool:
    found = FILTER_TERM.match(term)
    if not found:
        raise bad_request(f'filter: cannot parse {term!r}; use field="value" joined by AND')
    field, value = found.groups()
    if field.startswith("labels."):
        return (resource.get("labels") or {}).get(field.removeprefix("labels.")) == value
    if field not in FILTER_FIELDS:
        allowed = ", ".join([*FILTER_FIELDS, "labels.KEY"])
        raise bad_request(f"filter: unsupported field {field!r}; supported: {allowed}")
    return str(resource.get(FILTER_FIELDS[field])) == value
