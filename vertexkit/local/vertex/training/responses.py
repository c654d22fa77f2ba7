"""Wire format of training resources: jobs as Vertex answers them, list pages, list filters."""

from __future__ import annotations

import re
from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex.jobs import states
from vertexkit.local.vertex.store import Resource, page

# Vertex list filters: `display_name="x" AND state=JOB_STATE_SUCCEEDED AND labels.k="v"`.
FILTER_TERM = re.compile(r'^\s*([A-Za-z_.\-0-9]+)\s*=\s*"?([^"]*)"?\s*$')
FILTER_FIELDS = {"display_name": "displayName", "state": "state"}


def job(resource: Resource) -> Resource:
    return states.public(resource)


def job_list(jobs: list[Resource], query: dict[str, str], key: str) -> Resource:
    matching = [states.public(j) for j in jobs if matches(j, query.get("filter", ""))]
    return page(matching, query, key)


def matches(resource: Resource, filter_text: str) -> bool:
    if not filter_text.strip():
        return True
    return all(term_matches(resource, term) for term in re.split(r"\s+AND\s+", filter_text))


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


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
