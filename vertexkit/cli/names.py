"""A resource addressed as Vertex AI users address it on the command line: its resource name,
its ID, or its display name where that is unique (`vertexkit schedule pause training`).

Display names are not unique on Vertex AI (two schedules may both be `training`), so a display
name that several resources share is refused, listing their IDs, rather than picking one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vertexkit.cli.errors import UserError


def last_part(resource_name: str) -> str:
    return resource_name.rstrip("/").rsplit("/", 1)[-1]


def find_by_name(
    value: str, items: Iterable[dict[str, Any]], what: str, param: str
) -> dict[str, Any] | None:
    """The item (`name`, `displayName`) whose resource name, ID or unique display name is
    `value`; None when none is. A display name shared by several is a UserError naming `param`
    and listing their IDs. An ID wins over a display name that happens to look like one."""
    items = list(items)
    for key in (lambda item: item["name"], lambda item: last_part(item["name"])):
        found = [item for item in items if key(item) == value]
        if found:
            return found[0]
    named = [item for item in items if item.get("displayName") == value]
    if len(named) > 1:
        ids = ", ".join(last_part(item["name"]) for item in named)
        raise UserError(
            param, f"{len(named)} {what}s are named {value!r}: give one of their IDs ({ids})"
        )
    return named[0] if named else None
