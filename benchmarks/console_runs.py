"""The console's runs list with 200 pipeline runs vs the bare JSON list of the same runs.

200 finished runs of the `training` pipeline (its compiled spec, seven succeeded tasks each) are
written into the local Vertex store as the pipeline runner leaves them; running 200 real
pipelines would measure kfp, not the page. Then `GET /console/pipelines` (HTML, every run) and
`GET /v1/.../pipelineJobs?pageSize=200` (the REST list the SDK reads) are each timed end to end
over HTTP; p50 and p95 are printed. The issue's bar: the page loads in under a second.

    .venv/bin/python -m benchmarks.console_runs [--runs 200] [--requests 30]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import requests
import yaml

TASKS = [
    "bigquery-query-job",
    "bigquery-export-dataset",
    "custom-training-job",
    "upload-model",
    "evaluate-model",
    "compare-models",
    "deploy-model",
]
SPEC = Path(__file__).parents[1] / "compiled" / "training.yaml"


def finished_run(name: str, spec: dict[str, Any], index: int) -> dict[str, Any]:
    start = f"2026-11-{1 + index % 28:02d}T03:00:{index % 60:02d}.000000Z"
    end = f"2026-11-{1 + index % 28:02d}T03:01:{index % 60:02d}.000000Z"
    tasks = [{"taskId": "1", "taskName": "training", "state": "SUCCEEDED"}]
    tasks += [
        {
            "taskId": str(i + 2),
            "parentTaskId": "1",
            "taskName": task,
            "state": "SUCCEEDED",
            "startTime": start,
            "endTime": end,
        }
        for i, task in enumerate(TASKS)
    ]
    return {
        "name": name,
        "displayName": f"vertexkit-training-{index}",
        "pipelineSpec": spec,
        "runtimeConfig": {"gcsOutputDirectory": "gs://bench/root"},
        "state": "PIPELINE_STATE_SUCCEEDED",
        "createTime": start,
        "startTime": start,
        "endTime": end,
        "jobDetail": {"taskDetails": tasks},
    }


def timed(url: str, requests_count: int) -> dict[str, float]:
    session = requests.Session()
    session.get(url, timeout=60).raise_for_status()  # warm-up
    latencies = []
    for _ in range(requests_count):
        begin = time.perf_counter()
        response = session.get(url, timeout=60)
        latencies.append((time.perf_counter() - begin) * 1000)
        response.raise_for_status()
    latencies.sort()
    return {
        "p50_ms": statistics.median(latencies),
        "p95_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.95))],
        "kb": len(response.content) / 1024,
    }


def run(runs: int, requests_count: int) -> dict[str, dict[str, float]]:
    from vertexkit.local import LocalCloud

    spec = yaml.safe_load(SPEC.read_text())
    with tempfile.TemporaryDirectory() as home, LocalCloud(home=home) as cloud:
        parent = f"projects/{cloud.project}/locations/{cloud.region}"
        store = cloud.vertex.backend.store
        for index in range(runs):
            name = f"{parent}/pipelineJobs/training-bench-{index}"
            store.insert("pipelineJobs", name, finished_run(name, spec, index))
        return {
            "console page": timed(f"{cloud.url}/console/pipelines", requests_count),
            "JSON list": timed(
                f"{cloud.url}/v1/{parent}/pipelineJobs?pageSize={runs}", requests_count
            ),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()
    results = run(args.runs, args.requests)
    page, bare = results["console page"], results["JSON list"]
    for label, figures in results.items():
        print(
            f"{label:>13}: p50 {figures['p50_ms']:7.1f} ms, p95 {figures['p95_ms']:7.1f} ms, "
            f"{figures['kb']:8.0f} KiB ({args.runs} runs)"
        )
    print(f"console page / JSON list (p50): {page['p50_ms'] / bare['p50_ms']:.2f}x; target < 1 s")


if __name__ == "__main__":
    main()
