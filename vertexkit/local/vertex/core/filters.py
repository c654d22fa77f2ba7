"""The list `filter` of Vertex ML Metadata and TensorBoard, as the SDK writes it.

Predicates joined with AND / OR and grouped with parentheses:
`schema_title="system.ExperimentRun"`, `display_name="x"`, `is_default=true`, `uri="gs://..."`,
`in_context("projects/.../contexts/c")`, `parent_contexts:"projects/.../contexts/p"`. A filter
this grammar cannot read is a 400 naming `filter`, never a silently wider list.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from vertexkit.local.errors import bad_request

Predicate = Callable[[dict[str, Any]], bool]
# A bare value may hold hyphens: the SDK writes `display_name = my-experiment` unquoted
# (`aiplatform.Experiment.list(filter=...)`, google_system/test_experiments.py).
TOKEN = re.compile(r'\s*(\(|\)|"(?:[^"\\]|\\.)*"|,|=|:|!=|[A-Za-z_][A-Za-z0-9_.\-]*|[^\s()",=:]+)')
# Filter names -> the resource's JSON field.
FIELDS = {
    "schema_title": "schemaTitle", "display_name": "displayName", "uri": "uri",
    "is_default": "isDefault", "state": "state", "schema_version": "schemaVersion",
    "parent_contexts": "parentContexts", "name": "name",
}  # fmt: skip
CONTEXTS_KEY = "_contexts"  # where an artifact or execution records the contexts it is in


def tokenize(text: str) -> list[str]:
    tokens, position = [], 0
    while position < len(text.rstrip()):
        match = TOKEN.match(text, position)
        if not match:
            raise bad_request(f"filter: cannot read {text[position:]!r}.")
        tokens.append(match.group(1))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token.upper() != expected):
            raise bad_request(f"filter: expected {expected or 'more'} in {self.text!r}.")
        self.at += 1
        return token

    def parse(self) -> Predicate:
        predicate = self.any_of()
        if self.peek() is not None:
            raise bad_request(f"filter: unexpected {self.peek()!r} in {self.text!r}.")
        return predicate

    def any_of(self) -> Predicate:
        parts = [self.all_of()]
        while (self.peek() or "").upper() == "OR":
            self.take("OR")
            parts.append(self.all_of())
        return lambda resource: any(part(resource) for part in parts)

    def all_of(self) -> Predicate:
        parts = [self.factor()]
        while (self.peek() or "").upper() == "AND":
            self.take("AND")
            parts.append(self.factor())
        return lambda resource: all(part(resource) for part in parts)

    def factor(self) -> Predicate:
        if self.peek() == "(":
            self.take("(")
            inner = self.any_of()
            self.take(")")
            return inner
        name = self.take()
        if name == "in_context":
            self.take("(")
            context = unquote(self.take())
            self.take(")")
            return lambda resource: context in resource.get(CONTEXTS_KEY, [])
        return self.comparison(name)

    def comparison(self, name: str) -> Predicate:
        if name not in FIELDS:
            raise bad_request(f"filter: {name!r} is not a field the local cloud filters on; "
                              f"use {', '.join(sorted(FIELDS))} or in_context(...)")  # fmt: skip
        operator = self.take()
        values = [unquote(self.take())]
        while operator == ":" and self.peek() == ",":
            self.take(",")
            values.append(unquote(self.take()))
        field = FIELDS[name]
        if operator == ":":
            return lambda resource: any(v in as_list(resource.get(field)) for v in values)
        if operator in ("=", "!="):
            wanted = values[0]
            same = lambda resource: as_text(resource.get(field)) == wanted  # noqa: E731
            return same if operator == "=" else (lambda resource: not same(resource))
        raise bad_request(f"filter: operator {operator!r} is not served; use =, != or :")


def unquote(token: str) -> str:
    if token.startswith('"') and token.endswith('"'):
        return token[1:-1].replace('\\"', '"')
    return token


def as_list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [as_text(value)]


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def compile_filter(text: str | None) -> Predicate:
    """A predicate over stored resources; an empty filter keeps everything."""
    if not text or not text.strip():
        return lambda resource: True
    return _Parser(text).parse()
