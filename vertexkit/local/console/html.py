"""A tiny HTML builder that escapes every value it is given unless it is already `Markup`.

Everything the console shows comes from the local cloud's state, and much of that is untrusted
(display names, parameters, artifact metadata, logs): building pages only through `el` means a
value can never become markup by accident.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any


class Markup(str):
    """HTML that is already safe (built by `el`, or written here)."""


def escape(value: Any) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def attribute_name(name: str) -> str:
    """`class_` -> `class`, `data_task` -> `data-task`, `viewBox` stays."""
    return name.rstrip("_").replace("_", "-")


def render_attributes(attrs: dict[str, Any]) -> str:
    parts = []
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        key = attribute_name(name)
        parts.append(f" {key}" if value is True else f' {key}="{escape(value)}"')
    return "".join(parts)


def render_children(children: Iterable[Any]) -> str:
    out = []
    for child in children:
        if child is None:
            continue
        if isinstance(child, (list, tuple)):
            out.append(render_children(child))
        else:
            out.append(escape(child))
    return "".join(out)


VOID_TAGS = frozenset({"br", "hr", "img", "input", "link", "meta"})


def el(tag: str, *children: Any, **attrs: Any) -> Markup:
    """`el("td", value, class_="num")` -> `<td class="num">escaped value</td>`."""
    opening = f"<{tag}{render_attributes(attrs)}>"
    if tag in VOID_TAGS:
        return Markup(opening)
    return Markup(f"{opening}{render_children(children)}</{tag}>")


def fragment(*children: Any) -> Markup:
    return Markup(render_children(children))
