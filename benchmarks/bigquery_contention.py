"""BigQuery `SELECT 1` latency while a long query runs (issue 9, section 5).

Through google-cloud-bigquery against the local cloud: `client.query_and_wait("SELECT 1")`
timed alone, then again while another client's query (a 10^12-row sum that never finishes
here) runs on the same local BigQuery; the long query is cancelled afterwards. Before issue 9 a
running query held one global lock, so the second figure was the long query's whole run time.

    .venv/bin/python -m benchmarks bigquery_contention   [SAMPLES=200]
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

from google.api_core import exceptions
from google.cloud import bigquery

from vertexkit.local import LocalCloud

SAMPLES = int(os.environ.get("SAMPLES", 200))
LONG_QUERY = (
    "SELECT SUM(MOD(a * b, 7)) AS n FROM UNNEST(GENERATE_ARRAY(1, 1000000)) AS a, "
    "UNNEST(GENERATE_ARRAY(1, 1000000)) AS b"
)


def select_one_latencies(client: bigquery.Client) -> list[float]:
    seconds = []
    for _ in range(SAMPLES):
        started = time.perf_counter()
        list(client.query_and_wait("SELECT 1"))
        seconds.append(time.perf_counter() - started)
    return seconds


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def start_long_query(client: bigquery.Client) -> tuple[str, threading.Thread]:
    job_id = f"long_{uuid.uuid4().hex}"

    def run() -> None:
        config = bigquery.QueryJobConfig(job_timeout_ms=3_600_000)
        try:
            client.query(LONG_QUERY, job_id=job_id, job_config=config, job_retry=None).result()
        except exceptions.GoogleAPICallError:
            pass  # cancelled at the end of the measurement

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    while True:  # measure only once the long query is really running
        try:
            if client.get_job(job_id).state == "RUNNING":
                return job_id, thread
        except exceptions.NotFound:
            pass
        time.sleep(0.01)


def measure(home: Path) -> dict[str, list[float]]:
    with LocalCloud(home=home) as cloud:
        client = cloud.context().bigquery_client()
        long_client = cloud.context().bigquery_client()
        list(client.query_and_wait("SELECT 1"))  # warm the connection pool
        alone = select_one_latencies(client)
        job_id, thread = start_long_query(long_client)
        try:
            busy = select_one_latencies(client)
            still_running = client.get_job(job_id).state == "RUNNING"
        finally:
            client.cancel_job(job_id)
            thread.join()
        assert still_running, "the long query ended during the measurement"
    return {"alone": alone, "during a long query": busy}


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        results = measure(Path(home))
    print(f"SELECT 1 through google-cloud-bigquery, {SAMPLES} calls each")
    print(f"{'':<22}{'p50':>10}{'p99':>10}{'mean':>10}")
    for name, seconds in results.items():
        p50, p99 = percentile(seconds, 0.5), percentile(seconds, 0.99)
        mean = statistics.fmean(seconds)
        print(f"{name:<22}{p50 * 1000:>8.1f}ms{p99 * 1000:>8.1f}ms{mean * 1000:>8.1f}ms")
    alone, busy = results["alone"], results["during a long query"]
    print(
        f"ratio (during / alone): p50 {percentile(busy, 0.5) / percentile(alone, 0.5):.2f}x, "
        f"p99 {percentile(busy, 0.99) / percentile(alone, 0.99):.2f}x"
    )


if __name__ == "__main__":
    main()
