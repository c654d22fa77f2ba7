"""The `filter` expressions ListModels, ListModelVersions and ListEndpoints accept.

Supported, joined with AND: `display_name="x"` (or `displayName`), `labels.key="value"`,
`labels.key:*`, `labels:key`. Anything else is refused with a 400 naming the term, rather than
silently matching everything.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from vertexkit.local.errors import bad_request

Predicate = Callable[[dict[str, Any]], bool]
TERM = re.compile(
    r"""^\s*(?P<field>display_name|displayName|labels\.(?:"[^"]+"|[\w-]+)|labels)\s*
    (?P<op>=|!=|:)\s*(?P<value>"[^"]*"|[^\s"]+)\s*$""",
    re.VERBOSE,
)


def _unquote(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


def _term(term: str) -> Predicate:
    match = TERM.match(term)
    if not match:
        raise bad_request(
            f'Unsupported filter term {term.strip()!r}: use display_name="...", '
            'labels.KEY="VALUE", labels.KEY:* or labels:KEY, joined with AND.'
        )
    field, op, value = match["field"], match["op"], _unquote(match["value"])
    if field == "labels":
        return lambda resource: value in (resource.get("labels") or {})
    if field.startswith("labels."):
        key = _unquote(field[len("labels.") :])
        if op == ":" and value == "*":
            return lambda resource: key in (resource.get("labels") or {})
        expected = op != "!="
        return lambda resource: ((resource.get("labels") or {}).get(key) == value) == expected
    expected = op != "!="
    return lambda resource: (resource.get("displayName") == value) == expected


def compile_filter(expression: str | None) -> Predicate:
    """A predicate over a resource's JSON for a Vertex list `filter`."""
    if not expression or not expression.strip():
        return lambda _: True
    predicates = [_term(term) for term in re.split(r"\s+AND\s+", expression.strip())]
    return lambda resource: all(predicate(resource) for predicate in predicates)
