"""Pipeline overhead: the built-in `training` pipeline end to end against its trainer run directly.

1. The `training` pipeline (what `vertexkit run training` runs: query, split and export, custom
   training, upload, evaluate, compare, deploy), compiled and run on an
   in-process local cloud with a fresh temp home, caching OFF, as `vertexkit run` runs it (a
   PipelineJob). Each task's time is its recorded start -> end.
2. The same trainer (`python -m tabular_trainer.task`, same hyperparameters) run directly as a
   script on the same rows: the train/validation/test Parquet shards that run 1 exported, copied
   to local files; AIP_MODEL_DIR is a temp folder. Median of a few runs.
3. The pipeline twice more with caching ON: a cold run that fills the cache, then a run whose
   tasks are all served from it.

Per-task overhead = (pipeline wall time - direct trainer time) / tasks executed: what the
pipeline adds, per step, to the work the trainer does anyway (the other steps' own work, e.g.
BigQuery export and evaluation, counts as overhead here).

    .venv/bin/python -m benchmarks.pipeline_overhead     (about 2 minutes)
"""

from __future__ import annotations

import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vertexkit.runner import FinishedRun, prepare, run_pipeline_job

PIPELINE = "training"
SPLITS = ("train", "validation", "test")
DIRECT_REPEATS = 3
TRAINER_ARGS = ("label_column", "framework", "model_type", "n_estimators", "max_depth")


@dataclass
class TaskTimes:
    """Wall seconds per task, and which of them ran a process (the rest came from the cache)."""

    seconds: dict[str, float] = field(default_factory=dict)
    executed: list[str] = field(default_factory=list)


def task_times(job: dict[str, Any]) -> TaskTimes:
    """Each task's recorded start -> end, from the finished PipelineJob's task details."""
    times = TaskTimes()
    details = job.get("jobDetail", {}).get("taskDetails", [])
    parents = {task.get("parentTaskId") for task in details}
    for task in details:
        if not task.get("parentTaskId"):
            continue  # the root: the whole run, not a task
        name = task["taskName"]
        if task.get("startTime") and task.get("endTime"):
            times.seconds[name] = _instant(task["endTime"]) - _instant(task["startTime"])
        # executed: an executor task that ran, not one served from the cache (SKIPPED,
        # Vertex's word for a cache hit), not triggered, nor a DAG (a condition or loop group)
        ran = task.get("state") not in ("SKIPPED", "NOT_TRIGGERED")
        if ran and task["taskId"] not in parents:
            times.executed.append(name)
    return times


def _instant(rfc3339: str) -> float:
    return datetime.datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


@dataclass
class PipelineTiming:
    seconds: float
    tasks: TaskTimes
    run: FinishedRun
    custom_job_seconds: float | None


def run_pipeline(home: Path, enable_caching: bool, log: Path) -> PipelineTiming:
    """One run as `vertexkit run` makes it (a PipelineJob on an in-process local cloud);
    its progress lines go to `log` to keep the figures readable."""
    pipeline_yaml, params = prepare(PIPELINE, [])
    job_seconds: list[float] = []
    started = time.perf_counter()
    with log.open("a") as sink:
        run = run_pipeline_job(
            PIPELINE,
            params,
            pipeline_yaml,
            home=home,
            enable_caching=enable_caching,
            emit=lambda line: print(line, file=sink),
            while_running=lambda run: job_seconds.extend(custom_job_seconds(run)),
        )
    seconds = time.perf_counter() - started
    timing = task_times(run.job)
    return PipelineTiming(seconds, timing, run, job_seconds[-1] if job_seconds else None)


def custom_job_seconds(run: FinishedRun) -> list[float]:
    """startTime -> endTime of each custom job the local Vertex ran, oldest first."""
    client = run.context.job_client()
    jobs = sorted(client.list_custom_jobs(parent=run.context.parent), key=lambda j: j.create_time)
    return [
        (job.end_time - job.start_time).total_seconds()
        for job in jobs
        if job.start_time and job.end_time
    ]


def copy_exported_splits(run: FinishedRun, home: Path, target: Path) -> dict[str, Path]:
    """The Parquet shards the pipeline exported, as plain local files: {split: folder}."""
    test_glob = run.outputs["test_data"]["uri"]  # gs://BUCKET/.../run-ID/test/data-*.parquet
    bucket, _, name = test_glob.removeprefix("gs://").partition("/")
    test_folder = home / "storage" / bucket / Path(name).parent
    folders = {}
    for split in SPLITS:
        source = test_folder.parent / split
        shards = sorted(source.glob("*.parquet"))
        if not shards:
            raise RuntimeError(f"the pipeline exported no {split} shards under {source}")
        folders[split] = target / split
        folders[split].mkdir(parents=True)
        for shard in shards:
            shutil.copy2(shard, folders[split] / shard.name)
    return folders


def direct_trainer_seconds(run: FinishedRun, splits: dict[str, Path], work: Path) -> float:
    """Runs the trainer as a plain script with the pipeline's hyperparameters; wall seconds."""
    args = [f"--{name.replace('_', '-')}={run.params[name]}" for name in TRAINER_ARGS]
    command = [
        sys.executable,
        "-m",
        "tabular_trainer.task",
        f"--training-data-uri={splits['train']}/*.parquet",
        f"--validation-data-uri={splits['validation']}/*.parquet",
        f"--test-data-uri={splits['test']}/*.parquet",
        *args,
    ]
    model_dir = Path(tempfile.mkdtemp(prefix="model-", dir=work))
    env = {**os.environ, "AIP_MODEL_DIR": str(model_dir)}
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if not (model_dir / "model.joblib").is_file():
        raise RuntimeError(f"the direct trainer wrote no model.joblib to {model_dir}")
    return seconds


def median_of(repeats: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(repeats))


def task_table(timing: PipelineTiming) -> dict[str, float]:
    return dict(sorted(timing.tasks.seconds.items(), key=lambda item: -item[1]))


def main() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="vertexkit-bench-") as scratch:
        work = Path(scratch)
        log = work / "progress.log"
        try:
            uncached = run_pipeline(work / "home", enable_caching=False, log=log)
            splits = copy_exported_splits(uncached.run, work / "home", work / "data")
            trainer = median_of(
                DIRECT_REPEATS, lambda: direct_trainer_seconds(uncached.run, splits, work)
            )
            cold = run_pipeline(work / "home", enable_caching=True, log=log)
            cached = run_pipeline(work / "home", enable_caching=True, log=log)
        except Exception:
            print(log.read_text()[-4000:] if log.exists() else "(no progress log)")
            raise
    task_count = len(uncached.tasks.executed)
    figures = {
        "pipeline_s": uncached.seconds,
        "direct_trainer_s": trainer,
        "ratio": uncached.seconds / trainer,
        "tasks": task_count,
        "per_task_overhead_s": (uncached.seconds - trainer) / task_count,
        "custom_job_s": uncached.custom_job_seconds,
        "task_s": task_table(uncached),
        "outside_tasks_s": uncached.seconds - sum(uncached.tasks.seconds.values()),
        "cache_cold_s": cold.seconds,
        "cached_s": cached.seconds,
        "cached_tasks_executed": len(cached.tasks.executed),
    }
    report(figures)
    return figures


def report(figures: dict[str, Any]) -> None:
    print(f"pipeline overhead: `{PIPELINE}` pipeline vs its trainer run directly")
    print(f"  pipeline end to end (caching off)   {figures['pipeline_s']:8.2f} s")
    print(
        f"  trainer as a script (median of {DIRECT_REPEATS})   {figures['direct_trainer_s']:8.2f} s"
    )
    print(f"  ratio                               {figures['ratio']:8.1f} x")
    print(
        f"  per-task overhead                   {figures['per_task_overhead_s']:8.2f} s"
        f"  ((pipeline - trainer) / {figures['tasks']} tasks)"
    )
    if figures["custom_job_s"] is not None:
        print(f"  custom job start->end (local Vertex) {figures['custom_job_s']:7.2f} s")
    print("  per task (wall, caching off):")
    for task, seconds in figures["task_s"].items():
        print(f"    {task:<28} {seconds:6.2f} s")
    print(
        f"    {'(outside tasks)':<28} {figures['outside_tasks_s']:6.2f} s  (cloud start/stop, DAG)"
    )
    print(f"  caching on, cold cache              {figures['cache_cold_s']:8.2f} s")
    print(
        f"  caching on, second run              {figures['cached_s']:8.2f} s"
        f"  ({figures['cached_tasks_executed']} tasks executed, the rest from cache)"
    )


if __name__ == "__main__":
    main()
