"""Small-query overhead of the local BigQuery (issue 12, part 5).

Through google-cloud-bigquery against the local cloud, `client.query_and_wait(...)` for
`SELECT 1` and for a GROUP BY over the penguins table, against the same SQL on DuckDB directly
(an in-process connection holding the same penguins rows): p50 over SAMPLES calls each, in the
same run. The ratio is what the REST round trip, the job record and the metadata cost.

    .venv/bin/python -m benchmarks bigquery_small_query   [SAMPLES=50]
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from vertexkit.local import LocalCloud
from vertexkit.local.bigquery.seed import penguins_frame

SAMPLES = int(os.environ.get("SAMPLES", 50))
GROUP_BY = (
    "SELECT species, COUNT(*) AS n, AVG(body_mass_g) AS mass FROM {table} "
    "GROUP BY species ORDER BY species"
)
QUERIES = {
    "SELECT 1": ("SELECT 1", "SELECT 1"),
    "GROUP BY penguins": (
        GROUP_BY.format(table="`bigquery-public-data.ml_datasets.penguins`"),
        GROUP_BY.format(table="penguins"),
    ),
}


def p50_seconds(call: Callable[[], object]) -> float:
    call()  # warm: connection pool, plan caches
    seconds = []
    for _ in range(SAMPLES):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def measure(home: Path) -> dict[str, tuple[float, float]]:
    direct = duckdb.connect()
    direct.register("penguins_frame", penguins_frame())
    direct.execute("CREATE TABLE penguins AS SELECT * FROM penguins_frame")
    results = {}
    with LocalCloud(home=home) as cloud:
        client = cloud.context().bigquery_client()
        for name, (googlesql, duckdb_sql) in QUERIES.items():
            local = p50_seconds(lambda q=googlesql: list(client.query_and_wait(q)))
            plain = p50_seconds(lambda q=duckdb_sql: direct.execute(q).fetchall())
            results[name] = (local, plain)
    return results


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        results = measure(Path(home))
    print(f"p50 over {SAMPLES} calls each: local BigQuery (google-cloud-bigquery) vs DuckDB")
    print(f"{'':<20}{'local':>10}{'duckdb':>10}{'ratio':>9}")
    for name, (local, plain) in results.items():
        print(f"{name:<20}{local * 1000:>8.2f}ms{plain * 1000:>8.3f}ms{local / plain:>8.0f}x")


if __name__ == "__main__":
    main()
