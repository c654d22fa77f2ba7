"""Runs a job's worker pools as local processes: one process per replica.

Each replica gets the environment Vertex gives it (AIP_* directories, CLOUD_ML_*, CLUSTER_SPEC,
TF_CONFIG, the container's env) plus the local cloud's endpoints, runs in its own process group
(so cancel also stops its children), and writes stdout and stderr to its own log file. The job
succeeds when every chief replica (worker pool 0) exits 0; any non-zero exit fails it, unless
`scheduling.restartJobOnWorkerRestart` asks for the job's replicas to be restarted (bounded).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vertexkit.local.processes import Group, ProcessGroups, wait_for_exit
from vertexkit.local.vertex.jobs import states
from vertexkit.local.vertex.jobs.lifecycle import Outcome

# A replica's exit wakes the job's thread at once (processes.wait_for_exit); this bounds how
# long a cancel or a scheduling.timeout waits to be seen.
STOP_CHECK_SECONDS = 0.05
KILL_GRACE_SECONDS = 2.0
CHIEF_DONE_GRACE_SECONDS = 1.0
MAX_RESTARTS = 3
LOG_TAIL_LINES = 20
# Vertex's names for worker pools 0-3 in TF_CONFIG.
TF_TASK_TYPES = ("chief", "worker", "ps", "evaluator")
# Variables Vertex sets itself: never inherited from the process that runs the local cloud.
RESERVED_PREFIXES = ("AIP_", "CLOUD_ML_")
RESERVED_NAMES = ("CLUSTER_SPEC", "TF_CONFIG")


@dataclass
class Replica:
    pool: int
    index: int
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    group: Group | None = None

    @property
    def label(self) -> str:
        return f"workerpool{self.pool}-{self.index}"

    def start(self, groups: ProcessGroups, owner: str) -> None:
        """Runs the replica as the leader of its own process group: stop() reaches its children."""
        with self.log_path.open("ab") as log:
            self.group = groups.spawn(
                self.argv,
                owner,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def returncode(self) -> int | None:
        return self.group.returncode() if self.group else None

    def stop(self) -> None:
        """Ends the replica's whole group, even when the replica itself already exited (its
        children may live on, or ignore SIGTERM)."""
        if self.group is not None:
            self.group.end(KILL_GRACE_SECONDS)

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        if not self.log_path.exists():
            return ""
        text = self.log_path.read_text(errors="replace")
        return "\n".join(text.rstrip().splitlines()[-lines:])


@dataclass
class ClusterPlan:
    """What to run: argv per worker pool (empty pools skipped) and the env shared by all."""

    job_name: str  # projects/P/locations/L/customJobs/ID (or hyperparameterTuningJobs/ID)
    job_spec: dict[str, Any]
    pool_argv: dict[int, list[str]]
    log_dir: Path
    base_env: dict[str, str]
    output_dir: str | None = None
    trial_id: str | None = None
    extra_args: list[str] = field(default_factory=list)
    trial_env: dict[str, str] = field(default_factory=dict)  # e.g. the hypertune metric file
    # (pool, index) -> the replica's device variables (gpus.Lease.env: CUDA_VISIBLE_DEVICES...)
    device_env: Callable[[int, int], dict[str, str]] | None = None

    @property
    def job_id(self) -> str:
        return self.job_name.rsplit("/", 1)[1]

    def replicas(self) -> list[Replica]:
        addresses = {
            pool: [f"127.0.0.1:{free_port()}" for _ in range(replica_count(self, pool))]
            for pool in self.pool_argv
        }
        self.log_dir.mkdir(parents=True, exist_ok=True)
        replicas = []
        for pool, argv in self.pool_argv.items():
            for index in range(len(addresses[pool])):
                env = self.replica_env(pool, index, addresses)
                label = f"workerpool{pool}-{index}.log"
                replicas.append(
                    Replica(pool, index, argv + self.extra_args, env, self.log_dir / label)
                )
        return replicas

    def replica_env(self, pool: int, index: int, addresses: dict[int, list[str]]) -> dict[str, str]:
        pool_spec = self.job_spec["workerPoolSpecs"][pool]
        inner = pool_spec.get("containerSpec") or pool_spec.get("pythonPackageSpec") or {}
        container_env = inner.get("env") or []
        env = {
            k: v
            for k, v in self.base_env.items()
            if not k.startswith(RESERVED_PREFIXES) and k not in RESERVED_NAMES
        }
        env.update({item["name"]: item.get("value", "") for item in container_env})
        env.update(self.vertex_env(pool, index, addresses))
        if self.device_env:
            env.update(self.device_env(pool, index))
        return env

    def vertex_env(self, pool: int, index: int, addresses: dict[int, list[str]]) -> dict[str, str]:
        task: dict[str, Any] = {"type": f"workerpool{pool}", "index": index}
        if self.trial_id:
            task["trial"] = self.trial_id
        cluster_spec = {
            "cluster": {f"workerpool{p}": hosts for p, hosts in addresses.items()},
            "environment": "cloud",
            "task": task,
            "job": self.job_spec,
        }
        tf_config = {
            "cluster": {TF_TASK_TYPES[p]: hosts for p, hosts in addresses.items()},
            "environment": "cloud",
            "task": {"type": TF_TASK_TYPES[pool], "index": index},
            "job": self.job_spec,
        }
        parts = self.job_name.split("/")  # projects/P/locations/L/...
        env = {
            "CLOUD_ML_JOB_ID": self.job_id,
            "CLOUD_ML_PROJECT_ID": parts[1],
            "CLOUD_ML_REGION": parts[3],
            "CLUSTER_SPEC": json.dumps(cluster_spec),
            "TF_CONFIG": json.dumps(tf_config),
            "PYTHONUNBUFFERED": "1",  # so the log (and a failed job's error) is up to date
        }
        if self.trial_id:
            env["CLOUD_ML_TRIAL_ID"] = self.trial_id
        env.update(self.trial_env)
        if self.output_dir:
            base = self.output_dir.rstrip("/")
            env["AIP_MODEL_DIR"] = f"{base}/model/"
            env["AIP_CHECKPOINT_DIR"] = f"{base}/checkpoints/"
            env["AIP_TENSORBOARD_LOG_DIR"] = f"{base}/logs/"
        return env


def replica_count(plan: ClusterPlan, pool: int) -> int:
    return int(plan.job_spec["workerPoolSpecs"][pool].get("replicaCount") or 0)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def python_argv(command: list[str], python: Path | None = None) -> list[str]:
    """`python`/`python3` run `python` (the job's own, see execution.job_python), else the local
    interpreter: the image's Python is not here."""
    if command and Path(command[0]).name in ("python", "python3", _versioned_python()):
        return [str(python or sys.executable), *command[1:]]
    return list(command)


def _versioned_python() -> str:
    return f"python{sys.version_info.major}.{sys.version_info.minor}"


class ClusterRun:
    """One run of every replica of a plan, until success, failure, timeout or a stop request."""

    def __init__(
        self,
        plan: ClusterPlan,
        stop: threading.Event,
        stop_reason: Callable[[], Outcome],
        timeout: float | None = None,
        restart_on_failure: bool = False,
        log: Callable[[str], None] = lambda _: None,
        groups: ProcessGroups | None = None,
    ) -> None:
        self.plan = plan
        self.groups = groups or ProcessGroups()
        self.stop = stop
        self.stop_reason = stop_reason
        self.timeout = timeout
        self.restart_on_failure = restart_on_failure
        self.log = log
        self.replicas: list[Replica] = []
        self.restarts = 0

    def run(self) -> Outcome:
        started = time.monotonic()
        self.replicas = self.plan.replicas()
        try:
            self._start_all()
            while True:
                outcome = self._check(started)
                if outcome:
                    return outcome
                wait_for_exit(self._running(), STOP_CHECK_SECONDS)
        finally:
            self._stop_all()

    def _start_all(self) -> None:
        for replica in self.replicas:
            replica.start(self.groups, self.plan.job_name)

    def _stop_all(self) -> None:
        for replica in self.replicas:
            replica.stop()

    def _running(self) -> list[Group]:
        return [r.group for r in self.replicas if r.group and r.returncode() is None]

    def _check(self, started: float) -> Outcome | None:
        if self.stop.is_set():
            return self.stop_reason()
        if self.timeout and time.monotonic() - started > self.timeout:
            return Outcome(
                states.FAILED,
                states.CODE_DEADLINE_EXCEEDED,
                f"Job timed out: it ran longer than scheduling.timeout ({self.timeout:g}s).",
            )
        failed = next((r for r in self.replicas if r.returncode() not in (None, 0)), None)
        if failed:
            return self._on_failure(failed)
        chiefs = [r for r in self.replicas if r.pool == 0]
        if all(r.returncode() == 0 for r in chiefs):
            self._let_others_finish()
            return Outcome(states.SUCCEEDED)
        return None

    def _on_failure(self, failed: Replica) -> Outcome | None:
        code = failed.returncode()
        if self.restart_on_failure and self.restarts < MAX_RESTARTS:
            self.restarts += 1
            self.log(
                f"{failed.label} exited with status {code}; restartJobOnWorkerRestart is set: "
                f"restarting the job's replicas (restart {self.restarts} of {MAX_RESTARTS})."
            )
            self._stop_all()
            self._start_all()
            return None
        tail = failed.log_tail()
        return Outcome(
            states.FAILED,
            states.CODE_INVALID_ARGUMENT,
            f"The replica {failed.label} exited with a non-zero status of {code}. "
            f"Last lines of its log ({failed.log_path}):\n{tail}",
        )

    def _let_others_finish(self) -> None:
        deadline = time.monotonic() + CHIEF_DONE_GRACE_SECONDS
        while (running := self._running()) and time.monotonic() < deadline:
            wait_for_exit(running, deadline - time.monotonic())
