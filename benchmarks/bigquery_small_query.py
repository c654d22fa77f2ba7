"""Small-query overhead of the local BigQuery (issue 12, part 5; issue 25, part 4).

Through google-cloud-bigquery against the local cloud, `client.query_and_wait(...)` for
`SELECT 1` and for a GROUP BY over the penguins table, against the same SQL on DuckDB directly
(an in-process connection holding the same penguins rows): p50 over SAMPLES calls each, in the
same run. The ratio is what the REST round trip, the job record and the metadata cost.

Server CPU per call: the cloud runs in this process (uvicorn and its worker threads), so the
process's CPU time over the calls less the calling thread's own (the client's) is the server's;
threads that ended meanwhile (a job's) count in the process's time. The target is at most
TARGET_SERVER_CPU_MS for `SELECT 1`, printed with its verdict. On Linux the server's CPU is also
split by thread (/proc/self/task): the event loop (HTTP parsing, routing, middleware), the
request worker threads (the handlers), the job threads (the query itself), the job record
writer, and what threads that ended during the calls used (/proc counts in 10 ms ticks, so a
line may be off by 10 ms / SAMPLES, and the last one a little below zero).

PROFILE=path writes a cProfile of the server's request path (every thread) for `SELECT 1`, in
CPU time (each thread's own clock, so a thread waiting costs nothing), from a second cloud of
its own: the profile hook slows every thread it is in, so the figures above come from a cloud
that never had it.

    .venv/bin/python -m benchmarks bigquery_small_query   [SAMPLES=50] [PROFILE=out.prof]

Where a `SELECT 1`'s server CPU goes (issue 25, part 4; 2 cores, quiet; interleaved with the
code before uvloop, httptools and `bigquery/engine_call.py`, which read 3.16-3.52 ms):

    p50 over 300 calls each: local BigQuery (google-cloud-bigquery) vs DuckDB
    SELECT 1 server CPU 2.34-2.36 ms per call (target <= 2.0 ms: NOT met); by thread, ms per call:
      job threads (the query itself)              1.00-1.03   (before: 1.43-1.50)
      event loop (HTTP, routing, middleware)      0.63-0.67   (before: 1.00-1.17)
      request workers (handlers)                  0.40-0.43   (before: 0.47-0.57)
      job record writer (batched)                 0.13-0.20
      the client itself (not counted)             1.53-1.61

* job threads: DuckDB's own run of the statement is about 0.33 ms of it (one engine call,
  `engine_call.arrow_rows`: DuckDB 2's relation layer parsed and bound the statement twice, in
  Python steps of its own, 0.65 ms); the rest is the job's Python (translation from its cache,
  catalog checks, the result's schema and record) and the thread hand-overs;
* event loop: uvicorn on uvloop with httptools' parser (h11's pure-Python parsing and asyncio
  were half of the loop's CPU), Starlette's layers and the guard. A bare Starlette + uvicorn
  endpoint with the same thread hop costs 0.45-0.55 ms of server CPU a request on this machine,
  so the HTTP path is at most ~0.6 ms above its floor;
* request workers: jobs.query's handler (validation, the job's set-up, the response's rows and
  JSON) and the thread round trip that runs it off the event loop (~0.1 ms);
* job record writer: the batched job records and small results, one commit per 0.2 s.

What is left is spread thin: no part above 0.1 ms but DuckDB's run and the HTTP floor. A thread
round trip costs about 0.1 ms (anyio's; 0.075 ms through `loop.run_in_executor`), so even the
job on the request's own thread would not reach the last 0.35 ms alone.
"""

from __future__ import annotations

import collections
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
TARGET_SERVER_CPU_MS = 2.0  # issue 25, part 4: a `SELECT 1` in at most 2 ms of server CPU
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
# Server threads by name (their name's start); any other is counted under its own name.
THREAD_GROUPS = {
    "vertexkit-local-cloud": "event loop (HTTP, routing, middleware)",
    "AnyIO worker thread": "request workers (handlers)",
    "bq-recorder": "job record writer (batched)",
    "bq-": "job threads (the query itself)",  # after bq-recorder: the first match counts
}
ENDED_THREADS = "threads that ended"
# The client's own CPU is no server CPU: printed as a gauge of how busy the machine was (the
# same client code runs before and after a server change), for comparing runs.
CLIENT = "the client itself (not counted)"
TASKS = Path("/proc/self/task")
CLOCK_TICK_S = 1 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01


def p50_seconds(call: Callable[[], object]) -> float:
    call()  # warm: connection pool, plan caches
    seconds = []
    for _ in range(SAMPLES):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def thread_cpu_seconds() -> dict[int, float]:
    """Each live thread's CPU time by native id, from /proc (Linux); {} elsewhere."""
    if not TASKS.is_dir():
        return {}
    seconds = {}
    for task in TASKS.iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after the name, which may hold spaces
        seconds[int(task.name)] = (int(fields[11]) + int(fields[12])) * CLOCK_TICK_S
    return seconds


def server_cpu(call: Callable[[], object]) -> tuple[float, dict[str, float]]:
    """Mean server CPU per call (process CPU less this, the client's, thread's CPU), and
    that CPU by thread group ({} where /proc is not there), with the client's own beside it."""
    call()
    before = thread_cpu_seconds()
    process, own = time.process_time(), time.thread_time()
    for _ in range(SAMPLES):
        call()
    client = time.thread_time() - own
    total = (time.process_time() - process) - client
    after = thread_cpu_seconds()
    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    groups: dict[str, float] = collections.Counter()
    for native_id, seconds in after.items():
        if native_id == threading.get_native_id():
            continue  # the client
        name = names.get(native_id, "unnamed (DuckDB, gRPC)")
        group = next((g for prefix, g in THREAD_GROUPS.items() if name.startswith(prefix)), name)
        groups[group] += seconds - before.get(native_id, 0.0)
    if groups:
        groups[ENDED_THREADS] = total - sum(groups.values())
    groups[CLIENT] = client
    return total / SAMPLES, {group: s / SAMPLES for group, s in groups.items() if s}


class ServerProfile:
    """cProfile of every server thread (cProfile is per thread): installed before its cloud
    starts, so each thread it starts gets a trace hook that, once `measuring` is set, hands the
    thread to a profiler of its own, timed by that thread's CPU clock. The calling (client)
    thread is left out."""

    def __init__(self) -> None:
        self.measuring = False
        self.profilers: list[cProfile.Profile] = []
        self.client_thread = threading.get_ident()
        threading.setprofile(self._trace)

    def _trace(self, frame, event, arg):  # sys.setprofile's protocol
        if self.measuring and threading.get_ident() != self.client_thread:
            profiler = cProfile.Profile(time.thread_time)
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
            # Only finished calls: disabling from this thread would close the other thread's
            # open frames (a worker waiting for work) on this thread's clock.
            profiler.snapshot_stats()
            taken = _Taken(profiler.stats)
            if stats is None:
                stats = pstats.Stats(taken)
            else:
                stats.add(taken)
        if stats is not None:
            stats.dump_stats(path)


class _Taken:
    """Stats already taken, in the shape pstats.Stats loads (it would take them again)."""

    def __init__(self, stats: dict) -> None:
        self.stats = stats

    def create_stats(self) -> None:
        pass


def measure(home: Path) -> dict[str, tuple[float, float, float, dict[str, float]]]:
    direct = duckdb.connect()
    direct.register("penguins_frame", penguins_frame())
    direct.execute("CREATE TABLE penguins AS SELECT * FROM penguins_frame")
    results = {}
    with LocalCloud(home=home / "measured") as cloud:
        client = cloud.context().bigquery_client()
        for name, (googlesql, duckdb_sql) in QUERIES.items():
            call = lambda q=googlesql: list(client.query_and_wait(q))  # noqa: E731
            local = p50_seconds(call)
            cpu, by_thread = server_cpu(call)
            plain = p50_seconds(lambda q=duckdb_sql: direct.execute(q).fetchall())
            results[name] = (local, plain, cpu, by_thread)
    return results


def profile(home: Path, path: str) -> None:
    profiler = ServerProfile()  # before the cloud starts its threads
    with LocalCloud(home=home / "profiled") as cloud:
        client = cloud.context().bigquery_client()
        profiler.run(lambda: list(client.query_and_wait("SELECT 1")), path)


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        results = measure(Path(home))
        if os.environ.get("PROFILE"):
            profile(Path(home), os.environ["PROFILE"])
    print(f"p50 over {SAMPLES} calls each: local BigQuery (google-cloud-bigquery) vs DuckDB")
    print(f"{'':<20}{'local':>10}{'duckdb':>10}{'ratio':>9}{'server CPU':>13}")
    for name, (local, plain, cpu, _) in results.items():
        print(
            f"{name:<20}{local * 1000:>8.2f}ms{plain * 1000:>8.3f}ms{local / plain:>8.0f}x"
            f"{cpu * 1000:>10.2f}ms"
        )
    cpu, by_thread = results["SELECT 1"][2:]
    verdict = "met" if cpu * 1000 <= TARGET_SERVER_CPU_MS else "NOT met"
    print(
        f"SELECT 1 server CPU {cpu * 1000:.2f} ms per call "
        f"(target <= {TARGET_SERVER_CPU_MS} ms: {verdict}); by thread, ms per call:"
    )
    server = {group: seconds for group, seconds in by_thread.items() if group != CLIENT}
    for group, seconds in sorted(server.items(), key=lambda item: -item[1]):
        print(f"  {group:<42}{seconds * 1000:>6.2f}")
    print(f"  {CLIENT:<42}{by_thread[CLIENT] * 1000:>6.2f}")


if __name__ == "__main__":
    main()
