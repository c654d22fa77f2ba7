"""A no-op 7-task pipeline for `benchmarks.local_loop`: seven chained lightweight tasks that do
nothing but hand a small value on, so a run's time is the runner's own per-task cost.

Run as a user would: `vertexkit run benchmarks.noop_pipeline:noop_pipeline --no-cache` from the
repository root; `benchmarks.local_loop` also runs it under bare `kfp.local`.
"""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

from kfp import dsl

TASKS = 7


@dsl.component(base_image="python:3.11", install_kfp_package=False)
def pass_on(value: int) -> int:
    return value + 1


@dsl.pipeline(name="noop-chain")
def noop_pipeline(start: int = 0) -> int:
    task = pass_on(value=start)
    for _ in range(TASKS - 1):
        task = pass_on(value=task.output)
    return task.output
