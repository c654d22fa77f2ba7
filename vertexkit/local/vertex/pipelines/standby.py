"""A pipeline driver started before its job exists, so a run's first tasks find it warm.

A driver spends its first second importing kfp.local, and its warm task workers (`warm_tasks`)
several more importing the Google clients; until then the first tasks run in plain processes.
`vertexkit run` knows a job is coming as soon as its local cloud starts, while it still compiles
and checks the pipeline (seconds, on the CLI's core), so the local cloud it starts keeps one
driver on standby (`LocalCloud(standby_driver=True)`): started at once with its light task
worker (the `standby_workers` mode says what it does meanwhile: WARM, CLIENTS, LAZY below), it
waits for the folder of the job it will run on its stdin. The next job created takes it; a job
created when there is none (a second job, or a local cloud without a standby) starts its own
driver as before. A standby that no job took is ended with the local cloud.

`vertexkit local up` keeps none: a waiting driver and its workers hold about 0.5 GB.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from vertexkit.local.processes import Group, ProcessGroups

DRIVER_MODULE = "vertexkit.local.vertex.pipelines.driver"
# What the standby's task workers do before its job comes (`driver.standby`, `--workers MODE`):
WARM = "warm"  # start at once (every task will run: a new home, or caching off)
CLIENTS = "clients"  # ... and import the BigQuery and custom-job clients (the pipeline uses them)
LAZY = "lazy"  # start with the first task that runs (a rerun, likely served from the cache)
WORKERS_FLAG = "--workers"
STANDBY_OWNER = "pipelineJobs/standby"
END_GRACE_SECONDS = 1.0


class DriverStandby:
    """At most one standby driver; `take()` hands it a job folder (or returns None)."""

    def __init__(
        self,
        processes: ProcessGroups,
        env: Callable[[], dict[str, str]],
        storage_home: Path,
        log: Path,
    ) -> None:
        self.processes = processes
        self.env = env  # the drivers' environment: known once the local cloud has its port
        self.storage_home = storage_home
        self.log = log
        self._group: Group | None = None
        self._lock = threading.Lock()

    def start(self, workers: str = WARM) -> None:
        """Starts the standby driver, unless one is already waiting; `workers` (WARM, CLIENTS,
        LAZY) says what its task workers do before the job comes."""
        with self._lock:
            if self._group is None:
                self._group = self._spawn([WORKERS_FLAG, workers])

    def waiting(self) -> int | None:
        """The pid of the standby driver waiting for a job, if any."""
        with self._lock:
            return self._group.pid if self._group is not None else None

    def take(self, job_dir: Path) -> Group | None:
        """The standby driver, now running the job in `job_dir`; None when there is none (or it
        has died), and the caller starts a driver of its own."""
        with self._lock:
            group, self._group = self._group, None
        if group is None:
            return None
        try:
            assert group.process.stdin is not None
            group.process.stdin.write(f"{job_dir}\n".encode())
            group.process.stdin.close()
        except (OSError, ValueError):
            group.end(END_GRACE_SECONDS)
            return None
        return group

    def close(self) -> None:
        with self._lock:
            group, self._group = self._group, None
        if group is not None:
            group.end(END_GRACE_SECONDS)  # nothing ran in it: its workers hold no work

    def _spawn(self, flags: list[str]) -> Group:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            # Its own process group, as every driver: cancelling its job ends it and its tasks.
            return self.processes.spawn(
                [sys.executable, "-m", DRIVER_MODULE, "--standby", str(self.storage_home), *flags],
                STANDBY_OWNER,
                env=self.env(),
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
