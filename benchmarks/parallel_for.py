"""Parallel branches: a `ParallelFor` of N sleeping lightweight tasks, run as `vertexkit run` runs
it, once with `--max-parallel 1` and once with the default (the core count), same process, fresh
homes, caching off.

Reported: the job's wall time (its start to end time) for each, and the task time summed, so the
speed-up is what running iterations at once saves; with `--max-parallel 1` the wall time is about
the sum of the tasks, with the default about sum / min(N, cores) plus the driver's start.

    .venv/bin/python -m benchmarks.parallel_for      (about 30 s)
"""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import os
import tempfile
from pathlib import Path

from kfp import compiler, dsl

from vertexkit import runner
from vertexkit.pipeline_jobs import duration_seconds

ITERATIONS = 4
NAP_SECONDS = 2.0


@dsl.component(base_image="python:3.11", install_kfp_package=False)
def nap(index: int, seconds: float) -> int:
    import time

    time.sleep(seconds)
    return index


@dsl.pipeline(name="parallel-naps")
def parallel_naps(seconds: float = NAP_SECONDS) -> None:
    with dsl.ParallelFor(list(range(ITERATIONS))) as index:
        nap(index=index, seconds=seconds).set_caching_options(False)


def timed_run(pipeline_yaml: str, max_parallel: int | None) -> tuple[float, float]:
    """(the job's wall seconds, the tasks' summed seconds)."""
    with tempfile.TemporaryDirectory() as home:
        run = runner.run_pipeline_job(
            "parallel_naps",
            {},
            pipeline_yaml,
            home=Path(home),
            emit=lambda line: None,
            max_parallel=max_parallel,
        )
    details = [t for t in run.job["jobDetail"]["taskDetails"] if t.get("parentTaskId")]
    return run.seconds, sum(duration_seconds(t) or 0.0 for t in details)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "parallel_naps.yaml"
        compiler.Compiler().compile(pipeline_func=parallel_naps, package_path=str(path))
        pipeline_yaml = path.read_text()
    print(f"{ITERATIONS} iterations x {NAP_SECONDS:.1f} s sleep, {os.cpu_count()} cores")
    results = {}
    for label, max_parallel in (("--max-parallel 1", 1), ("default", None)):
        wall, summed = timed_run(pipeline_yaml, max_parallel)
        results[label] = wall
        print(f"{label:<18} wall {wall:6.1f} s   tasks summed {summed:6.1f} s")
    speedup = results["--max-parallel 1"] / results["default"]
    print(f"speed-up of the default over --max-parallel 1: {speedup:.2f}x")


if __name__ == "__main__":
    main()
