"""Local BigQuery vs. DuckDB used directly (issue 2, section 5).

Both sides build the same 5-million-row, 8-column table, export it to Parquet and run the same
filtered aggregation. The local side does it through google-cloud-bigquery over REST (a query
job, an extract job to gs:// on the local Cloud Storage, a query job); the direct side runs the
SQL on its own DuckDB file. Also measured: rows per second of `to_dataframe()` over the REST
path (tabledata pages of f/v JSON, no Storage API).

    .venv/bin/python -m benchmarks bigquery_extract   [ROWS=5000000 DATAFRAME_ROWS=1000000]
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq

from vertexkit.local import LocalCloud

ROWS = int(os.environ.get("ROWS", 5_000_000))
DATAFRAME_ROWS = int(os.environ.get("DATAFRAME_ROWS", 1_000_000))
COLUMNS = """x AS id, MOD(x, 100) AS bucket, x * 0.5 AS amount, MOD(x, 7) = 0 AS flag,
    CONCAT('user_', CAST(MOD(x, 1000) AS STRING)) AS user, x / 3 AS ratio,
    MOD(x * 31, 1009) AS score, CAST(MOD(x, 13) AS FLOAT64) AS weight"""
AGGREGATION = """SELECT bucket, COUNT(*) AS n, SUM(amount) AS total, AVG(score) AS mean_score
    FROM {table} WHERE flag = FALSE AND score > 100 GROUP BY bucket ORDER BY bucket"""


def timed(step: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = step()
    return time.perf_counter() - started, result


def local_side(home: Path) -> dict[str, float]:
    with LocalCloud(home=home) as cloud:
        client = cloud.context().bigquery_client()
        storage = cloud.services[0]
        storage.ensure_bucket("bench")
        client.create_dataset("bench")
        create, _ = timed(
            lambda: client.query(
                f"CREATE TABLE bench.t AS SELECT {COLUMNS} "
                f"FROM UNNEST(GENERATE_ARRAY(1, {ROWS})) AS x"
            ).result()
        )
        extract, _ = timed(
            lambda: client.extract_table(
                "bench.t",
                "gs://bench/t/*.parquet",
                job_config=_extract_config(),
            ).result()
        )
        shards = [storage.object_path("bench", n) for n in storage.list_objects("bench", "t/")]
        assert sum(pq.ParquetFile(p).metadata.num_rows for p in shards) == ROWS
        query, result = timed(
            lambda: list(client.query_and_wait(AGGREGATION.format(table="bench.t")))
        )
        assert len(result) == 100
        frame_seconds, frame = timed(
            lambda: client.query(f"SELECT * FROM bench.t LIMIT {DATAFRAME_ROWS}").to_dataframe(
                create_bqstorage_client=False
            )
        )
        assert len(frame) == DATAFRAME_ROWS
    return {"create": create, "extract": extract, "query": query, "to_dataframe": frame_seconds}


def _extract_config() -> Any:
    from google.cloud import bigquery

    return bigquery.ExtractJobConfig(destination_format="PARQUET")


def direct_side(home: Path) -> dict[str, float]:
    con = duckdb.connect(str(home / "direct.duckdb"))
    columns = (
        "range AS id, range % 100 AS bucket, range * 0.5 AS amount, range % 7 = 0 AS flag, "
        "'user_' || CAST(range % 1000 AS VARCHAR) AS user, range / 3 AS ratio, "
        "(range * 31) % 1009 AS score, CAST(range % 13 AS DOUBLE) AS weight"
    )
    create, _ = timed(
        lambda: con.execute(f"CREATE TABLE t AS SELECT {columns} FROM range(1, {ROWS + 1})")
    )
    target = home / "direct.parquet"
    extract, _ = timed(lambda: con.execute(f"COPY t TO '{target}' (FORMAT parquet)"))
    query, result = timed(lambda: con.execute(AGGREGATION.format(table="t")).fetchall())
    assert len(result) == 100
    con.close()
    return {"create": create, "extract": extract, "query": query}


def main() -> None:
    with tempfile.TemporaryDirectory() as local_home, tempfile.TemporaryDirectory() as direct:
        local = local_side(Path(local_home))
        plain = direct_side(Path(direct))
    print(f"rows: {ROWS:,}  columns: 8")
    print(f"{'step':<14}{'local BigQuery':>16}{'DuckDB direct':>16}{'ratio':>8}")
    for step in ("create", "extract", "query"):
        ratio = local[step] / plain[step]
        print(f"{step:<14}{local[step]:>15.3f}s{plain[step]:>15.3f}s{ratio:>7.2f}x")
    total_local = local["extract"] + local["query"]
    total_plain = plain["extract"] + plain["query"]
    print(
        f"{'extract+query':<14}{total_local:>15.3f}s{total_plain:>15.3f}s"
        f"{total_local / total_plain:>7.2f}x  (target <= 1.5x)"
    )
    rate = DATAFRAME_ROWS / local["to_dataframe"]
    print(
        f"to_dataframe over REST: {DATAFRAME_ROWS:,} rows x 8 columns in "
        f"{local['to_dataframe']:.2f}s = {rate:,.0f} rows/s"
    )


if __name__ == "__main__":
    main()
