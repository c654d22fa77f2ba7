"""Running custom jobs: one thread per job moves it through Vertex's states while its
replicas run (see runner.py). Cancel and shutdown reach the thread through a stop event."""

from __future__ import annotations

import contextlib
import re
import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vertexkit.local.process_env import process_env
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.store import now_rfc3339
from vertexkit.local.vertex.training import gpus, models
from vertexkit.local.vertex.training.packages import PackageCache, PackageError
from vertexkit.local.vertex.training.runner import ClusterPlan, ClusterRun, Outcome, python_argv

# The command `CustomJob.from_local_script` builds for a custom (non-prebuilt) image: it pip
# installs the staged package from the /gcs FUSE mount. Run locally as written, it would
# upgrade pip in the user's own environment; it is run as the python package spec it means.
FROM_LOCAL_SCRIPT = re.compile(
    r"pip3 install -q --user /gcs/(?P<package>\S+) && python3 -m (?P<module>\S+)(?P<args>.*)$"
)


@dataclass
class JobControl:
    stop: threading.Event = field(default_factory=threading.Event)
    reason: str = "cancel"  # or "shutdown"
    thread: threading.Thread | None = None

    def outcome(self) -> Outcome:
        if self.reason == "shutdown":
            return Outcome(models.FAILED, models.CODE_INTERNAL, models.STOPPED_WITH_CLOUD)
        return Outcome(models.CANCELLED, models.CODE_CANCELLED, "CANCELED")


class JobLog:
    """`job.log` beside the replicas' logs: what the local cloud did and what it could not do."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / "job.log"
        directory.mkdir(parents=True, exist_ok=True)

    def __call__(self, message: str) -> None:
        with self.path.open("a") as log:
            log.write(f"{now_rfc3339()} {message}\n")


class Executor:
    def __init__(self, backend: VertexBackend) -> None:
        self.backend = backend
        self.root = backend.home / "training"
        self.packages = PackageCache(backend)  # shared across homes: see packages.py
        self.gpus = gpus.GpuAllocator(gpus.discover())
        self.controls: dict[str, JobControl] = {}
        self._lock = threading.Lock()

    # -- lifecycle of one job --------------------------------------------------------------
    def submit(self, name: str, work: Callable[[JobControl], None]) -> None:
        control = JobControl()
        control.thread = threading.Thread(
            target=self._guarded, args=(name, work, control), daemon=True, name=f"job-{name}"
        )
        with self._lock:
            self.controls[name] = control
        control.thread.start()

    def _guarded(self, name: str, work: Callable[[JobControl], None], control: JobControl) -> None:
        try:
            work(control)
        except Exception as exc:  # a bug must end the job, never leave it RUNNING
            self.finish(name, Outcome(models.FAILED, models.CODE_INTERNAL, f"internal: {exc!r}"))
        finally:
            with self._lock:
                self.controls.pop(name, None)

    def set_state(self, name: str, state: str) -> None:
        def change(job: dict[str, Any]) -> None:
            if not models.is_terminal(job) and job.get("state") != models.CANCELLING:
                models.set_state(job, state)

        self.backend.store.mutate(name, change)

    def finish(self, name: str, outcome: Outcome) -> None:
        def change(job: dict[str, Any]) -> None:
            if models.is_terminal(job):
                return
            models.set_state(job, outcome.state)
            if outcome.state != models.SUCCEEDED:
                models.set_error(job, outcome.code, outcome.message)

        with contextlib.suppress(Exception):  # the store may be closed at shutdown
            self.backend.store.mutate(name, change)

    def stop(self, name: str, reason: str) -> bool:
        with self._lock:
            control = self.controls.get(name)
        if control is None:
            return False
        control.reason = reason
        control.stop.set()
        return True

    def close(self) -> None:
        with self._lock:
            controls = list(self.controls.items())
        for name, _control in controls:
            self.stop(name, "shutdown")
        for _, control in controls:
            if control.thread:
                control.thread.join(timeout=10)

    # -- custom jobs -----------------------------------------------------------------------
    def start_custom_job(self, job: dict[str, Any]) -> None:
        self.submit(job["name"], lambda control: self._run_custom_job(job, control))

    def _run_custom_job(self, job: dict[str, Any], control: JobControl) -> None:
        name, job_id = job["name"], job["name"].rsplit("/", 1)[1]
        spec = job["jobSpec"]
        log = JobLog(self.root / job_id)
        self.set_state(name, models.PENDING)
        try:
            pool_argv = self.prepare_pools(spec, log)
        except PackageError as exc:
            self.finish(name, Outcome(models.FAILED, models.CODE_INVALID_ARGUMENT, str(exc)))
            return
        lease = self.gpus.acquire(name, spec, control.stop, log)  # PENDING while GPUs are busy
        if lease is None:
            self.finish(name, control.outcome())
            return
        plan = ClusterPlan(
            job_name=name,
            job_spec=spec,
            pool_argv=pool_argv,
            log_dir=self.root / job_id,
            base_env=self.base_env(),
            output_dir=(spec.get("baseOutputDirectory") or {}).get("outputUriPrefix"),
            device_env=lease.env,
        )
        try:
            self.set_state(name, models.RUNNING)
            outcome = self.cluster_run(plan, spec, control, log).run()
        finally:
            self.gpus.release(name)
        log(f"job ended {outcome.state}")
        self.finish(name, outcome)

    def cluster_run(
        self, plan: ClusterPlan, spec: dict[str, Any], control: JobControl, log: JobLog
    ) -> ClusterRun:
        scheduling = spec.get("scheduling") or {}
        return ClusterRun(
            plan,
            stop=control.stop,
            stop_reason=control.outcome,
            timeout=parse_duration(scheduling.get("timeout")),
            restart_on_failure=bool(scheduling.get("restartJobOnWorkerRestart")),
            log=log,
            groups=self.backend.processes,
        )

    def base_env(self) -> dict[str, str]:
        """What every replica starts from: the allow-list and the local cloud's endpoints."""
        return process_env(self.backend.cloud.env())

    def prepare_pools(self, spec: dict[str, Any], log: JobLog) -> dict[int, list[str]]:
        """argv per non-empty worker pool; installs python packages; logs local differences."""
        log("Cloud Storage FUSE (/gcs/...) is not mounted locally: use gs:// URIs.")
        pool_argv: dict[int, list[str]] = {}
        for pool, pool_spec in enumerate(spec.get("workerPoolSpecs") or []):
            if not int(pool_spec.get("replicaCount") or 0):
                continue
            note_machine(pool, pool_spec, log, self.gpus.inventory)
            pool_argv[pool] = self.pool_argv(pool, pool_spec, log)
        return pool_argv

    def pool_argv(self, pool: int, pool_spec: dict[str, Any], log: JobLog) -> list[str]:
        if "pythonPackageSpec" in pool_spec:
            package = pool_spec["pythonPackageSpec"]
            return self.package_argv(pool, package, log)
        container = pool_spec["containerSpec"]
        converted = from_local_script_package(container)
        if converted:
            log(
                f"workerpool{pool}: the from_local_script command pip-installs from /gcs; "
                "running it as a python package spec instead."
            )
            return self.package_argv(pool, {**container, **converted}, log)
        log(
            f"workerpool{pool}: no Docker here: image {container.get('imageUri')} is not pulled; "
            "its command runs in the local Python environment."
        )
        return python_argv(container["command"]) + list(container.get("args") or [])

    def package_argv(self, pool: int, package: dict[str, Any], log: JobLog) -> list[str]:
        log(
            f"workerpool{pool}: prebuilt image {package.get('executorImageUri')} is replaced by "
            "the local Python environment; installing the package URIs."
        )
        python = self.packages.python_for(list(package["packageUris"]))
        return [str(python), "-m", package["pythonModule"], *(package.get("args") or [])]


def note_machine(
    pool: int, pool_spec: dict[str, Any], log: JobLog, inventory: tuple[gpus.Gpu, ...] = ()
) -> None:
    """One line where this machine differs from the one asked for (no GPU, another GPU)."""
    machine = pool_spec.get("machineSpec") or {}
    accelerator = machine.get("acceleratorType")
    if not accelerator or accelerator == "ACCELERATOR_TYPE_UNSPECIFIED":
        return
    asked = f"workerpool{pool}: {machine.get('acceleratorCount', 1)} x {accelerator} requested"
    if not inventory or not gpus.is_gpu(accelerator):
        log(f"{asked}; no {'TPUs' if inventory else 'accelerators'} here: running on CPU.")
        return
    mismatch = gpus.describe_mismatch(accelerator, inventory)
    if mismatch:
        log(f"workerpool{pool}: {mismatch}")


def from_local_script_package(container: dict[str, Any]) -> dict[str, Any] | None:
    command = container.get("command") or []
    match = FROM_LOCAL_SCRIPT.search(command[-1]) if len(command) == 3 else None
    if not match or command[:2] != ["sh", "-c"]:
        return None
    return {
        "packageUris": [f"gs://{match['package']}"],
        "pythonModule": match["module"],
        "args": shlex.split(match["args"]) + list(container.get("args") or []),
        "executorImageUri": container.get("imageUri"),
    }


def parse_duration(value: str | None) -> float | None:
    """A protobuf Duration in JSON ("3600s", "1.5s") as seconds; None or 0 means no limit."""
    if not value:
        return None
    seconds = float(str(value).rstrip("s"))
    return seconds or None
