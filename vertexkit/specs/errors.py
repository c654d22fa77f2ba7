"""The one error every spec check raises, and its not-served-here kind."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class SpecError(ValueError):
    """A spec Vertex would reject: `.field` is the dotted camelCase path, e.g.
    `workerPoolSpecs[0].machineSpec.acceleratorType`; the message names the allowed values."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.reason = message


class NotServedLocally(SpecError):
    """A spec Vertex accepts that the local cloud cannot carry out (a dataset kind it does not
    keep): answered 501 UNIMPLEMENTED with the reason, never taken as a 400."""


def join_path(prefix: str, part: str | int) -> str:
    """`join_path("a", "b") == "a.b"`, `join_path("a", 0) == "a[0]"`."""
    if isinstance(part, int):
        return f"{prefix}[{part}]"
    return f"{prefix}.{part}" if prefix else part


def allowed(values: Iterable[Any]) -> str:
    """The allowed values as a message lists them: `a, b, c`. Here, beside the error, so a
    check that needs no model (`naming`) does not import pydantic."""
    return ", ".join(str(value) for value in values)
