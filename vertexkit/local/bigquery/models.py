"""The state of the local BigQuery: one DuckDB file holds every dataset (a schema named
"project.dataset"), every table, and the service's own metadata (schema `_vertexkit`).

User SQL runs on a database whose file access is switched off and locked; the one directory it
may touch is the service's private staging area, which loads and extracts use to hand files to
and from DuckDB's fast readers and writers. Jobs run to completion inside one transaction each
(a failed job leaves nothing half-written) and are stored DONE, so a restart finds no job
"RUNNING".
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from vertexkit.local.bigquery import geography, intervals
from vertexkit.local.bigquery.farmhash import farm_fingerprint
from vertexkit.local.bigquery.googlesql import install_macros
from vertexkit.local.bigquery.recorder import RESULTS_TABLE, Recorder, SmallResult
from vertexkit.local.bigquery.responses import (
    LOCATION,
    duckdb_to_field,
    quote,
    schema_to_columns,
)
from vertexkit.local.bigquery.sql import QueryError, TableName, quote_literal
from vertexkit.local.bigquery.warehouse_file import (
    DATABASE_FILE,
    DamagedDatabaseError,
    check_warehouse_file,
    cut_table,
)
from vertexkit.local.state import StateError

META_SCHEMA = "_vertexkit"
RESULTS_DATASET = "_vertexkit_results"  # BigQuery's anonymous dataset for query results
RESULTS_LIFETIME_S = 24 * 3600  # BigQuery keeps a query's anonymous result table for 24 hours
JOB_HISTORY_LIFETIME_S = 180 * 24 * 3600  # jobs.get/list answer for about six months
EXPIRY_INTERVAL_S = 60  # how often calls sweep expired results and jobs


class TableLocks:
    """One lock per table. Jobs and calls that write a table queue behind each other, as
    mutating DML on one BigQuery table queues; work on other tables runs side by side (DuckDB
    would otherwise abort one of two concurrent writers of the same row with a conflict)."""

    def __init__(self) -> None:
        self._locks: dict[TableName, threading.Lock] = {}
        self._guard = threading.Lock()

    @contextlib.contextmanager
    def holding(
        self, names: list[TableName], check: Callable[[], None] = lambda: None
    ) -> Iterator[None]:
        """Takes the locks in one order (no deadlock); `check` runs while waiting, so a job
        stopped in the queue leaves it."""
        with self._guard:
            ordered = sorted(set(names), key=lambda name: (name.schema, name.table))
            locks = [self._locks.setdefault(name, threading.Lock()) for name in ordered]
        with contextlib.ExitStack() as held:
            for lock in locks:
                while not lock.acquire(timeout=0.05):
                    check()
                held.callback(lock.release)
            yield


class NotFound(QueryError):
    def __init__(self, message: str) -> None:
        super().__init__(message, "notFound")


class Duplicate(QueryError):
    def __init__(self, message: str) -> None:
        super().__init__(message, "duplicate")


def table_not_found(name: TableName) -> NotFound:
    return NotFound(f"Not found: Table {name.bigquery_id} was not found in location {LOCATION}")


def dataset_not_found(project: str, dataset: str) -> NotFound:
    return NotFound(f"Not found: Dataset {project}:{dataset} was not found in location {LOCATION}")


class Warehouse:
    """DuckDB with the BigQuery catalog on top. Catalog calls (datasets, tables, job records)
    are serialised by one lock and are short; jobs run on their own connection (`cursor()`)
    outside it, so a long query never stalls another call. `clock` is injectable for tests."""

    def __init__(self, home: Path, clock: Callable[[], float] = time.time) -> None:
        self.home = home
        self.clock = clock
        self.staging = home / ".staging"
        self.staging.mkdir(parents=True, exist_ok=True)
        for leftover in self.staging.iterdir():  # from a crash: never referenced again
            _remove(leftover)
        self.lock = threading.RLock()
        self.table_locks = TableLocks()
        self.connection = open_database(home / DATABASE_FILE)
        self._configure()
        self.recorder = Recorder(self.cursor, self.lock, lambda: self.clock())
        # Every stored job's (project, id): jobs.insert's check that an id is unused was a
        # scan of the jobs table per query.
        self.job_ids: set[tuple[str, str]] = set()
        self._load_job_ids()
        self.last_expiry = 0.0
        self.results_ready: set[str] = set()  # projects whose anonymous dataset exists
        self.expire()

    def _load_job_ids(self) -> None:
        rows = self.cursor().execute(f"SELECT project, job_id FROM {META_SCHEMA}.jobs").fetchall()
        self.job_ids = {(project, job_id) for project, job_id in rows}

    def _configure(self) -> None:
        con = self.connection
        con.execute("SET GLOBAL TimeZone = 'UTC'")
        # Long jobs must not draw on the console. Inside a Jupyter kernel without ipywidgets
        # DuckDB refuses any change of this setting, so there its default stays.
        with contextlib.suppress(duckdb.InvalidInputException):
            con.execute("SET enable_progress_bar = false")
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {quote(META_SCHEMA)}")
        for table, columns in (
            ("datasets", "project VARCHAR, dataset VARCHAR, body VARCHAR"),
            ("tables", "project VARCHAR, dataset VARCHAR, name VARCHAR, body VARCHAR"),
            ("jobs", "project VARCHAR, job_id VARCHAR, created DOUBLE, body VARCHAR"),
            ("routines", "project VARCHAR, dataset VARCHAR, routine VARCHAR, body VARCHAR"),
        ):
            con.execute(f"CREATE TABLE IF NOT EXISTS {META_SCHEMA}.{table} ({columns})")
        Recorder.create_table(con)
        con.create_function(
            "farm_fingerprint",
            _farm_fingerprint_arrow,
            [duckdb.sqltype("VARCHAR")],
            duckdb.sqltype("BIGINT"),
            type="arrow",
        )
        install_macros(con)
        # From here on, SQL may touch no file but the staging area, and cannot undo that.
        con.execute(f"SET allowed_directories = [{quote_literal(str(self.staging) + '/')}]")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")

    def close(self) -> None:
        with self.lock, contextlib.suppress(Exception):
            self.recorder.close()
            self.connection.close()

    def _now_ms(self) -> str:
        return str(int(self.clock() * 1000))

    # -- expiry --------------------------------------------------------------------------------
    def expire_if_due(self) -> None:
        if self.clock() - self.last_expiry >= EXPIRY_INTERVAL_S:
            self.expire()

    def expire(self) -> None:
        """Drops anonymous result tables older than 24 h and job records older than BigQuery's
        job history; a sweep that meets a concurrent writer tries again at the next call."""
        now = self.clock()
        self.last_expiry = now
        gone = None
        with contextlib.suppress(duckdb.TransactionException), self.transaction() as cur:
            for name in self._expired_results(cur, now - RESULTS_LIFETIME_S):
                cur.execute(f"DROP TABLE IF EXISTS {name.sql}")
                self.drop_table_extras(cur, name)
            gone = cur.execute(
                f"DELETE FROM {META_SCHEMA}.jobs WHERE created < ?", [now - JOB_HISTORY_LIFETIME_S]
            ).fetchone()
            cur.execute(
                f"DELETE FROM {RESULTS_TABLE} WHERE created < ?", [now - RESULTS_LIFETIME_S]
            )
            self.recorder.forget(self.recorder.expired(now - RESULTS_LIFETIME_S))
        if gone and gone[0]:
            self._load_job_ids()

    def _expired_results(self, cur: duckdb.DuckDBPyConnection, before: float) -> list[TableName]:
        rows = cur.execute(
            f"SELECT project, name, body FROM {META_SCHEMA}.tables WHERE dataset = ?",
            [RESULTS_DATASET],
        ).fetchall()
        return [
            TableName(project, RESULTS_DATASET, name)
            for project, name, body in rows
            if int(json.loads(body).get("creationTime") or 0) / 1000 < before
        ]

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self.connection.cursor()

    @contextlib.contextmanager
    def transaction(self, *writes: TableName) -> Iterator[duckdb.DuckDBPyConnection]:
        """A catalog change in one short transaction: on any error nothing it wrote survives.
        `writes`: the tables it changes, locked first (then the catalog lock)."""
        with self.table_locks.holding(list(writes)), self.lock:
            cur = self.cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            else:
                cur.execute("COMMIT")
            finally:
                cur.close()

    def staging_path(self, suffix: str = "") -> Path:
        return self.staging / f"{uuid.uuid4().hex}{suffix}"

    # -- datasets ----------------------------------------------------------------------------
    def dataset_exists(self, cur: duckdb.DuckDBPyConnection, project: str, dataset: str) -> bool:
        row = cur.execute(
            "SELECT 1 FROM duckdb_schemas() WHERE database_name = current_database() "
            "AND schema_name = ?",
            [f"{project}.{dataset}"],
        ).fetchone()
        return row is not None

    def dataset_body(self, cur: duckdb.DuckDBPyConnection, project: str, dataset: str) -> dict:
        if not self.dataset_exists(cur, project, dataset):
            raise dataset_not_found(project, dataset)
        row = cur.execute(
            f"SELECT body FROM {META_SCHEMA}.datasets WHERE project = ? AND dataset = ?",
            [project, dataset],
        ).fetchone()
        return json.loads(row[0]) if row else {"creationTime": self._now_ms()}

    def create_dataset(
        self, project: str, dataset: str, body: dict[str, Any], exists_ok: bool = False
    ) -> dict:
        with self.transaction() as cur:
            if self.dataset_exists(cur, project, dataset):
                if exists_ok:
                    return self.dataset_body(cur, project, dataset)
                raise Duplicate(f"Already Exists: Dataset {project}:{dataset}")
            cur.execute(f"CREATE SCHEMA {quote(f'{project}.{dataset}')}")
            body = {**body, "creationTime": self._now_ms(), "lastModifiedTime": self._now_ms()}
            self._put_dataset_body(cur, project, dataset, body)
            return body

    def _put_dataset_body(
        self, cur: duckdb.DuckDBPyConnection, project: str, dataset: str, body: dict
    ) -> None:
        cur.execute(
            f"DELETE FROM {META_SCHEMA}.datasets WHERE project = ? AND dataset = ?",
            [project, dataset],
        )
        cur.execute(
            f"INSERT INTO {META_SCHEMA}.datasets VALUES (?, ?, ?)",
            [project, dataset, json.dumps(body)],
        )

    def ensure_results_dataset(self, project: str) -> None:
        """Creates the project's anonymous dataset once; later queries find it known (a
        catalog transaction per query was most of a small query's cost)."""
        if project in self.results_ready:
            return
        self.create_dataset(project, RESULTS_DATASET, {}, exists_ok=True)
        self.results_ready.add(project)

    def patch_dataset(self, project: str, dataset: str, changes: dict[str, Any]) -> dict:
        with self.transaction() as cur:
            body = self.dataset_body(cur, project, dataset)
            body.update(changes)
            body["lastModifiedTime"] = self._now_ms()
            self._put_dataset_body(cur, project, dataset, body)
            return body

    def list_datasets(self, project: str, include_hidden: bool) -> list[str]:
        cur = self.cursor()
        rows = cur.execute(
            "SELECT schema_name FROM duckdb_schemas() WHERE database_name = current_database() "
            "AND starts_with(schema_name, ?) ORDER BY schema_name",
            [f"{project}."],
        ).fetchall()
        names = [row[0][len(project) + 1 :] for row in rows]
        # Names starting with "_" are hidden datasets (shown only with `all`); the local
        # anonymous dataset of query results is internal and never listed.
        return [
            name
            for name in names
            if name != RESULTS_DATASET and (include_hidden or not name.startswith("_"))
        ]

    def delete_dataset(self, project: str, dataset: str, delete_contents: bool) -> None:
        with self.transaction() as cur:
            if not self.dataset_exists(cur, project, dataset):
                raise dataset_not_found(project, dataset)
            names = self.list_tables(project, dataset, cur)
            routines = self._count_routines(cur, project, dataset)
            if (names or routines) and not delete_contents:
                raise QueryError(
                    f"Dataset {project}:{dataset} is still in use (it has {len(names)} tables "
                    f"and {routines} routines); delete it with deleteContents=true",
                    "resourceInUse",
                )
            cur.execute(f"DROP SCHEMA {quote(f'{project}.{dataset}')} CASCADE")
            if dataset == RESULTS_DATASET:
                self.results_ready.discard(project)
            for table in ("datasets", "tables", "routines"):
                cur.execute(
                    f"DELETE FROM {META_SCHEMA}.{table} WHERE project = ? AND dataset = ?",
                    [project, dataset],
                )

    def _count_routines(self, cur: duckdb.DuckDBPyConnection, project: str, dataset: str) -> int:
        row = cur.execute(
            f"SELECT count(*) FROM {META_SCHEMA}.routines WHERE project = ? AND dataset = ?",
            [project, dataset],
        ).fetchone()
        return int(row[0]) if row else 0

    # -- tables -------------------------------------------------------------------------------
    def table_kind(self, cur: duckdb.DuckDBPyConnection, name: TableName) -> str | None:
        """ "TABLE", "VIEW" or None when it does not exist."""
        # duckdb_tables()/duckdb_views() answer in half the time of information_schema.tables.
        row = cur.execute(
            "SELECT 'TABLE' FROM duckdb_tables() WHERE database_name = current_database() "
            "AND schema_name = $schema AND table_name = $table UNION ALL "
            "SELECT 'VIEW' FROM duckdb_views() WHERE database_name = current_database() "
            "AND schema_name = $schema AND view_name = $table",
            {"schema": name.schema, "table": name.table},
        ).fetchone()
        if row is None and name.dataset == RESULTS_DATASET:
            small = self.recorder.result(cur, name)
            if small is not None:  # a small result DuckDB is asked for: made a table now
                self._materialise(cur, name, small)
                return "TABLE"
        return None if row is None else str(row[0])

    def _materialise(
        self, cur: duckdb.DuckDBPyConnection, name: TableName, small: SmallResult
    ) -> None:
        """The anonymous table of a small result (recorder.py), typed as the query typed it;
        columns by position, as a result may repeat a name."""
        columns = ", ".join(
            f"CAST(#{index} AS {kind}) AS {quote(column)}"
            for index, (column, kind) in enumerate(
                zip(small.table.column_names, small.types, strict=True), start=1
            )
        )
        cur.complete()  # the catalog look-up's fetchone() left its result unread
        cur.register("_vertexkit_small_result", small.table)
        try:
            cur.execute(f"CREATE TABLE {name.sql} AS SELECT {columns} FROM _vertexkit_small_result")
        finally:
            cur.unregister("_vertexkit_small_result")
        self.record_new_table(cur, name, small.created)  # it expires a day after the query
        small.materialised = True

    def small_result(self, name: TableName) -> SmallResult | None:
        """A query's small result not (yet) made a DuckDB table, from memory or its bytes."""
        if name.dataset != RESULTS_DATASET:
            return None
        small = self.recorder.kept(name)  # most are: no cursor to open for them
        if small is None:
            cur = self.cursor()
            try:
                small = self.recorder.result(cur, name)
            finally:
                cur.close()
        return None if small is None or small.materialised else small

    def require_table(self, cur: duckdb.DuckDBPyConnection, name: TableName) -> str:
        kind = self.table_kind(cur, name)
        if kind is None:
            if not self.dataset_exists(cur, name.project, name.dataset):
                raise dataset_not_found(name.project, name.dataset)
            raise table_not_found(name)
        return kind

    def list_tables(
        self, project: str, dataset: str, cur: duckdb.DuckDBPyConnection | None = None
    ) -> list[tuple[str, str]]:
        cur = cur or self.cursor()
        if not self.dataset_exists(cur, project, dataset):
            raise dataset_not_found(project, dataset)
        rows = cur.execute(
            "SELECT table_name, table_type FROM information_schema.tables WHERE table_catalog = "
            "current_database() AND table_schema = ? ORDER BY table_name",
            [f"{project}.{dataset}"],
        ).fetchall()
        return [(row[0], "VIEW" if row[1] == "VIEW" else "TABLE") for row in rows]

    def table_schema(self, cur: duckdb.DuckDBPyConnection, name: TableName) -> list[dict]:
        relation = cur.sql(f"SELECT * FROM {name.sql} LIMIT 0")
        nullable = dict(
            cur.execute(
                "SELECT column_name, is_nullable = 'YES' FROM information_schema.columns WHERE "
                "table_catalog = current_database() AND table_schema = ? AND table_name = ?",
                [name.schema, name.table],
            ).fetchall()
        )
        fields = [
            duckdb_to_field(column, kind, nullable.get(column, True))
            for column, kind in zip(relation.columns, relation.types, strict=True)
        ]
        return _merge_descriptions(fields, self.table_extras(cur, name).get("schema", {}))

    def bare_schema(self, cur: duckdb.DuckDBPyConnection, name: TableName) -> list[dict]:
        """Names, types and modes, every column NULLABLE and without descriptions: the whole
        schema of an anonymous result table (what CREATE TABLE AS makes), and all a query's
        translation needs of the tables it reads. One planner call, no catalog queries."""
        relation = cur.sql(f"SELECT * FROM {name.sql} LIMIT 0")
        return [
            duckdb_to_field(column, kind, True)
            for column, kind in zip(relation.columns, relation.types, strict=True)
        ]

    def table_extras(self, cur: duckdb.DuckDBPyConnection, name: TableName) -> dict:
        row = cur.execute(
            f"SELECT body FROM {META_SCHEMA}.tables WHERE project = ? AND dataset = ? AND name = ?",
            [name.project, name.dataset, name.table],
        ).fetchone()
        return json.loads(row[0]) if row else {}

    def put_table_extras(self, cur: duckdb.DuckDBPyConnection, name: TableName, body: dict) -> None:
        self.drop_table_extras(cur, name)
        cur.execute(
            f"INSERT INTO {META_SCHEMA}.tables VALUES (?, ?, ?, ?)",
            [name.project, name.dataset, name.table, json.dumps(body)],
        )

    def record_new_table(
        self, cur: duckdb.DuckDBPyConnection, name: TableName, created: float | None = None
    ) -> None:
        """touch_table for a table just created under a name never used: one insert.
        `created`: when its rows were made, if before now (seconds)."""
        now = self._now_ms() if created is None else str(int(created * 1000))
        cur.execute(
            f"INSERT INTO {META_SCHEMA}.tables VALUES (?, ?, ?, ?)",
            [
                name.project,
                name.dataset,
                name.table,
                json.dumps({"creationTime": now, "lastModifiedTime": now}),
            ],
        )

    def drop_table_extras(self, cur: duckdb.DuckDBPyConnection, name: TableName) -> None:
        if name.dataset == RESULTS_DATASET:  # and the small result it was made from
            cur.execute(
                f"DELETE FROM {RESULTS_TABLE} WHERE project = ? AND dataset = ? AND name = ?",
                [name.project, name.dataset, name.table],
            )
            self.recorder.forget([name])
        cur.execute(
            f"DELETE FROM {META_SCHEMA}.tables WHERE project = ? AND dataset = ? AND name = ?",
            [name.project, name.dataset, name.table],
        )

    def touch_table(
        self, cur: duckdb.DuckDBPyConnection, name: TableName, extras: dict | None = None
    ) -> None:
        """Records creation/modification times (and descriptions) beside the DuckDB table."""
        body = self.table_extras(cur, name)
        body.setdefault("creationTime", self._now_ms())
        body["lastModifiedTime"] = self._now_ms()
        body.update(extras or {})
        self.put_table_extras(cur, name, body)

    def create_table(
        self, cur: duckdb.DuckDBPyConnection, name: TableName, fields: list[dict], replace: bool
    ) -> None:
        verb = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE"
        cur.execute(f"{verb} {name.sql} {schema_to_columns(fields)}")
        self.drop_table_extras(cur, name)
        self.touch_table(cur, name, {"schema": _descriptions(fields)})

    def drop_table(self, cur: duckdb.DuckDBPyConnection, name: TableName) -> None:
        kind = self.require_table(cur, name)
        cur.execute(f"DROP {kind} {name.sql}")
        self.drop_table_extras(cur, name)

    def count_rows(self, cur: duckdb.DuckDBPyConnection, name: TableName) -> int:
        return int(cur.execute(f"SELECT count(*) FROM {name.sql}").fetchone()[0])

    def read_page(
        self,
        name: TableName,
        offset: int,
        limit: int,
        columns: list[str] | None = None,
    ) -> pa.Table:
        small = self.small_result(name)
        if small is not None:
            page = small.table.slice(offset, limit)
            if not columns:
                return page
            by_name = {column.lower(): column for column in page.column_names}
            return page.select([by_name[column.lower()] for column in columns])
        cur = self.cursor()
        try:
            projection = ", ".join(quote(column) for column in columns) if columns else "*"
            page = cur.sql(
                f"SELECT {projection} FROM {name.sql} LIMIT {int(limit)} OFFSET {int(offset)}"
            )
            return geography.text_columns(intervals.exportable(page).to_arrow_table())
        finally:
            cur.close()

    # -- jobs ---------------------------------------------------------------------------------
    def job_exists(self, project: str, job_id: str) -> bool:
        return (project, job_id) in self.job_ids

    def record_later(
        self, project: str, job_id: str, body: dict, result: TableName, small: SmallResult
    ) -> None:
        """A DONE query's job and small result, written by the recorder (recorder.py)."""
        self.job_ids.add((project, job_id))
        self.recorder.add(project, job_id, body, (result, small))

    def get_job(self, project: str, job_id: str) -> dict | None:
        pending = self.recorder.job(project, job_id)
        if pending is not None:
            return pending
        cur = self.cursor()
        try:
            row = cur.execute(
                f"SELECT body FROM {META_SCHEMA}.jobs WHERE project = ? AND job_id = ?",
                [project, job_id],
            ).fetchone()
        finally:
            cur.close()
        return json.loads(row[0]) if row else None

    def put_job(self, project: str, job_id: str, body: dict) -> None:
        self.recorder.flush()  # a pending record of this job goes first, then this one
        with self.transaction() as cur:  # one commit, not one per statement
            cur.execute(
                f"DELETE FROM {META_SCHEMA}.jobs WHERE project = ? AND job_id = ?",
                [project, job_id],
            )
            cur.execute(
                f"INSERT INTO {META_SCHEMA}.jobs VALUES (?, ?, ?, ?)",
                [project, job_id, self.clock(), json.dumps(body)],
            )
        self.job_ids.add((project, job_id))

    def insert_job(
        self, cur: duckdb.DuckDBPyConnection, project: str, job_id: str, body: dict
    ) -> None:
        """put_job inside a caller's transaction, for a job id jobs.insert found unused."""
        cur.execute(
            f"INSERT INTO {META_SCHEMA}.jobs VALUES (?, ?, ?, ?)",
            [project, job_id, self.clock(), json.dumps(body)],
        )
        self.job_ids.add((project, job_id))

    def list_jobs(self, project: str) -> list[dict]:
        self.recorder.flush()
        cur = self.cursor()
        try:
            rows = cur.execute(
                f"SELECT body FROM {META_SCHEMA}.jobs WHERE project = ? ORDER BY created DESC",
                [project],
            ).fetchall()
        finally:
            cur.close()
        return [json.loads(row[0]) for row in rows]

    def delete_job(self, project: str, job_id: str) -> None:
        self.recorder.flush()
        with self.lock:
            self.cursor().execute(
                f"DELETE FROM {META_SCHEMA}.jobs WHERE project = ? AND job_id = ?",
                [project, job_id],
            )
        self.job_ids.discard((project, job_id))


def _farm_fingerprint_arrow(values: pa.Array) -> pa.Array:
    return pa.array(
        [None if value is None else farm_fingerprint(value) for value in values.to_pylist()],
        pa.int64(),
    )


def _descriptions(fields: list[dict]) -> dict:
    """Field descriptions by name (nested), the part of a schema DuckDB does not keep."""
    out = {}
    for field in fields:
        entry: dict[str, Any] = {}
        if field.get("description"):
            entry["description"] = field["description"]
        if field.get("fields"):
            entry["fields"] = _descriptions(field["fields"])
        if entry:
            out[field["name"]] = entry
    return out


def _merge_descriptions(fields: list[dict], extras: dict) -> list[dict]:
    for field in fields:
        entry = extras.get(field["name"]) or {}
        if entry.get("description"):
            field["description"] = entry["description"]
        if field.get("fields") and entry.get("fields"):
            _merge_descriptions(field["fields"], entry["fields"])
    return fields


def open_database(path: Path) -> duckdb.DuckDBPyConnection:
    """Opens the warehouse file, refusing one cut short or unreadable (DamagedDatabaseError),
    and saying so, without calling it damage, when another process holds it open."""
    check_warehouse_file(path)
    try:
        connection = duckdb.connect(str(path))
        problem = _blocks_past_the_end(connection, path)
    except duckdb.Error as error:
        why = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if "Could not set lock" in why:  # DuckDB's lock: a live process has it open
            raise StateError(
                f"The local BigQuery cannot start: {path} is open in another process ({why}). "
                "The file is not damaged: stop that process, or pass another --home."
            ) from None
        raise DamagedDatabaseError(path, why) from None
    if problem:
        connection.close()
        raise DamagedDatabaseError(path, problem)
    return connection


def _blocks_past_the_end(connection: duckdb.DuckDBPyConnection, path: Path) -> str | None:
    """Reads the catalog and every table's storage metadata (no table data): a table whose data
    blocks lie past the file's end was cut off it."""
    tables = connection.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT temporary"
    ).fetchall()
    block_size = connection.execute(
        "SELECT block_size FROM pragma_database_size() WHERE database_name = current_database()"
    ).fetchone()
    last = -1
    for schema, table in tables:
        name = quote_literal(f"{quote(schema)}.{quote(table)}")
        found = connection.execute(
            f"SELECT max(block_id) FROM pragma_storage_info({name}) WHERE persistent"
        ).fetchone()
        last = max(last, found[0] if found and found[0] is not None else -1)
    if last < 0 or not block_size:
        return None
    return cut_table(path.stat().st_size, int(block_size[0]), last)


def _remove(path: Path) -> None:
    if path.is_dir():
        for child in path.iterdir():
            _remove(child)
        path.rmdir()
    else:
        path.unlink(missing_ok=True)
