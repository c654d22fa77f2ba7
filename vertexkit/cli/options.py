"""The options several verbs share, each checked when it is parsed (before the verb runs).

A bad `--home`, `--project` or `--region` is refused with the option's name before any state
directory is made or any client is built; the rules are `vertexkit.specs`' own.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from vertexkit.cli.errors import UserError
from vertexkit.local_up import HOME_ENV
from vertexkit.specs import SpecError
from vertexkit.specs.naming import (
    parse_resource_name,
    validate_display_name,
    validate_project_id,
    validate_region,
)


def directory_problem(path: Path) -> str | None:
    """Why `path` cannot be (or become) a directory: it, or the first ancestor that exists,
    is not one. None when it can."""
    absolute = path.expanduser().absolute()
    existing = next((p for p in (absolute, *absolute.parents) if p.exists()), None)
    if existing is None or existing.is_dir():
        return None
    if existing == absolute:
        return f"{absolute} is a file, not a directory"
    return f"{existing} (in {absolute}) is a file, not a directory"


def checked_directory(value: Path | None) -> Path | None:
    """A typer callback: the option names a directory, or a path where one can be made."""
    problem = directory_problem(value) if value is not None else None
    if problem:
        raise typer.BadParameter(problem)
    return value


def _checked_home(value: Path | None) -> Path | None:
    """`--home`, or else $VERTEXKIT_HOME when it is set: either must be a directory."""
    if value is None and os.environ.get(HOME_ENV):
        problem = directory_problem(Path(os.environ[HOME_ENV]))
        if problem:
            raise UserError(HOME_ENV, problem)
    return checked_directory(value)


def spec_checked(check: Callable[[str], object]) -> Callable[[str | None], str | None]:
    """A typer callback that runs a `vertexkit.specs` rule on the value (when one is given)."""

    def callback(value: str | None) -> str | None:
        if value is None:
            return value
        try:
            check(value)
        except SpecError as exc:
            raise typer.BadParameter(exc.reason) from None
        return value

    return callback


def resource_id_or_name(collection: str) -> Callable[[str], str]:
    """A typer callback: an ID, or `projects/P/locations/L/<collection>/ID`, checked offline."""

    def callback(value: str) -> str:
        if value.startswith("projects/"):
            try:
                parse_resource_name(value, collection)
            except SpecError as exc:
                raise typer.BadParameter(exc.reason) from None
        elif not value or "/" in value:
            raise typer.BadParameter(
                f"{value!r} is neither an ID nor projects/P/locations/L/{collection}/ID"
            )
        return value

    return callback


def check_display_names(params: dict[str, object]) -> None:
    """`--param *display_name=...` values follow Vertex's display-name rule (1..128 chars)."""
    for name, value in params.items():
        if name.endswith("display_name"):
            validate_display_name(value, field=f"--param {name}")


HomeOption = Annotated[
    Path | None,
    typer.Option(
        help="Local cloud state directory (default: $VERTEXKIT_HOME, else .vertexkit)",
        callback=_checked_home,
    ),
]
ProjectOption = Annotated[
    str | None,
    typer.Option(
        help="GCP project (Vertex AI; default: the local cloud)",
        callback=spec_checked(validate_project_id),
    ),
]
RegionOption = Annotated[
    str | None,
    typer.Option(help="Vertex AI region", callback=spec_checked(validate_region)),
]
