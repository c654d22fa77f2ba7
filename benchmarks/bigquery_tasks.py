"""The two BigQuery tasks of the built-in training pipeline, RUNNING to SUCCEEDED (issue 13).

`vertexkit run training --no-cache` on a fresh home, REPEATS times; each run's
`bigquery-query-job` and `bigquery-export-dataset` seconds from the job's `events.jsonl`
(task_started to task_succeeded, as `vertexkit run` prints them), the whole run's wall seconds
and its CPU seconds (user + system of the process tree). Medians.

    .venv/bin/python -m benchmarks bigquery_tasks        [REPEATS=3]
    OTHER=/path/to/other/checkout .venv/bin/python -m benchmarks bigquery_tasks

With OTHER (a checkout with its own .venv), the runs alternate between that checkout and this
one, so both are measured in the same minutes on a shared machine.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPEATS = int(os.environ.get("REPEATS", 3))
TASKS = ("bigquery-query-job", "bigquery-export-dataset")
HERE = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def task_seconds(events_file: Path) -> dict[str, float]:
    """Each task's seconds from task_started to task_succeeded."""
    started: dict[str, dt.datetime] = {}
    seconds: dict[str, float] = {}
    for line in events_file.read_text().splitlines():
        event = json.loads(line)
        when = dt.datetime.fromisoformat(event["time"].replace("Z", "+00:00"))
        if event["event"] == "task_started":
            started[event["task"]] = when
        elif event["event"] == "task_succeeded" and event["task"] in started:
            seconds[event["task"]] = (when - started[event["task"]]).total_seconds()
    return seconds


def run_once(checkout: Path) -> dict[str, float]:
    """One fresh-home `vertexkit run training --no-cache` of `checkout`: its figures."""
    python = checkout / ".venv" / "bin" / "python"
    with tempfile.TemporaryDirectory(prefix="vk-bq-tasks-") as home:
        cpu_before, started = _children_cpu(), time.perf_counter()
        subprocess.run(
            [str(python), "-m", "vertexkit.cli", "run", "training", "--no-cache", "--home", home],
            cwd=checkout,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        wall, cpu = time.perf_counter() - started, _children_cpu() - cpu_before
        (events,) = Path(home).glob("vertex/pipelineJobs/*/events.jsonl")
        seconds = task_seconds(events)
    return {**{task: seconds[task] for task in TASKS}, "run wall": wall, "run CPU": cpu}


def main() -> None:
    checkouts = {"this": HERE}
    if os.environ.get("OTHER"):
        checkouts = {"other": Path(os.environ["OTHER"]).resolve(), **checkouts}
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    for _ in range(REPEATS):
        for name, checkout in checkouts.items():
            figures[name].append(run_once(checkout))
    print(f"medians of {REPEATS} fresh-home runs of `vertexkit run training --no-cache` (seconds)")
    columns = [*TASKS, "run wall", "run CPU"]
    print(f"{'':<8}" + "".join(f"{c:>26}" for c in columns))
    for name, runs in figures.items():
        cells = []
        for column in columns:
            values = sorted(run[column] for run in runs)
            cells.append(f"{statistics.median(values):.2f} ({values[0]:.2f}-{values[-1]:.2f})")
        print(f"{name:<8}" + "".join(f"{cell:>26}" for cell in cells))


if __name__ == "__main__":
    sys.exit(main())
