"""Retraining on the data since a watermark, with a decision history in BigQuery.

The window: rows of `source_table` whose `timestamp_column` lies in (watermark, new watermark],
where the new watermark is the newest timestamp at run time (or `window_end`). An empty watermark
continues from the last run recorded for this model and source in the decision table; with no
history, the window is all the data.

The test window is a FIXED holdout: rows whose split key hashes (FARM_FINGERPRINT, the same
predicate `bigquery_export_dataset` uses) into the test fraction, over ALL history up to the new
watermark. Train and validation come from the new window only (or all history with
`include_history`) and never contain a holdout row, so the champion and the challenger are scored
on identical rows no model was trained on.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from vertexkit.runtime.bigquery import (
    ExportResult,
    export_dataset,
    parse_table_name,
    run_query_job,
    split_predicates,
)
from vertexkit.specs import SpecError

if TYPE_CHECKING:
    from vertexkit.context import CloudContext

log = logging.getLogger(__name__)

DECISIONS_DATASET = "vertexkit_decisions"
DECISIONS_TABLE = "retraining_decisions"
DEMO_DATASET = "vertexkit_demo"
DEMO_TABLE = "penguins_events"
DEMO_START = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
DEMO_DAYS = 10
PENGUINS = "bigquery-public-data.ml_datasets.penguins"
FRACTIONS = (0.8, 0.1, 0.1)
_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,299}$")

DECISION_FIELDS: list[tuple[str, str]] = [
    ("run_time", "TIMESTAMP"),
    ("model_display_name", "STRING"),
    ("source_table", "STRING"),
    ("watermark_used", "TIMESTAMP"),
    ("new_watermark", "TIMESTAMP"),
    ("train_rows", "INT64"),
    ("test_rows", "INT64"),
    ("metric", "STRING"),
    ("champion_version", "STRING"),
    ("champion_metric", "FLOAT64"),
    ("challenger_version", "STRING"),
    ("challenger_metric", "FLOAT64"),
    ("promoted", "BOOL"),
    ("reason", "STRING"),
]


# -- timestamps and names --------------------------------------------------------------------
def parse_timestamp(value: str, field_name: str) -> dt.datetime | None:
    """ISO 8601 (`2024-01-05`, `2024-01-05T12:00:00Z`, ...) as UTC; empty means none."""
    if not (value or "").strip():
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip())
    except ValueError as error:
        raise SpecError(
            field_name, f"{value!r} is not an ISO 8601 timestamp (e.g. 2024-01-05T00:00:00Z)"
        ) from error
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    return parsed.astimezone(dt.timezone.utc)


def iso(value: dt.datetime | None) -> str:
    return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z") if value else ""


def sql_timestamp(value: dt.datetime) -> str:
    """A TIMESTAMP literal; built from a parsed datetime, so no user text reaches the SQL."""
    return f"TIMESTAMP '{value.astimezone(dt.timezone.utc).strftime('%Y-%m-%d %H:%M:%S.%f')}+00'"


def check_column(value: str, field_name: str) -> str:
    if not _COLUMN.match(value or ""):
        raise SpecError(field_name, f"{value!r} is not a column name (letters, digits, _)")
    return value


def decisions_table_name(ctx: CloudContext, table: str = "") -> str:
    default = f"{ctx.project}.{DECISIONS_DATASET}.{DECISIONS_TABLE}"
    return parse_table_name(table or default, ctx.project, "decisions_table")


def _rows(ctx: CloudContext, sql: str, params: list[Any] | None = None) -> list[Any]:
    from google.cloud import bigquery

    config = bigquery.QueryJobConfig(query_parameters=params or [])
    return list(ctx.bigquery_client().query(sql, job_config=config).result())


# -- the demo source -------------------------------------------------------------------------
def ensure_demo_table(ctx: CloudContext, location: str | None = None) -> str:
    """`<project>.vertexkit_demo.penguins_events`: penguins with `row_id` and `ingested_at`.

    The public penguins table has no time column, so the demo gives each row a deterministic
    arrival time spread over ten days from 2024-01-01 (FARM_FINGERPRINT of the row). Created once.
    """
    from google.api_core.exceptions import NotFound

    table = f"{ctx.project}.{DEMO_DATASET}.{DEMO_TABLE}"
    try:
        ctx.bigquery_client().get_table(table)
        return table
    except NotFound:
        pass
    query = (
        "SELECT ROW_NUMBER() OVER (ORDER BY TO_JSON_STRING(p)) AS row_id, TIMESTAMP_ADD("
        f"{sql_timestamp(DEMO_START)}, INTERVAL MOD(ABS(FARM_FINGERPRINT(TO_JSON_STRING(p))), "
        f"{DEMO_DAYS * 24}) HOUR) AS ingested_at, p.* FROM `{PENGUINS}` AS p "
        "WHERE p.body_mass_g IS NOT NULL"
    )
    ensure_dataset(ctx, f"{ctx.project}.{DEMO_DATASET}", location)
    run_query_job(ctx, query, destination=table, location=location)
    return table


def ensure_dataset(ctx: CloudContext, dataset: str, location: str | None) -> None:
    from google.cloud import bigquery

    spec = bigquery.Dataset(dataset)
    if location:
        spec.location = location
    ctx.bigquery_client().create_dataset(spec, exists_ok=True)


# -- the window ------------------------------------------------------------------------------
@dataclass(frozen=True)
class WindowSpec:
    source_table: str
    timestamp_column: str
    split_key_column: str = ""
    watermark: str = ""
    window_end: str = ""
    include_history: bool = False
    min_new_rows: int = 20
    model_display_name: str = ""
    decisions_table: str = ""


@dataclass(frozen=True)
class Window:
    source_table: str
    watermark_used: dt.datetime | None
    new_watermark: dt.datetime | None
    new_rows: int
    query: str
    retrain: bool = True
    reason: str = ""


def last_watermark(
    ctx: CloudContext, decisions_table: str, model_display_name: str, source_table: str
) -> dt.datetime | None:
    """The new watermark of the last decision recorded for this model and source, if any."""
    from google.api_core.exceptions import NotFound
    from google.cloud import bigquery

    table = decisions_table_name(ctx, decisions_table)
    try:
        rows = _rows(
            ctx,
            f"SELECT new_watermark FROM `{table}` WHERE model_display_name = @model "
            "AND source_table = @source ORDER BY run_time DESC LIMIT 1",
            [
                bigquery.ScalarQueryParameter("model", "STRING", model_display_name),
                bigquery.ScalarQueryParameter("source", "STRING", source_table),
            ],
        )
    except NotFound:
        return None
    return rows[0][0] if rows else None


def _key_expression(split_key_column: str) -> str:
    if split_key_column:
        return f"CAST(src.`{split_key_column}` AS STRING)"
    return "TO_JSON_STRING(src)"


def plan_window(ctx: CloudContext, spec: WindowSpec) -> Window:
    """Resolves the watermarks and builds the query whose split gives train/validation/test."""
    column = check_column(spec.timestamp_column, "timestamp_column")
    if spec.split_key_column:
        check_column(spec.split_key_column, "split_key_column")
    if spec.min_new_rows < 1:
        raise SpecError("min_new_rows", f"must be >= 1, got {spec.min_new_rows}")
    source = parse_table_name(spec.source_table, ctx.project, "source_table")
    watermark = parse_timestamp(spec.watermark, "watermark")
    end = parse_timestamp(spec.window_end, "window_end")
    if watermark is None:
        watermark = last_watermark(ctx, spec.decisions_table, spec.model_display_name, source)
    if watermark and end and end <= watermark:
        raise SpecError("window_end", f"{iso(end)} is not after the watermark {iso(watermark)}")
    after = f"src.`{column}` > {sql_timestamp(watermark)}" if watermark else "TRUE"
    until = f"src.`{column}` <= {sql_timestamp(end)}" if end else "TRUE"
    stats = _rows(
        ctx,
        f"SELECT COUNT(*), MAX(src.`{column}`) FROM `{source}` AS src WHERE {after} AND {until}",
    )
    new_rows, newest = int(stats[0][0]), stats[0][1]
    if new_rows < spec.min_new_rows:
        # Not an error: the run is skipped, and the next one continues from the same watermark
        # (the few rows seen here are retrained on once enough have arrived).
        return Window(
            source,
            watermark,
            watermark,
            new_rows,
            "",
            False,
            skip_reason(new_rows, watermark, spec),
        )
    holdout = split_predicates(_key_expression(spec.split_key_column), FRACTIONS)["test"]
    window = "TRUE" if spec.include_history else after
    query = (
        f"SELECT src.* FROM `{source}` AS src WHERE src.`{column}` <= {sql_timestamp(newest)} "
        f"AND (({window}) OR ({holdout}))"
    )
    return Window(source, watermark, newest, new_rows, query, True, f"{new_rows} new rows")


def skip_reason(new_rows: int, watermark: dt.datetime | None, spec: WindowSpec) -> str:
    """Why a window is not retrained on: `no new rows since 2024-01-10T00:00:00Z`, ..."""
    since = f"since {iso(watermark)}" if watermark else "in the source"
    if new_rows == 0:
        return f"no new rows {since}"
    return f"{new_rows} new rows {since}, fewer than min_new_rows={spec.min_new_rows}"


def export_window(
    ctx: CloudContext,
    spec: WindowSpec,
    gcs_prefix: str,
    location: str | None = None,
    gcp_resources_path: str | None = None,
) -> tuple[Window, ExportResult | None]:
    """The window's train/validation splits and the fixed holdout, exported to Cloud Storage.

    One export with the standard FARM_FINGERPRINT split: holdout rows hash into `test`, so the
    query's other rows (the window) land in train/validation only. A window with too few new
    rows (`window.retrain` false, `window.reason` says why) exports nothing: (window, None).
    """
    if not spec.source_table:
        spec = WindowSpec(**{**asdict(spec), "source_table": ensure_demo_table(ctx, location)})
    window = plan_window(ctx, spec)
    if not window.retrain:
        log.info("skipped: %s", window.reason)
        return window, None
    log.info(
        "window (%s, %s]: %d new rows",
        iso(window.watermark_used) or "-inf",
        iso(window.new_watermark),
        window.new_rows,
    )
    result = export_dataset(
        ctx,
        gcs_prefix,
        query=window.query,
        split_key_column=spec.split_key_column or None,
        fractions=FRACTIONS,
        location=location,
        gcp_resources_path=gcp_resources_path,
    )
    if result.splits["test"].rows == 0:
        raise SpecError("source_table", f"the holdout of {window.source_table} has no rows")
    return window, result


# -- the champion on the same window ---------------------------------------------------------
def evaluate_champion(
    ctx: CloudContext,
    model_display_name: str,
    test_data_uri: str,
    label_column: str,
    task: str = "classification",
    gcp_resources: str | None = None,
) -> tuple[str, dict[str, float]]:
    """Scores the model's `default` version on the test window (imported as its evaluation).

    Returns ("", {}) when no model has this display name yet.
    """
    from vertexkit.runtime.evaluation import evaluate_model

    champion = serving_version(ctx, model_display_name)
    if not champion:
        return "", {}
    evaluation, _ = evaluate_model(
        ctx, champion, test_data_uri, label_column, task, gcp_resources=gcp_resources
    )
    return champion, evaluation.metrics


def serving_version(ctx: CloudContext, model_display_name: str) -> str:
    """`projects/.../models/ID@VERSION` of the model's `default` version; "" when none."""
    from vertexkit.runtime.models import DEFAULT_ALIAS, find_model_by_display_name

    model_name = find_model_by_display_name(ctx, model_display_name) if model_display_name else None
    if model_name is None:
        return ""
    version = ctx.model_client().get_model(name=f"{model_name}@{DEFAULT_ALIAS}").version_id
    return f"{model_name}@{version}"


# -- the decision history --------------------------------------------------------------------
@dataclass(frozen=True)
class Decision:
    model_display_name: str
    source_table: str
    watermark_used: str
    new_watermark: str
    train_rows: int
    test_rows: int
    metric: str
    champion_version: str
    champion_metric: float | None
    challenger_version: str
    challenger_metric: float | None
    promoted: bool
    reason: str
    run_time: str = ""


def decision_from_registry(
    ctx: CloudContext, challenger: str, champion: str, metric: str, **fields: Any
) -> Decision:
    """Both versions' metric as compare_models read it (their newest evaluations)."""
    from vertexkit.runtime.models import evaluation_metrics, metric_value

    # compare_models names the challenger itself as champion when there was none.
    champion = "" if champion in ("", challenger) else champion
    champion_value = metric_value(evaluation_metrics(ctx, champion), metric) if champion else None
    return Decision(
        metric=metric,
        champion_version=champion,
        champion_metric=champion_value,
        challenger_version=challenger,
        challenger_metric=metric_value(evaluation_metrics(ctx, challenger), metric),
        **fields,
    )


SKIPPED = "skipped"


def skipped_decision(
    ctx: CloudContext,
    model_display_name: str,
    source_table: str,
    watermark_used: str,
    reason: str,
    metric: str = "",
) -> Decision:
    """A run that did not retrain: no challenger, the serving version kept as it is.

    Its new watermark is the one it used, so the next run (empty watermark) reads the same
    window again, with whatever arrived since.
    """
    return Decision(
        model_display_name=model_display_name,
        source_table=source_table,
        watermark_used=watermark_used,
        new_watermark=watermark_used,
        train_rows=0,  # nothing was trained; the reason counts the rows that were seen
        test_rows=0,
        metric=metric,
        champion_version=serving_version(ctx, model_display_name),
        champion_metric=None,
        challenger_version="",
        challenger_metric=None,
        promoted=False,
        reason=reason,
        run_time=iso(dt.datetime.now(dt.timezone.utc)),
    )


def verdict(row: dict[str, Any]) -> str:
    """A decision row as a user reads it: promoted, kept the champion, or skipped (no
    challenger: the run had nothing to retrain on)."""
    if not row.get("challenger_version"):
        return SKIPPED
    return "promoted" if row.get("promoted") else "kept the champion"


def record_decision(
    ctx: CloudContext,
    decision: Decision,
    decisions_table: str = "",
    location: str | None = None,
    gcp_resources_path: str | None = None,
) -> str:
    """Appends one row to the decision table (created with its schema on first use)."""
    from google.cloud import bigquery

    table = decisions_table_name(ctx, decisions_table)
    ensure_dataset(ctx, table.rsplit(".", 1)[0], location)
    schema = [bigquery.SchemaField(name, kind) for name, kind in DECISION_FIELDS]
    ctx.bigquery_client().create_table(bigquery.Table(table, schema=schema), exists_ok=True)
    values = asdict(decision)
    values["run_time"] = values["run_time"] or iso(dt.datetime.now(dt.timezone.utc))
    for name in ("watermark_used", "new_watermark", "champion_version", "challenger_version"):
        values[name] = values[name] or None  # NULL, not "", when there was none
    # Typed CASTs: a NULL parameter alone has no type.
    select = ", ".join(f"CAST(@{name} AS {kind}) AS {name}" for name, kind in DECISION_FIELDS)
    params = {name: {"type": kind, "value": values[name]} for name, kind in DECISION_FIELDS}
    run_query_job(
        ctx,
        f"SELECT {select}",
        params=params,
        destination=table,
        write_disposition="WRITE_APPEND",
        location=location,
        gcp_resources_path=gcp_resources_path,
    )
    return table


def list_decisions(
    ctx: CloudContext, decisions_table: str = "", model_display_name: str = "", limit: int = 20
) -> list[dict[str, Any]]:
    """The newest decisions first; [] when none was recorded yet."""
    from google.api_core.exceptions import NotFound
    from google.cloud import bigquery

    if limit < 1:
        raise SpecError("limit", f"must be >= 1, got {limit}")
    table = decisions_table_name(ctx, decisions_table)
    where = "WHERE model_display_name = @model" if model_display_name else ""
    params = [bigquery.ScalarQueryParameter("model", "STRING", model_display_name)]
    try:
        rows = _rows(
            ctx,
            f"SELECT * FROM `{table}` {where} ORDER BY run_time DESC LIMIT {int(limit)}",
            params if model_display_name else [],
        )
    except NotFound:
        return []
    return [dict(row.items()) for row in rows]
