"""Base class of every spec model: snake_case in Python, Vertex REST camelCase on the wire.

Pydantic checks shapes and types; each model's `check(path)` adds the rules Vertex applies
across fields. Both kinds of failure surface as one `SpecError` naming the camelCase path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from enum import IntEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel
from typing_extensions import Self

from vertexkit.specs.errors import SpecError, allowed, join_path


def error_path(prefix: str, location: tuple[int | str, ...]) -> str:
    path = prefix
    for part in location:
        if isinstance(part, str) and part.startswith(("function-", "literal[", "union[")):
            continue  # pydantic's internal validator names, not fields
        path = join_path(path, part if isinstance(part, int) else to_camel(str(part)))
    return path


@contextmanager
def spec_errors(prefix: str = "") -> Iterator[None]:
    """Turns pydantic's ValidationError into a SpecError for its first problem."""
    try:
        yield
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = error_path(prefix, tuple(first["loc"]))
        inner = (first.get("ctx") or {}).get("error")
        if isinstance(inner, SpecError):
            # A nested model's own check failed while its parent was being validated.
            field = join_path(where, inner.field) if inner.field else where
            raise SpecError(field, inner.reason) from None
        message = re.sub(r"^(Value|Assertion) error, ", "", first["msg"])
        if first["type"] == "extra_forbidden":
            message = "unknown field"
        elif first["type"] not in ("value_error", "assertion_error"):
            message = f"{message} (got {first.get('input')!r})"
        raise SpecError(where, message) from None


_nesting: ContextVar[int] = ContextVar("spec_nesting", default=0)


@contextmanager
def _validating(cls: type) -> Iterator[None]:
    """Names a whole-spec error after the outermost spec; nested ones stay relative."""
    depth = _nesting.get()
    token = _nesting.set(depth + 1)
    try:
        yield
    except SpecError as exc:
        if exc.field or depth:
            raise
        raise SpecError(to_camel_name(cls), exc.reason) from None
    finally:
        _nesting.reset(token)


class SpecModel(BaseModel):
    """A Vertex resource spec; build it from snake_case kwargs or with `from_api(json)`."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_assignment=False,
    )

    def __init__(self, **data: Any) -> None:
        # Pydantic also runs this __init__ for nested specs; those are checked by their parent,
        # which knows their path and context (a machine for training or for serving).
        outermost = _nesting.get() == 0
        with _validating(type(self)):
            with spec_errors():
                super().__init__(**data)
            if outermost:
                self.check_standalone()

    @classmethod
    def from_api(cls, data: Mapping[str, Any] | None, path: str = "") -> Self:
        """Parses Vertex REST JSON (camelCase, enums as names or numbers) and checks it."""
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise SpecError(path or to_camel_name(cls), f"must be a JSON object, got {data!r}")
        with _validating(cls):
            with spec_errors(path):
                model = cls.model_validate(dict(data))
            model.check(path)
        return model

    def to_api(self) -> dict[str, Any]:
        """The camelCase REST JSON Vertex accepts (unset fields omitted)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def check(self, path: str) -> None:
        """Cross-field rules; `path` is where this spec sits in the request."""

    def check_standalone(self) -> None:
        """The check run when the spec is built on its own from Python kwargs."""
        self.check("")


def to_camel_name(cls: type) -> str:
    """`WorkerPoolSpec` -> `workerPoolSpec`: the field name for an error about a whole spec."""
    return cls.__name__[:1].lower() + cls.__name__[1:]


def enum_name(value: Any, enum_type: type[IntEnum], field: str = "") -> Any:
    """Requests sent with `enum-encoding=int` carry enum numbers; map them to names."""
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    try:
        return enum_type(value).name
    except ValueError:
        names = allowed(member.name for member in enum_type)
        raise ValueError(f"unknown {field or 'enum'} number {value}; allowed: {names}") from None
