"""Job overhead and tuning quality on the local cloud.

1. Overhead: a no-op trainer run as a custom job (create -> SUCCEEDED, polled through the GAPIC
   client every 10 ms) against the same command run directly, interleaved in the same run.
2. Tuning: best `score` of the synthetic objective after 12 trials (3 in parallel), the
   default algorithm (TPE) against RANDOM_SEARCH, with the same seeds (label `vertexkit-seed`).

Run: `.venv/bin/python -m benchmarks.job_overhead` (about a minute).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from google.cloud import aiplatform_v1

from vertexkit.local import LocalCloud

TESTDATA = Path(__file__).parents[1] / "vertexkit/local/vertex/training/testdata"
NOOP = [sys.executable, "-c", "pass"]
TERMINAL = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}
REPEATS = 10
SEEDS = (1, 2, 3, 4, 5)


def pool(command: list[str], args: list[str] | None = None) -> dict[str, Any]:
    return {
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": 1,
        "container_spec": {"image_uri": "benchmark", "command": command, "args": args or []},
    }


def wait(get: Any, name: str) -> Any:
    while (job := get(name=name)).state.name not in TERMINAL:
        time.sleep(0.01)
    return job


def job_seconds(client: aiplatform_v1.JobServiceClient, parent: str) -> float:
    started = time.perf_counter()
    job = client.create_custom_job(
        parent=parent,
        custom_job={"display_name": "noop", "job_spec": {"worker_pool_specs": [pool(NOOP)]}},
    )
    job = wait(client.get_custom_job, job.name)
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    return time.perf_counter() - started


def direct_seconds() -> float:
    started = time.perf_counter()
    subprocess.run(NOOP, check=True)
    return time.perf_counter() - started


def overhead(client: aiplatform_v1.JobServiceClient, parent: str) -> dict[str, float]:
    job_seconds(client, parent)  # warm-up: first request, first thread
    jobs, direct = [], []
    for _ in range(REPEATS):
        jobs.append(job_seconds(client, parent))
        direct.append(direct_seconds())
    return {
        "job_median_s": statistics.median(jobs),
        "direct_median_s": statistics.median(direct),
        "added_median_s": statistics.median(jobs) - statistics.median(direct),
    }


def best_score(
    client: aiplatform_v1.JobServiceClient, parent: str, algorithm: str, seed: int
) -> float:
    study: dict[str, Any] = {
        "metrics": [{"metric_id": "score", "goal": "MAXIMIZE"}],
        "parameters": [
            {"parameter_id": "lr", "double_value_spec": {"min_value": 1e-5, "max_value": 1.0},
             "scale_type": "UNIT_LOG_SCALE"},
            {"parameter_id": "depth", "integer_value_spec": {"min_value": 1, "max_value": 20}},
            {"parameter_id": "optimizer", "categorical_value_spec": {"values": ["sgd", "adam"]}},
        ],
    }  # fmt: skip
    if algorithm != "DEFAULT":
        study["algorithm"] = algorithm
    job = client.create_hyperparameter_tuning_job(
        parent=parent,
        hyperparameter_tuning_job={
            "display_name": f"bench-{algorithm}-{seed}",
            "study_spec": study,
            "max_trial_count": 12,
            "parallel_trial_count": 3,
            "labels": {"vertexkit-seed": str(seed)},
            "trial_job_spec": {
                "worker_pool_specs": [pool(["python", str(TESTDATA / "objective.py")])]
            },
        },
    )
    job = wait(client.get_hyperparameter_tuning_job, job.name)
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    return max(t.final_measurement.metrics[0].value for t in job.trials)


def tuning(client: aiplatform_v1.JobServiceClient, parent: str) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for algorithm in ("DEFAULT", "RANDOM_SEARCH"):
        scores = [best_score(client, parent, algorithm, seed) for seed in SEEDS]
        results[algorithm] = {"best_per_seed": [round(s, 4) for s in scores],
                              "mean_best": round(statistics.mean(scores), 4)}  # fmt: skip
    return results


def main() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home, LocalCloud(home=home) as cloud:
        client = cloud.context().job_client()
        parent = cloud.context().parent
        report = {
            "overhead": overhead(client, parent),
            "tuning_best_after_12": tuning(client, parent),
        }
    print("job overhead (no-op trainer, median of", REPEATS, "runs):")
    for key, value in report["overhead"].items():
        print(f"  {key}: {value:.3f}")
    print("tuning, best score after 12 trials (optimum 0.5), seeds", SEEDS)
    for algorithm, values in report["tuning_best_after_12"].items():
        print(f"  {algorithm}: mean {values['mean_best']}  per seed {values['best_per_seed']}")
    return report


if __name__ == "__main__":
    main()
