"""Where the `custom-training-job` task's time goes in `vertexkit run training --no-cache`.

Runs the CLI as a user does (a subprocess, a fresh temp home each time), then reads the run's own
records to put the task on one timeline: the task's start and end (the pipeline job's
events.jsonl), the executor's first line and the moment it saw the job end (driver.log), the
CustomJob's createTime / startTime / endTime (the local Vertex store), and the trainer's first
and last log lines (the replica's log). Each piece is the gap between two neighbouring marks;
the medians of the runs are printed. The floor, measured after each run so both see the same
load: the trainer as a plain script with the job's own arguments, on the Parquet files that run
exported, read from the local Cloud Storage's folder (`benchmarks.pipeline_overhead`'s floor).

    .venv/bin/python -m benchmarks.replica_timeline [RUNS]     (about 20 s a run on 2 cores)
"""

from __future__ import annotations

import datetime
import itertools
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

TASK = "custom-training-job"
VERTEXKIT = [sys.executable, "-m", "vertexkit.cli"]
# Marks in the order they happen; each piece is named after the gap that ends at its mark.
PIECES = (
    ("task_start", "-"),
    ("executor_input", "task process start, imports, executor input"),
    ("job_created", "spec built and validated, CustomJob created"),
    ("job_running", "PENDING: trainer environment, job thread"),
    ("trainer_first_line", "replica exec, imports, first data read"),
    ("trainer_last_line", "training, model written"),
    ("job_ended", "replica exit, job SUCCEEDED stored"),
    ("task_noticed", "the task's poll sees SUCCEEDED"),
    ("task_end", "outputs written, task exit noticed"),
)
LOG_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
EXECUTOR_STAMP = re.compile(r"\[KFP Executor (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO\]: (.*)")


def rfc3339(value: str) -> float:
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def log_time(stamp: str) -> float:
    """A logging asctime (local time, as the processes wrote it)."""
    return datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def task_events(job_dir: Path) -> dict[str, float]:
    marks = {}
    for line in (job_dir / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event.get("task") == TASK and event["event"] in ("task_started", "task_succeeded"):
            marks["task_start" if event["event"] == "task_started" else "task_end"] = rfc3339(
                event["time"]
            )
    return marks


def executor_marks(job_dir: Path) -> dict[str, float]:
    marks = {}
    for line in (job_dir / "driver.log").read_text().splitlines():
        match = EXECUTOR_STAMP.search(line) if line.startswith(f"[{TASK}]") else None
        if not match:
            continue
        if match[2].startswith("Got executor_input"):
            marks["executor_input"] = log_time(match[1])
        if match[2].endswith("JOB_STATE_SUCCEEDED"):
            marks["task_noticed"] = log_time(match[1])
    return marks


def custom_job(home: Path) -> dict:
    with sqlite3.connect(home / "vertex" / "vertex.sqlite") as store:
        (body,) = store.execute(
            "SELECT body FROM resources WHERE name LIKE '%/customJobs/%'"
        ).fetchone()
    return json.loads(body)


def trainer_marks(home: Path, job_id: str) -> dict[str, float]:
    log = home / "vertex" / "training" / job_id / "workerpool0-0.log"
    stamps = [m[1] for line in log.read_text().splitlines() if (m := LOG_STAMP.match(line))]
    return {"trainer_first_line": log_time(stamps[0]), "trainer_last_line": log_time(stamps[-1])}


def timeline(home: Path) -> dict[str, float]:
    (job_dir,) = [p for p in (home / "vertex" / "pipelineJobs").iterdir() if p.is_dir()]
    job = custom_job(home)
    marks = {**task_events(job_dir), **executor_marks(job_dir)}
    marks.update(
        job_created=rfc3339(job["createTime"]),
        job_running=rfc3339(job["startTime"]),
        job_ended=rfc3339(job["endTime"]),
        **trainer_marks(home, job["name"].rsplit("/", 1)[1]),
    )
    return marks


def pieces(marks: dict[str, float]) -> dict[str, float]:
    names = [name for name, _ in PIECES]
    return {after: marks[after] - marks[before] for before, after in itertools.pairwise(names)}


def run_once(scratch: Path, index: int) -> Run:
    home = scratch / f"home-{index}"
    started = time.perf_counter()
    subprocess.run(
        [*VERTEXKIT, "run", "training", "--no-cache", "--home", str(home)],
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - started
    marks = timeline(home)
    return Run(pieces(marks), marks["task_end"] - marks["task_start"], wall, home)


@dataclass
class Run:
    pieces: dict[str, float]
    task_seconds: float
    cli_seconds: float
    home: Path

    @property
    def running_seconds(self) -> float:
        """The job's RUNNING -> SUCCEEDED: the replica from exec to exit."""
        return sum(self.pieces[m] for m in ("trainer_first_line", "trainer_last_line", "job_ended"))


def local_argv(home: Path) -> list[str]:
    """The job's own trainer arguments, each gs:// URI turned into the local Cloud Storage's file
    path (what the replica reads through the API, read directly)."""
    spec = custom_job(home)["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]
    storage = home / "storage"
    return [arg.replace("gs://", f"{storage}/") for arg in spec["args"]]


def trainer_floor(home: Path, scratch: Path) -> float:
    """The trainer as a plain script on the same data and hyperparameters; wall seconds."""
    model_dir = tempfile.mkdtemp(prefix="model-", dir=scratch)
    command = [sys.executable, "-m", "tabular_trainer.task", *local_argv(home)]
    started = time.perf_counter()
    subprocess.run(command, env={**os.environ, "AIP_MODEL_DIR": model_dir}, check=True,
                   capture_output=True)  # fmt: skip
    return time.perf_counter() - started


def median(values: list[float]) -> float:
    return statistics.median(values)


def main(runs: int = 3) -> None:
    with tempfile.TemporaryDirectory(prefix="replica-timeline-") as scratch:
        results, floors = [], []
        for index in range(runs):  # interleaved, so both sides see the same load
            results.append(run_once(Path(scratch), index))
            floors.append(trainer_floor(results[-1].home, Path(scratch)))
    print(f"{TASK}: medians of {runs} runs of `vertexkit run training --no-cache` (fresh homes)")
    for name, what in PIECES[1:]:
        values = [r.pieces[name] for r in results]
        shown = " ".join(f"{v:5.2f}" for v in values)
        print(f"  {what:<48} {median(values):6.2f} s   ({shown})")
    floor = median(floors)
    running = median([r.running_seconds for r in results])
    task = median([r.task_seconds for r in results])
    print(f"  {'job RUNNING -> SUCCEEDED':<48} {running:6.2f} s   {running / floor:.2f}x the floor")
    print(f"  {'task start -> end':<48} {task:6.2f} s   {task / floor:.2f}x the floor")
    print(f"  {'floor: the trainer as a plain script':<48} {floor:6.2f} s")
    print(f"  {'whole CLI run':<48} {median([r.cli_seconds for r in results]):6.2f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
