"""How soon a finished custom job is seen: by the local cloud, and by a task following it.

Each job's replica sleeps a while (a different time each run, so the polls meet the end at
different moments), writes the wall clock to a file and leaves with `os._exit(0)`: that instant
is "the process ended". Then, per job:

1. ended -> SUCCEEDED stored: the job's `endTime` (stamped when the local cloud records the end);
2. ended -> SUCCEEDED visible to GET: a client thread GETs the job every 5 ms;
3. ended -> the task noticed: `launch_and_wait`, as a component calls it (the real polling policy
   for the local cloud), returns.

Run: `.venv/bin/python -m benchmarks.job_notice` (about 30 s).
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from vertexkit.local import LocalCloud
from vertexkit.runtime.jobs import CUSTOM_JOB, launch_and_wait

REPEATS = 12
GET_INTERVAL_SECONDS = 0.005
# Sleeps spread over a poll cycle, so the end lands at different points of the task's backoff.
SLEEPS = [0.3 + 0.13 * i for i in range(REPEATS)]
REPLICA = "import os, sys, time; time.sleep(float(sys.argv[1])); {write}; os._exit(0)"
WRITE = "open(sys.argv[2], 'w').write(repr(time.time()))"


def custom_job(sleep: float, stamp: Path) -> dict[str, Any]:
    command = [sys.executable, "-c", REPLICA.format(write=WRITE), str(sleep), str(stamp)]
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {"imageUri": "benchmark", "command": command},
    }
    return {"displayName": "notice", "jobSpec": {"workerPoolSpecs": [pool]}}


class FirstSeen:
    """GETs every job it is told about until it is SUCCEEDED; remembers when it first was."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.seen: dict[str, float] = {}
        self.names: list[str] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            for name in [n for n in self.names if n not in self.seen]:
                if self.client.get_custom_job(name=name).state.name == "JOB_STATE_SUCCEEDED":
                    self.seen[name] = time.time()
            time.sleep(GET_INTERVAL_SECONDS)


def one_job(cloud: LocalCloud, watcher: FirstSeen, sleep: float, work: Path) -> dict[str, float]:
    stamp = work / f"ended-{sleep}"
    ctx = cloud.context()
    spec = custom_job(sleep, stamp)
    created: list[str] = []
    original_create = CUSTOM_JOB.create

    def create(client: Any, parent: str, job: Any) -> Any:  # tells the GET thread the name
        made = original_create(client, parent, job)
        created.append(made.name)
        watcher.names.append(made.name)
        return made

    api = dataclasses.replace(CUSTOM_JOB, create=create)
    job = launch_and_wait(ctx, api, spec, None)
    noticed = time.time()
    while created[0] not in watcher.seen:
        time.sleep(GET_INTERVAL_SECONDS)
    ended = float(stamp.read_text())
    return {
        "stored": job.end_time.timestamp() - ended,
        "visible": watcher.seen[created[0]] - ended,
        "noticed": noticed - ended,
    }


def main() -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as home, LocalCloud(home=home) as cloud:
        watcher = FirstSeen(cloud.context().job_client())
        thread = threading.Thread(target=watcher.run, daemon=True)
        thread.start()
        one_job(cloud, watcher, 0.1, Path(home))  # warm-up: first request, first thread
        rows = [one_job(cloud, watcher, sleep, Path(home)) for sleep in SLEEPS]
        watcher.done.set()
        thread.join()
    report = {
        key: {
            "median_s": statistics.median(r[key] for r in rows),
            "max_s": max(r[key] for r in rows),
        }
        for key in ("stored", "visible", "noticed")
    }
    print(f"custom job end noticed (replica exit -> ..., {REPEATS} jobs):")
    labels = {
        "stored": "SUCCEEDED stored (endTime)",
        "visible": "SUCCEEDED visible to GET",
        "noticed": "launch_and_wait returned",
    }
    for key, label in labels.items():
        figures = report[key]
        print(f"  {label:<28} median {figures['median_s']:.3f} s  max {figures['max_s']:.3f} s")
    return report


if __name__ == "__main__":
    main()
