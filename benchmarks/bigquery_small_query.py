"""Small-query overhead of the local BigQuery (issue 12, part 5; issue 25, part 4).

Through google-cloud-bigquery against the local cloud, `client.query_and_wait(...)` for
`SELECT 1` and for a GROUP BY over the penguins table, against the same SQL on DuckDB directly
(an in-process connection holding the same penguins rows): p50 over SAMPLES calls each, in the
same run. The ratio is what the REST round trip, the job record and the metadata cost.

Server CPU per call: the cloud runs in this process (uvicorn and its worker threads), so the
process's CPU time over the calls less the calling thread's own (the client's) is the server's.
PROFILE=path writes a cProfile of the server's request path (every thread) for `SELECT 1`.

    .venv/bin/python -m benchmarks bigquery_small_query   [SAMPLES=50] [PROFILE=out.prof]
"""

from __future__ import annotations

import cProfile
import os
import pstats
import statistics
import tempfile
import threading
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


def server_cpu_seconds(call: Callable[[], object]) -> float:
    """Mean server CPU per call: process CPU less this (the client's) thread's CPU."""
    call()
    process, own = time.process_time(), time.thread_time()
    for _ in range(SAMPLES):
        call()
    return ((time.process_time() - process) - (time.thread_time() - own)) / SAMPLES


class ServerProfile:
    """cProfile of every server thread (cProfile is per thread): installed before the cloud
    starts, so each thread it starts gets a trace hook that, once `measuring` is set, hands the
    thread to a profiler of its own. The calling (client) thread is left out."""

    def __init__(self) -> None:
        self.measuring = False
        self.profilers: list[cProfile.Profile] = []
        self.client_thread = threading.get_ident()
        threading.setprofile(self._trace)

    def _trace(self, frame, event, arg):  # sys.setprofile's protocol
        if self.measuring and threading.get_ident() != self.client_thread:
            profiler = cProfile.Profile()
            self.profilers.append(profiler)
            profiler.enable()  # replaces this hook in this thread

    def run(self, call: Callable[[], object], path: str) -> None:
        call()
        self.measuring = True
        for _ in range(SAMPLES):
            call()
        self.measuring = False
        threading.setprofile(None)
        stats = None
        for profiler in self.profilers:
            profiler.disable()  # a no-op from another thread; stats are taken as they stand
            profiler.create_stats()
            stats = stats or pstats.Stats(profiler)
            if profiler is not self.profilers[0]:
                stats.add(profiler)
        if stats is not None:
            stats.dump_stats(path)


def measure(home: Path) -> dict[str, tuple[float, float, float]]:
    direct = duckdb.connect()
    direct.register("penguins_frame", penguins_frame())
    direct.execute("CREATE TABLE penguins AS SELECT * FROM penguins_frame")
    results = {}
    profile = ServerProfile() if os.environ.get("PROFILE") else None
    with LocalCloud(home=home) as cloud:
        client = cloud.context().bigquery_client()
        for name, (googlesql, duckdb_sql) in QUERIES.items():
            call = lambda q=googlesql: list(client.query_and_wait(q))  # noqa: E731
            local = p50_seconds(call)
            cpu = server_cpu_seconds(call)
            plain = p50_seconds(lambda q=duckdb_sql: direct.execute(q).fetchall())
            results[name] = (local, plain, cpu)
        if profile is not None:
            profile.run(lambda: list(client.query_and_wait("SELECT 1")), os.environ["PROFILE"])
    return results


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        results = measure(Path(home))
    print(f"p50 over {SAMPLES} calls each: local BigQuery (google-cloud-bigquery) vs DuckDB")
    print(f"{'':<20}{'local':>10}{'duckdb':>10}{'ratio':>9}{'server CPU':>13}")
    for name, (local, plain, cpu) in results.items():
        print(
            f"{name:<20}{local * 1000:>8.2f}ms{plain * 1000:>8.3f}ms{local / plain:>8.0f}x"
            f"{cpu * 1000:>10.2f}ms"
        )


if __name__ == "__main__":
    main()
