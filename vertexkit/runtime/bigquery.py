"""BigQuery jobs for components: a query into a table, and a table exported as dataset splits.

Every BigQuery job is recorded in `gcp_resources` (type "BigQueryJob") as soon as it is inserted.
A retried task reads the file and, step by step, resumes the jobs already recorded instead of
inserting them again; SIGTERM cancels the job being waited on. Inputs are checked first, with
errors (`SpecError`) naming the field and the allowed values, so nothing is created for bad input.
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vertexkit.runtime import gcp_resources as resources
from vertexkit.runtime.cancellation import CancelScope, cancel_on_sigterm
from vertexkit.runtime.polling import cap_for, poll_until
from vertexkit.specs import SpecError

if TYPE_CHECKING:
    from google.cloud import bigquery

    from vertexkit.context import CloudContext

log = logging.getLogger(__name__)

BIGQUERY_JOB = "BigQueryJob"
WRITE_DISPOSITIONS = ("WRITE_TRUNCATE", "WRITE_APPEND", "WRITE_EMPTY")
EXPORT_FORMATS = {
    "PARQUET": ("PARQUET", "parquet"),
    "CSV": ("CSV", "csv"),
    "NEWLINE_DELIMITED_JSON": ("NEWLINE_DELIMITED_JSON", "jsonl"),
}
_FORMAT_ALIASES = {"JSONL": "NEWLINE_DELIMITED_JSON", "JSON": "NEWLINE_DELIMITED_JSON"}
SPLITS = ("train", "validation", "test")
HASH_BUCKETS = 10_000
DEFAULT_STAGING_DATASET = "vertexkit_staging"
STAGING_TABLE_EXPIRATION = dt.timedelta(days=1)

# project (optionally domain-scoped "example.com:p") . dataset . table; backticks allowed.
_PROJECT = r"(?:[a-z][a-z0-9.-]*:)?[a-z][a-z0-9-]{0,61}[a-z0-9]"
_TABLE_NAME = re.compile(
    rf"^(?:(?P<project>{_PROJECT})\.)?(?P<dataset>\w{{1,1024}})\.(?P<table>[^.`]{{1,1024}})$"
)
_DATASET_NAME = re.compile(rf"^(?:(?P<project>{_PROJECT})\.)?(?P<dataset>\w{{1,1024}})$")
_COLUMN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,299}$")


# -- validation ------------------------------------------------------------------------------
def parse_table_name(value: str, default_project: str, field_name: str) -> str:
    """`project.dataset.table` (or `dataset.table`, backticks allowed) -> fully qualified."""
    match = _TABLE_NAME.match((value or "").strip().strip("`"))
    if not match:
        raise SpecError(
            field_name,
            f"{value!r} is not a table name; use PROJECT.DATASET.TABLE or DATASET.TABLE",
        )
    project = match["project"] or default_project
    return f"{project}.{match['dataset']}.{match['table']}"


def parse_dataset_name(value: str, default_project: str, field_name: str) -> str:
    match = _DATASET_NAME.match((value or "").strip().strip("`"))
    if not match:
        raise SpecError(field_name, f"{value!r} is not a dataset name; use PROJECT.DATASET")
    return f"{match['project'] or default_project}.{match['dataset']}"


def check_write_disposition(value: str) -> str:
    upper = (value or "").upper()
    if upper not in WRITE_DISPOSITIONS:
        raise SpecError(
            "write_disposition", f"{value!r} is not allowed; use one of {WRITE_DISPOSITIONS}"
        )
    return upper


def check_export_format(value: str) -> str:
    upper = (value or "").upper()
    upper = _FORMAT_ALIASES.get(upper, upper)
    if upper not in EXPORT_FORMATS:
        allowed = [*EXPORT_FORMATS, *_FORMAT_ALIASES]
        raise SpecError("format", f"{value!r} is not allowed; use one of {allowed}")
    return upper


def check_fractions(fractions: Any) -> tuple[float, float, float]:
    """Train/validation/test fractions: three numbers in [0, 1], train > 0, summing to 1."""
    try:
        values = tuple(float(f) for f in fractions)
    except (TypeError, ValueError) as error:
        raise SpecError(
            "fractions", f"must be three numbers (train, validation, test): {error}"
        ) from error
    if len(values) != 3:
        raise SpecError(
            "fractions", f"must be three numbers (train, validation, test), got {len(values)}"
        )
    if any(not 0.0 <= v <= 1.0 for v in values) or values[0] <= 0.0:
        raise SpecError(
            "fractions", f"each must be within [0, 1] and train > 0, got {list(values)}"
        )
    if abs(sum(values) - 1.0) > 1e-6:
        raise SpecError("fractions", f"must sum to 1, got {list(values)} (sum {sum(values):g})")
    return values  # type: ignore[return-value]


def check_gcs_prefix(value: str) -> str:
    if not re.match(r"^gs://[a-z0-9][a-z0-9._-]{1,221}[a-z0-9](/.*)?$", value or ""):
        raise SpecError("gcs_prefix", f"must be gs://BUCKET[/PREFIX], got {value!r}")
    if "*" in value:
        raise SpecError("gcs_prefix", "must not contain '*': the export adds its own shard pattern")
    return value.rstrip("/")


# -- query parameters ------------------------------------------------------------------------
def _scalar_type(value: Any, name: str) -> str:
    # bool before int: True is an int in Python.
    for kind, bq_type in (
        (bool, "BOOL"),
        (int, "INT64"),
        (float, "FLOAT64"),
        (decimal.Decimal, "NUMERIC"),
        (str, "STRING"),
        (bytes, "BYTES"),
        (dt.datetime, "TIMESTAMP"),
        (dt.date, "DATE"),
        (dt.time, "TIME"),
    ):
        if isinstance(value, kind):
            return bq_type
    raise SpecError(
        f"params.{name}",
        f"cannot type {type(value).__name__!r}; give a bool, int, float, Decimal, str, bytes, "
        'datetime, date, time, a list of one of these, or {"type": "DATE", "value": ...}',
    )


def query_parameters(params: dict[str, Any] | None) -> list[Any]:
    """Named query parameters typed from Python values (or `{"type": T, "value": V}`)."""
    from google.cloud import bigquery

    typed: list[Any] = []
    for name, value in (params or {}).items():
        if not _COLUMN_NAME.match(name):
            raise SpecError(f"params.{name}", "a parameter name is letters, digits and underscores")
        if isinstance(value, dict) and set(value) == {"type", "value"}:
            typed.append(
                bigquery.ScalarQueryParameter(name, str(value["type"]).upper(), value["value"])
            )
        elif isinstance(value, (list, tuple)):
            if not value:
                raise SpecError(
                    f"params.{name}",
                    'an empty list has no element type; use {"type": ..., "value": []}',
                )
            typed.append(
                bigquery.ArrayQueryParameter(name, _scalar_type(value[0], name), list(value))
            )
        elif value is None:
            raise SpecError(
                f"params.{name}", 'None has no type; use {"type": "STRING", "value": null}'
            )
        else:
            typed.append(bigquery.ScalarQueryParameter(name, _scalar_type(value, name), value))
    return typed


# -- jobs with gcp_resources -----------------------------------------------------------------
class BigQueryJobError(RuntimeError):
    """A BigQuery job ended with an error; the message is BigQuery's."""


@dataclass
class JobLedger:
    """The BigQuery jobs of one task, in the order it runs them, mirrored to gcp_resources.

    On a retry, step N resumes the N-th recorded job instead of inserting a new one.
    """

    ctx: CloudContext
    client: bigquery.Client
    path: str | None
    scope: CancelScope
    recorded: list[str] = field(default_factory=list)
    step: int = 0

    @classmethod
    def open(
        cls, ctx: CloudContext, client: bigquery.Client, path: str | None, scope: CancelScope
    ) -> JobLedger:
        uris = [
            r.resource_uri
            for r in resources.read_gcp_resources(path)
            if r.resource_type == BIGQUERY_JOB
        ]
        return cls(ctx=ctx, client=client, path=path, scope=scope, recorded=uris)

    def run(self, insert: Callable[[], Any]) -> Any:
        """Resumes this step's recorded job or inserts it; waits for it; raises on its error."""
        if self.step < len(self.recorded):
            ref = resources.bigquery_job_from_uri(self.recorded[self.step])
            job = self.client.get_job(ref.job_id, project=ref.project, location=ref.location)
        else:
            job = insert()
            self.recorded.append(resources.bigquery_job_uri(job.project, job.job_id, job.location))
            self._write()
        self.step += 1
        return self._wait(job)

    def _write(self) -> None:
        if self.path:
            entries = [resources.GcpResource(BIGQUERY_JOB, uri) for uri in self.recorded]
            resources.write_gcp_resources(self.path, entries)

    def _wait(self, job: Any) -> Any:
        # A job already DONE when inserted (or resumed) needs no poll: a small local or cached
        # query often is, and its insert answer is the whole job resource.
        done = job if job.state == "DONE" else self._poll(job)
        if done.error_result:
            message = done.error_result.get("message", "unknown error")
            raise BigQueryJobError(f"BigQuery job {done.job_id} failed: {message}")
        return done

    def _poll(self, job: Any) -> Any:
        """Polls the job until DONE; SIGTERM meanwhile cancels it."""
        client = self.client
        self.scope.cancel_with(
            lambda: client.cancel_job(job.job_id, project=job.project, location=job.location)
        )
        try:
            return poll_until(
                lambda: client.get_job(job.job_id, project=job.project, location=job.location),
                lambda current: current.state == "DONE",
                cap=cap_for(self.ctx),
                describe=f"BigQuery job {job.job_id}",
            )
        finally:
            self.scope.cancel_with(None)


@contextmanager
def _job_ledger(ctx: CloudContext, gcp_resources_path: str | None) -> Iterator[JobLedger]:
    with cancel_on_sigterm() as scope:
        yield JobLedger.open(ctx, ctx.bigquery_client(), gcp_resources_path, scope)


# -- query job -------------------------------------------------------------------------------
@dataclass(frozen=True)
class QueryResult:
    table: str  # project.dataset.table holding the result
    job_id: str
    location: str | None
    rows: int


def run_query_job(
    ctx: CloudContext,
    query: str,
    params: dict[str, Any] | None = None,
    destination: str | None = None,
    write_disposition: str = "WRITE_TRUNCATE",
    location: str | None = None,
    labels: dict[str, str] | None = None,
    gcp_resources_path: str | None = None,
) -> QueryResult:
    """Runs GoogleSQL `query` (named `@params`) into `destination` (or an anonymous table)."""
    from google.cloud import bigquery

    if not (query or "").strip():
        raise SpecError("query", "must not be empty")
    table = parse_table_name(destination, ctx.project, "destination") if destination else None
    config = bigquery.QueryJobConfig(
        query_parameters=query_parameters(params),
        write_disposition=check_write_disposition(write_disposition) if table else None,
        destination=table,
        labels=labels or {},
        use_legacy_sql=False,
    )
    with _job_ledger(ctx, gcp_resources_path) as ledger:
        job = ledger.run(lambda: ledger.client.query(query, job_config=config, location=location))
        result = job.destination
        rows = ledger.client.get_table(result).num_rows or 0
    result_name = f"{result.project}.{result.dataset_id}.{result.table_id}"
    return QueryResult(result_name, job.job_id, job.location, int(rows))


# -- export into splits ----------------------------------------------------------------------
@dataclass(frozen=True)
class SplitExport:
    name: str
    uri: str  # a `*` glob of the exported shards
    rows: int


@dataclass(frozen=True)
class ExportResult:
    format: str
    splits: dict[str, SplitExport]

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format, "splits": {k: vars(v) for k, v in self.splits.items()}}


def split_predicates(key_expression: str, fractions: tuple[float, float, float]) -> dict[str, str]:
    """WHERE clauses per split, on a stable hash bucket in [0, HASH_BUCKETS) of the key.

    MOD before ABS: ABS(FARM_FINGERPRINT(...)) overflows for the smallest INT64.
    """
    bucket = f"ABS(MOD(FARM_FINGERPRINT({key_expression}), {HASH_BUCKETS}))"
    train_end = round(fractions[0] * HASH_BUCKETS)
    validation_end = train_end + round(fractions[1] * HASH_BUCKETS)
    return {
        "train": f"{bucket} < {train_end}",
        "validation": f"{bucket} >= {train_end} AND {bucket} < {validation_end}",
        "test": f"{bucket} >= {validation_end}",
    }


def export_dataset(
    ctx: CloudContext,
    gcs_prefix: str,
    source_table: str | None = None,
    query: str | None = None,
    format: str = "PARQUET",
    split_key_column: str | None = None,
    fractions: Any = (0.8, 0.1, 0.1),
    staging_dataset: str | None = None,
    location: str | None = None,
    gcp_resources_path: str | None = None,
) -> ExportResult:
    """Exports a table or query to `<gcs_prefix>/<split>/data-*.<ext>`, split deterministically.

    Rows go to train/validation/test by FARM_FINGERPRINT of the key column (or, without one, of
    the whole row as JSON) modulo 10000 against the fractions: the same row always lands in the
    same split. Each split is a query job into a staging table (expiring after a day) and an
    extract job; empty splits (fraction 0) are skipped.
    """
    from google.cloud import bigquery

    prefix = check_gcs_prefix(gcs_prefix)
    export_format = check_export_format(format)
    split_fractions = check_fractions(fractions)
    if bool(source_table) == bool(query and query.strip()):
        raise SpecError("source_table", "give exactly one of source_table and query")
    source = (
        f"`{parse_table_name(source_table, ctx.project, 'source_table')}`"
        if source_table
        else f"({query})"
    )
    if split_key_column and not _COLUMN_NAME.match(split_key_column):
        raise SpecError("split_key_column", f"{split_key_column!r} is not a column name")
    key = f"CAST(src.`{split_key_column}` AS STRING)" if split_key_column else "TO_JSON_STRING(src)"
    staging = parse_dataset_name(
        staging_dataset or DEFAULT_STAGING_DATASET, ctx.project, "staging_dataset"
    )
    destination_format, extension = EXPORT_FORMATS[export_format]
    run_id = _run_id(source, key, split_fractions, prefix, gcp_resources_path)

    splits: dict[str, SplitExport] = {}
    with _job_ledger(ctx, gcp_resources_path) as ledger:
        client = ledger.client
        _ensure_dataset(client, staging, location)
        for name, predicate in split_predicates(key, split_fractions).items():
            uri = f"{prefix}/{name}/data-*.{extension}"
            if split_fractions[SPLITS.index(name)] == 0.0:
                splits[name] = SplitExport(name, uri, 0)
                continue
            table = f"{staging}.export_{run_id}_{name}"
            sql = f"SELECT src.* FROM {source} AS src WHERE {predicate}"
            config = bigquery.QueryJobConfig(destination=table, write_disposition="WRITE_TRUNCATE")
            ledger.run(
                lambda sql=sql, config=config: client.query(
                    sql, job_config=config, location=location
                )
            )
            staged = _expire(client, table)
            extract = bigquery.ExtractJobConfig(destination_format=destination_format)
            ledger.run(
                lambda table=table, uri=uri, extract=extract: client.extract_table(
                    table, uri, job_config=extract, location=location
                )
            )
            # The extract changes no rows: the staging table as the expiry left it counts them.
            rows = int((staged or client.get_table(table)).num_rows or 0)
            splits[name] = SplitExport(name, uri, rows)
    return ExportResult(format=export_format, splits=splits)


def _run_id(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:12]


def _ensure_dataset(client: bigquery.Client, dataset: str, location: str | None) -> None:
    from google.cloud import bigquery

    spec = bigquery.Dataset(dataset)
    if location:
        spec.location = location
    client.create_dataset(spec, exists_ok=True)


def _expire(client: bigquery.Client, table_name: str) -> bigquery.Table | None:
    """Staging tables expire (best effort: a missing feature locally must not fail the export).

    One PATCH of `expirationTime` alone (no etag, so no read first); BigQuery answers with the
    whole table, which is returned. None when the expiry could not be set.
    """
    from google.cloud import bigquery

    table = bigquery.Table(table_name)
    table.expires = dt.datetime.now(dt.timezone.utc) + STAGING_TABLE_EXPIRATION
    try:
        return client.update_table(table, ["expires"])
    except Exception as error:
        log.warning("could not set an expiry on staging table %s: %s", table_name, error)
        return None
