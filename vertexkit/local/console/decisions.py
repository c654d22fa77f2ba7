"""The retraining decisions page: champion vs challenger metric over time, promoted or not.

Read from the BigQuery table `pipelines/retraining.py`'s `record_decision` appends to
(`<project>.vertexkit_decisions.retraining_decisions` unless `?table=` names another), through
the warehouse the local BigQuery serves it from. One chart per model and metric.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from vertexkit.local.bigquery.sql import TableName
from vertexkit.local.console import charts
from vertexkit.local.console.data import link
from vertexkit.local.console.html import Markup, el
from vertexkit.local.console.pages import error_page, layout, resource_url, table
from vertexkit.local.errors import ApiError
from vertexkit.runtime.bigquery import parse_table_name
from vertexkit.runtime.retraining import (
    DECISION_FIELDS,
    DECISIONS_DATASET,
    DECISIONS_TABLE,
    SKIPPED,
    verdict,
)
from vertexkit.specs import SpecError

if TYPE_CHECKING:
    from vertexkit.local.console.sources import ConsoleSources

Row = dict[str, Any]
MAX_DECISIONS = 1000
COLUMNS = [name for name, _ in DECISION_FIELDS]


def table_name(project: str, value: str) -> TableName:
    """`?table=` (PROJECT.DATASET.TABLE or DATASET.TABLE), by default the pipeline's own."""
    default = f"{project}.{DECISIONS_DATASET}.{DECISIONS_TABLE}"
    return TableName(*parse_table_name(value or default, project, "table").split("."))


def read_decisions(warehouse: Any, name: TableName) -> list[Row]:
    """The newest MAX_DECISIONS decisions, oldest first; [] when none was recorded yet."""
    if not has_decision_columns(warehouse, name):
        return []
    cur = warehouse.cursor()  # its own cursor: the checks above leave theirs with a result
    try:
        newest = cur.sql(
            f"SELECT * FROM {name.sql} ORDER BY run_time DESC LIMIT {MAX_DECISIONS}"
        ).to_arrow_table()
    finally:
        cur.close()
    return newest.to_pylist()[::-1]


def has_decision_columns(warehouse: Any, name: TableName) -> bool:
    """False when the table does not exist yet; raises when it is not a decision table."""
    cur = warehouse.cursor()
    try:
        if warehouse.table_kind(cur, name) is None:
            return False
        present = {field["name"] for field in warehouse.table_schema(cur, name)}
    finally:
        cur.close()
    missing = [column for column in COLUMNS if column not in present]
    if missing:
        raise SpecError("table", f"{name.bigquery_id} has no column {missing[0]!r}")
    return True


def utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment


def by_model(rows: list[Row]) -> dict[tuple[str, str], list[Row]]:
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row["model_display_name"] or "", row["metric"] or ""), []).append(row)
    return groups


def chart_points(rows: list[Row]) -> list[charts.Decision]:
    return [
        charts.Decision(
            at=utc(row["run_time"]),
            champion=row["champion_metric"],
            challenger=row["challenger_metric"],
            promoted=bool(row["promoted"]),
            label=f"{utc(row['run_time']):%Y-%m-%d %H:%M} · {row['reason'] or ''}",
        )
        for row in rows
        if row["run_time"] is not None and verdict(row) != SKIPPED  # a skip has no metric
    ]


def decision_rows(rows: list[Row]) -> list[list[Any]]:
    return [
        [
            f"{utc(row['run_time']):%Y-%m-%d %H:%M:%S}" if row["run_time"] else "",
            version_link(row["champion_version"]),
            row["champion_metric"],
            version_link(row["challenger_version"]),
            row["challenger_metric"],
            decision_cell(row),
            row["reason"],
        ]
        for row in reversed(rows)  # newest first, as `vertexkit decisions list` shows them
    ]


def decision_cell(row: Row) -> Any:
    """promoted (bold), kept the champion, or skipped (no challenger: nothing to retrain on)."""
    said = verdict(row)
    if said == "promoted":
        return el("strong", said)
    return el("em", said, class_="skipped") if said == SKIPPED else said


def version_link(version: str | None) -> Any:
    """`projects/.../models/ID@V` links to the model's page."""
    if not version:
        return ""
    return el("a", version.rsplit("/", 1)[-1], href=resource_url(version.split("@", 1)[0]))


def model_sections(rows: list[Row]) -> list[Markup]:
    sections = []
    for (model, metric), group in by_model(rows).items():
        sections += [
            el("h2", model or "(no model name)", " ", el("small", metric)),
            charts.decisions_chart(chart_points(group)),
            table(
                ["run time", "champion", metric, "challenger", metric, "decision", "reason"],
                decision_rows(group),
                class_="decisions",
            ),
        ]
    return sections


def decisions_page(sources: ConsoleSources, query: dict[str, str]) -> tuple[Markup, int]:
    """The page and its status: 400 for a `table` that names no decision table."""
    try:
        name = table_name(sources.project, query.get("table", ""))
        rows = read_decisions(sources.warehouse(), name)
    except SpecError as error:
        return error_page(400, str(error)), 400
    except ApiError as error:
        return error_page(error.code, error.message), error.code
    where = link(
        "bigquery", name.bigquery_id, project=name.project, dataset=name.dataset, table=name.table
    )
    source = el("p", "From ", where, f" ({len(rows)} decisions).")
    if not rows:
        empty = "No decisions recorded yet: the retraining pipeline writes one per run."
        markup = layout("Retraining decisions", "schedules", source, el("p", empty, class_="empty"))
        return markup, 200
    return layout("Retraining decisions", "schedules", source, model_sections(rows)), 200
