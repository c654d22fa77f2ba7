"""Small query results and their job records, kept off a query's critical path.

A durable write per query (CREATE TABLE of the anonymous result, its catalog row, the job row,
a COMMIT) was about 2 ms of the 6-8 ms of server CPU a `SELECT 1` cost, and reading the first
page back from that table another 0.9 ms. A result of at most SMALL_ROWS rows and SMALL_BYTES
bytes is therefore kept in memory as the Arrow table the query produced; the job record and the
result (as Arrow IPC bytes) are written by a background thread, many per transaction, within
FLUSH_DELAY_S. The anonymous table itself is made in DuckDB only when something asks DuckDB
for it (a query or a copy reading it, tables.get, tabledata.list): `Warehouse.table_kind`
materialises it then from memory or from its stored bytes, so every other path is unchanged.

What this trades: a crash (not a clean close, which flushes) can lose the last FLUSH_DELAY_S of
small-query job records, as a crash of BigQuery's frontend can lose a job that never answered.
"""

from __future__ import annotations

import collections
import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc

from vertexkit.local.bigquery.sql import TableName

SMALL_ROWS = 1000
SMALL_BYTES = 1 << 20
MEMORY_BUDGET_BYTES = 64 << 20  # beyond it the oldest results are read back from their bytes
FLUSH_DELAY_S = 0.2
RESULTS_TABLE = "_vertexkit.small_results"
RESULTS_COLUMNS = (
    "project VARCHAR, dataset VARCHAR, name VARCHAR, created DOUBLE, types VARCHAR, ipc BLOB"
)


@dataclass
class SmallResult:
    table: pa.Table
    types: list[str]  # each column's DuckDB type, to make the table as the query typed it
    created: float
    materialised: bool = False  # DuckDB holds it as a table now: read it there


def to_ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pyarrow.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def from_ipc(data: bytes) -> pa.Table:
    return pyarrow.ipc.open_stream(data).read_all()


def null_element_column(table: pa.Table) -> str | None:
    """The first list column holding a NULL element (BigQuery cannot write one)."""
    for field, column in zip(table.schema, table.columns, strict=True):
        listed = pa.types.is_list(field.type) or pa.types.is_large_list(field.type)
        if listed and pc.list_flatten(column).null_count:
            return field.name
    return None


class Recorder:
    """Pending job records and the small results of queries, written in batches."""

    def __init__(
        self,
        connection: Callable[[], duckdb.DuckDBPyConnection],
        lock: Any,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._cursor = connection
        self._clock = clock
        self._catalog_lock = lock  # the warehouse's: one writer of its catalog at a time
        self._lock = threading.Lock()
        self._jobs: dict[tuple[str, str], tuple[float, str]] = {}  # (created, body's JSON)
        self._results: collections.OrderedDict[TableName, SmallResult] = collections.OrderedDict()
        self._unwritten: set[TableName] = set()
        self._memory = 0
        self._wake = threading.Event()
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, daemon=True, name="bq-recorder")
        self._thread.start()

    @staticmethod
    def create_table(cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute(f"CREATE TABLE IF NOT EXISTS {RESULTS_TABLE} ({RESULTS_COLUMNS})")

    # -- writes ---------------------------------------------------------------------------------
    def add(self, project: str, job_id: str, body: dict, result: tuple | None) -> None:
        """A DONE job's record, with its small result `(name, SmallResult)` if it has one."""
        with self._lock:
            self._jobs[(project, job_id)] = (self._clock(), json.dumps(body))
            if result is not None:
                name, small = result
                self._results[name] = small
                self._unwritten.add(name)
                self._memory += small.table.nbytes
                self._trim()
        self._wake.set()

    def _trim(self) -> None:
        while self._memory > MEMORY_BUDGET_BYTES and self._results:
            name, oldest = next(iter(self._results.items()))
            if name in self._unwritten:
                return  # kept until written: the flush trims again
            del self._results[name]
            self._memory -= oldest.table.nbytes

    def _loop(self) -> None:
        while not self._stopped:
            self._wake.wait()
            time.sleep(FLUSH_DELAY_S)  # gather the calls of the next moment into one commit
            self._wake.clear()
            with contextlib.suppress(duckdb.Error):  # tried again at the next wake or flush
                self.flush()

    def flush(self) -> None:
        """Writes every pending record now, in one transaction."""
        with self._catalog_lock:
            with self._lock:
                jobs = dict(self._jobs)
                results = {name: self._results[name] for name in self._unwritten}
            if not jobs and not results:
                return
            cur = self._cursor()
            try:
                cur.execute("BEGIN TRANSACTION")
                try:
                    self._write(cur, jobs, results)
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
                cur.execute("COMMIT")
            finally:
                cur.close()
            with self._lock:
                for key in jobs:
                    if self._jobs.get(key) is not None and self._jobs[key][1] is jobs[key][1]:
                        del self._jobs[key]
                self._unwritten -= set(results)
                self._trim()

    def _write(self, cur: duckdb.DuckDBPyConnection, jobs: dict, results: dict) -> None:
        if jobs:
            rows = pa.table(
                {
                    "project": [project for project, _ in jobs],
                    "job_id": [job_id for _, job_id in jobs],
                    "created": [created for created, _ in jobs.values()],
                    "body": [body for _, body in jobs.values()],
                }
            )
            cur.register("_vertexkit_jobs_batch", rows)
            cur.execute("INSERT INTO _vertexkit.jobs SELECT * FROM _vertexkit_jobs_batch")
            cur.unregister("_vertexkit_jobs_batch")
        if results:
            rows = pa.table(
                {
                    "project": [name.project for name in results],
                    "dataset": [name.dataset for name in results],
                    "name": [name.table for name in results],
                    "created": [small.created for small in results.values()],
                    "types": [json.dumps(small.types) for small in results.values()],
                    "ipc": pa.array([to_ipc(s.table) for s in results.values()], pa.binary()),
                }
            )
            cur.register("_vertexkit_results_batch", rows)
            cur.execute(f"INSERT INTO {RESULTS_TABLE} SELECT * FROM _vertexkit_results_batch")
            cur.unregister("_vertexkit_results_batch")

    def discard_job(self, project: str, job_id: str) -> None:
        with self._lock:
            self._jobs.pop((project, job_id), None)

    def close(self) -> None:
        self._stopped = True
        self._wake.set()
        with contextlib.suppress(duckdb.Error):
            self.flush()

    # -- reads ----------------------------------------------------------------------------------
    def job(self, project: str, job_id: str) -> dict | None:
        with self._lock:
            pending = self._jobs.get((project, job_id))
        return json.loads(pending[1]) if pending else None

    def kept(self, name: TableName) -> SmallResult | None:
        """A small result held in memory."""
        with self._lock:
            return self._results.get(name)

    def result(self, cur: duckdb.DuckDBPyConnection, name: TableName) -> SmallResult | None:
        """A small result from memory, else from its stored bytes (after a restart)."""
        small = self.kept(name)
        if small is not None:
            return small
        row = cur.execute(
            f"SELECT types, ipc, created FROM {RESULTS_TABLE} "
            "WHERE project = ? AND dataset = ? AND name = ?",
            [name.project, name.dataset, name.table],
        ).fetchone()
        if row is None:
            return None
        return SmallResult(from_ipc(row[1]), json.loads(row[0]), row[2])

    def forget(self, names: list[TableName]) -> None:
        """Expired results: gone from memory (the caller deletes their stored rows)."""
        with self._lock:
            for name in names:
                small = self._results.pop(name, None)
                if small is not None:
                    self._memory -= small.table.nbytes
                self._unwritten.discard(name)

    def expired(self, before: float) -> list[TableName]:
        with self._lock:
            return [name for name, small in self._results.items() if small.created < before]
