"""`vertexkit decisions list`: the retraining pipeline's decision history (a BigQuery table)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from vertexkit.cli.cloud import cloud_for_command
from vertexkit.cli.errors import plain_console
from vertexkit.cli.options import HomeOption, ProjectOption

console = plain_console()
decisions_app = typer.Typer(no_args_is_help=True, help="Retraining decisions (champion vs new).")

DEFAULT_PROJECT = "local-project"  # only to check --table's shape before a cloud is chosen
COLUMNS = ("run time", "model", "data window", "champion", "challenger", "promoted", "reason")


def _version(row: dict[str, Any], role: str) -> str:
    version, value = row[f"{role}_version"], row[f"{role}_metric"]
    if not version:
        return "-"
    short = str(version).rsplit("/", 1)[-1]  # ID@VERSION
    return short if value is None else f"{short} {row['metric']}={value:.4f}"


def _cells(row: dict[str, Any]) -> list[str]:
    from vertexkit.runtime.retraining import SKIPPED, verdict

    start = row["watermark_used"]
    end = row["new_watermark"]
    window = f"({str(start)[:16] if start else 'start'}, {str(end)[:16] if end else 'start'}]"
    return [
        str(row["run_time"])[:19],
        str(row["model_display_name"]),
        window,
        _version(row, "champion"),
        _version(row, "challenger"),
        "skipped" if verdict(row) == SKIPPED else "yes" if row["promoted"] else "no",
        str(row["reason"]),
    ]


def _checked_table(value: str) -> str:
    """`--table` is a table name (checked offline; the project is filled in later)."""
    from vertexkit.runtime.bigquery import parse_table_name

    if value:
        parse_table_name(value, DEFAULT_PROJECT, "--table")
    return value


@decisions_app.command("list")
def list_decisions(
    model: Annotated[str, typer.Option(help="Only this model display name")] = "",
    table: Annotated[
        str,
        typer.Option(
            help="PROJECT.DATASET.TABLE (default: vertexkit_decisions)", callback=_checked_table
        ),
    ] = "",
    limit: Annotated[int, typer.Option(help="Newest N decisions", min=1)] = 20,
    project: ProjectOption = None,
    home: HomeOption = None,
) -> None:
    """The newest retraining decisions: window, both versions and metrics, promoted, why."""
    from vertexkit.runtime.retraining import list_decisions as read_decisions

    with cloud_for_command(project, None, home) as context:
        rows = read_decisions(context, table, model, limit)
    if not rows:
        console.print("no retraining decisions recorded yet")
        return
    view = Table(*COLUMNS)
    for row in rows:
        view.add_row(*_cells(row))
    console.print(view)
