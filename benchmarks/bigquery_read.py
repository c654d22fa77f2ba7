"""`list_rows(table).to_dataframe()` through the local cloud's Storage Read API vs. DuckDB's own
`.df()` of the same rows (issue 25: within 5x, with no "BigQuery Storage module not found"
warning), at 100k and 1M rows x 8 columns. The client is built as a user's code builds it,
`bigquery.Client()` with its defaults, in a process with the local cloud's exports and client
hook (what `vertexkit local exec` and every task get), so it finds the Read API by itself.

The client's own end-of-download wait is measured and printed beside each figure:
google-cloud-bigquery's download loop (`_pandas_helpers._download_table_bqstorage`) checks its
worker threads, then calls `queue.get(timeout=_PROGRESS_INTERVAL)` once more, so when the last
page was taken before its worker finished (always, with one stream) it waits the whole 0.2 s
for a page that never comes. That wait is the client's, on Google as here: no answer of the
server's shortens it. The verdict is on the whole figure; the wait is only reported.

    .venv/bin/python -m benchmarks bigquery_read   [SIZES=100000,1000000 REPEATS=5]
"""

from __future__ import annotations

import contextlib
import os
import queue
import statistics
import tempfile
import time
import types
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb

from vertexkit.context import environ_set
from vertexkit.local import LocalCloud

SIZES = [int(size) for size in os.environ.get("SIZES", "100000,1000000").split(",")]
REPEATS = int(os.environ.get("REPEATS", 5))
TARGET_RATIO = 5.0
COLUMNS = """x AS id, MOD(x, 100) AS bucket, x * 0.5 AS amount, MOD(x, 7) = 0 AS flag,
    CONCAT('user_', CAST(MOD(x, 1000) AS STRING)) AS user, x / 3 AS ratio,
    MOD(x * 31, 1009) AS score, CAST(MOD(x, 13) AS FLOAT64) AS weight"""
DUCKDB_COLUMNS = """x AS id, x % 100 AS bucket, x * 0.5 AS amount, x % 7 = 0 AS flag,
    concat('user_', CAST(x % 1000 AS VARCHAR)) AS "user", x / 3 AS ratio,
    (x * 31) % 1009 AS score, CAST(x % 13 AS DOUBLE) AS weight"""


class EmptyWaits(queue.Queue):
    """A Queue that adds up the seconds its `get` calls spent before raising `queue.Empty`:
    what the client's download loop waited for nothing. Otherwise the Queue it replaces."""

    seconds = 0.0

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        started = time.perf_counter()
        try:
            return super().get(block, timeout)
        except queue.Empty:
            EmptyWaits.seconds += time.perf_counter() - started
            raise


@contextlib.contextmanager
def client_waits_counted() -> Iterator[None]:
    """The client's frame queue is an EmptyWaits while inside (measurement only: the client's
    `queue` module is swapped for one whose Queue counts, nothing else changes)."""
    from google.cloud.bigquery import _pandas_helpers

    # the module uses queue.Queue, queue.Empty and queue.Full, nothing else (3.47.0)
    counting = types.SimpleNamespace(Queue=EmptyWaits, Empty=queue.Empty, Full=queue.Full)
    real = _pandas_helpers.queue
    _pandas_helpers.queue = counting
    try:
        yield
    finally:
        _pandas_helpers.queue = real


def median_seconds(step: Callable[[], Any]) -> tuple[float, float]:
    """The median wall seconds of `step` over REPEATS runs after a warm one, and the median of
    what the client's download loop waited for nothing in each (EmptyWaits)."""
    step()  # warm: imports, the first connection
    times, waits = [], []
    for _ in range(REPEATS):
        EmptyWaits.seconds = 0.0
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
        waits.append(EmptyWaits.seconds)
    return statistics.median(times), statistics.median(waits)


def local_side(home: Path) -> tuple[dict[int, tuple[float, float]], list[str]]:
    from vertexkit.local.hooks import vertexkit_redirect

    found: dict[int, tuple[float, float]] = {}
    with LocalCloud(home=home) as cloud, environ_set(cloud.env()), client_waits_counted():
        vertexkit_redirect.install()  # what sitecustomize does in a task or `local exec`
        from google.cloud import bigquery

        client = bigquery.Client()  # defaults: BIGQUERY_EMULATOR_HOST and the hook
        client.create_dataset("bench")
        for size in SIZES:
            client.query(
                f"CREATE TABLE bench.t{size} AS SELECT {COLUMNS} "
                f"FROM UNNEST(GENERATE_ARRAY(1, {size})) AS x"
            ).result()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for size in SIZES:
                frame = client.list_rows(f"bench.t{size}").to_dataframe()
                assert len(frame) == size, (len(frame), size)
                found[size] = median_seconds(
                    lambda s=size: client.list_rows(f"bench.t{s}").to_dataframe()
                )
        client.close()
    return found, [str(w.message) for w in caught if "Storage" in str(w.message)]


def duckdb_side(home: Path) -> dict[int, float]:
    con = duckdb.connect(str(home / "direct.duckdb"))
    found = {}
    for size in SIZES:
        con.execute(
            f"CREATE TABLE t{size} AS SELECT {DUCKDB_COLUMNS} FROM range(1, {size + 1}) r(x)"
        )
        found[size], _ = median_seconds(lambda s=size: con.sql(f"SELECT * FROM t{s}").df())
    con.close()
    return found


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        local, storage_warnings = local_side(Path(tmp) / "local")
        direct = duckdb_side(Path(tmp))
    for size in SIZES:
        seconds, waited = local[size]
        ratio = seconds / direct[size]
        verdict = "within" if ratio <= TARGET_RATIO else "OVER"
        print(
            f"list_rows().to_dataframe() {size:>9,} rows x 8: local {seconds:.3f}s, "
            f"DuckDB .df() {direct[size]:.3f}s = {ratio:.1f}x ({verdict} {TARGET_RATIO:.0f}x)"
        )
        print(
            f"  of which the client's end-of-download wait {waited:.3f}s; the rest "
            f"{seconds - waited:.3f}s = {(seconds - waited) / direct[size]:.1f}x DuckDB .df()"
        )
    print(f"Storage warnings: {storage_warnings or 'none'}")


if __name__ == "__main__":
    main()
