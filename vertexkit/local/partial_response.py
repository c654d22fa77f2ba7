"""Google's `fields` system parameter: a partial response, on every service of the local cloud.

Each discovery document the local cloud serves (aiplatform v1, bigquery v2, storage v1) lists
`fields` among its top-level `parameters`: "Selector specifying which fields to include in a
partial response." The selector, as Google describes it (Cloud Storage JSON API overview,
"Partial response", https://cloud.google.com/storage/docs/json_api; Drive API, "Return specific
fields", https://developers.google.com/drive/api/guides/fields-parameter):

- `a,b` selects several fields (spaces around a name are allowed: Drive's own example is
  `'name, mimeType'`);
- `a/b` selects field `b` nested in field `a`: `a` is answered holding only `b`;
- `a(b,c)` is a sub-selection, fields `b` and `c` of `a` (`items(id)` is `items/id`); they nest;
- `*` is every field at its level (`permissions/permissionDetails/*`);
- a selection on an array applies to each of its elements (`permissions(id)`: "only the
  permission ID for each element in the permissions array").

What an answer keeps is the union of what each path selects (`*,a/b` is everything).

Decided here, where Google's pages say nothing:
- A selector that does not parse (an empty name, `a/`, `a()`, an unbalanced parenthesis, `*`
  inside a name) is a 400 INVALID_ARGUMENT, `Invalid field selection <the selector>`. Google
  answers a selection it refuses with a 400 "Invalid field selection <name>" (Drive's guide:
  "Invalid field selection canAddChildren"; Calendar in googleapis/google-api-dotnet-client#1444:
  "Invalid field selection pagetoken"), for a name its schema lacks. No public record of its
  exact words for a syntax error was found, so that message's shape is borrowed, naming the
  whole selector.
- A name the answer does not have selects nothing there. Google answers nothing for a field
  its schema has but the resource leaves unset, and a 400 for a name its schema lacks; without
  the schemas the local cloud cannot tell the two apart, and answers as for the unset field.
- An object selected into stays, even with nothing selected in it (`{}`), as a set message
  field stays set; a scalar selected into (`name/x`), or an array of scalars, is left out.
- An empty `fields` is the whole answer, as `*` is.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any, Union

from starlette.responses import JSONResponse, Response

from vertexkit.local.errors import ApiError

FIELDS = "fields"  # the query parameter
WILDCARD = "*"
SPECIAL = ",/()"

# What a selector selects of an object: each named field (or `*`, every field) with what it
# selects of that field's value, None for all of it. Parsed once per selector text and shared:
# never changed after parsing.
Selection = dict[str, Union["Selection", None]]
_NOTHING = object()  # what a scalar selected into answers: no field at all


def invalid_selection(selector: str) -> ApiError:
    return ApiError(400, f"Invalid field selection {selector}", reason="invalidParameter")


def requested(query: Mapping[str, str]) -> Selection | None:
    """The request's selection (its `fields` query parameter), None for the whole answer;
    a 400 for a selector that does not parse. Read before the handler runs, so a malformed
    selector changes nothing."""
    text = query.get(FIELDS)
    return None if text is None else parse(text)


def without_fields(query: Mapping[str, str]) -> dict[str, str]:
    """The query a handler reads: `fields` is the system's, never the method's."""
    return {key: value for key, value in query.items() if key != FIELDS}


@functools.lru_cache(maxsize=256)
def parse(text: str) -> Selection | None:
    """The selector as a tree; None for the whole answer (empty, or `*` alone)."""
    if not text.strip():
        return None
    parser = _Parser(text)
    tree = parser.selections()
    if parser.peek():  # a `)` with no `(`
        raise invalid_selection(text)
    return None if tree == {WILDCARD: None} else tree


def select(value: Any, selection: Selection | None, keep: str | None = None) -> Any:
    """The part of `value` (an answer's JSON) that `selection` selects; with `keep`, that key
    too in every object selected into (Vertex's `@type`, which says an object is an Any until
    its names are written: `vertex.router`)."""
    if selection is None:
        return value
    picked = _pick(value, selection, keep)
    return {} if picked is _NOTHING else picked


def trimmed(response: Response, selection: Selection | None) -> Response:
    """A JSON answer already rendered (Cloud Storage's `JSONResponse`s), with only what
    `selection` selects; errors and other answers as they are."""
    if selection is None or not isinstance(response, JSONResponse):
        return response
    if not 200 <= response.status_code < 300:
        return response
    response.body = response.render(select(json.loads(response.body), selection))
    response.headers["content-length"] = str(len(response.body))
    return response


def _pick(value: Any, selection: Selection, keep: str | None) -> Any:
    if isinstance(value, dict):
        every = selection.get(WILDCARD, _NOTHING)
        picked: dict[str, Any] = {}
        for key, item in value.items():
            sub: Any
            if key in selection:
                sub = selection[key] if every is _NOTHING else _union(selection[key], every)
            elif every is not _NOTHING or key == keep:
                sub = None if every is _NOTHING else every
            else:
                continue
            chosen = item if sub is None else _pick(item, sub, keep)
            if chosen is not _NOTHING:
                picked[key] = chosen
        return picked
    if isinstance(value, list):
        elements = [chosen for chosen in (_pick(item, selection, keep) for item in value)
                    if chosen is not _NOTHING]  # fmt: skip
        return _NOTHING if value and not elements else elements
    return _NOTHING


def _union(first: Selection | None, second: Any) -> Selection | None:
    if first is None or second is None:
        return None
    merged: Selection = dict(first)
    for key, sub in second.items():
        _merge(merged, key, sub)
    return merged


def _merge(tree: Selection, key: str, sub: Selection | None) -> None:
    """Adds `key` selecting `sub` to `tree`: the union of both selections of `key`."""
    if key not in tree:
        tree[key] = sub
    elif tree[key] is not None:
        tree[key] = _union(tree[key], sub)


class _Parser:
    """selections := item (',' item)* ; item := name ('/' name)* ['(' selections ')']"""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def peek(self) -> str:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1
        return self.text[self.at] if self.at < len(self.text) else ""

    def selections(self) -> Selection:
        tree: Selection = {}
        self.item(tree)
        while self.peek() == ",":
            self.at += 1
            self.item(tree)
        return tree

    def item(self, tree: Selection) -> None:
        path = [self.name()]
        while self.peek() == "/":
            self.at += 1
            path.append(self.name())
        sub: Selection | None = None
        if self.peek() == "(":
            self.at += 1
            sub = self.selections()
            if self.peek() != ")":
                raise invalid_selection(self.text)
            self.at += 1
        for name in path[:-1]:  # `a/b/c(d)`: a holds b, b holds c
            if tree.get(name, {}) is None:
                return  # all of `a` is selected already
            tree = tree.setdefault(name, {})  # type: ignore[assignment]
        _merge(tree, path[-1], sub)

    def name(self) -> str:
        self.peek()
        start = self.at
        while self.at < len(self.text) and self.text[self.at] not in SPECIAL:
            self.at += 1
        name = self.text[start : self.at].strip()
        if not name or any(c.isspace() for c in name) or (WILDCARD in name and name != WILDCARD):
            raise invalid_selection(self.text)
        return name
