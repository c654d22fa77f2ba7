"""Running custom jobs on the shared job executor (jobs/lifecycle.py): a job's thread moves it
through Vertex's states while its replicas run (see runner.py)."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

from vertexkit.local.process_env import process_env
from vertexkit.local.venvs import create_overlay
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.jobs import states
from vertexkit.local.vertex.jobs.lifecycle import JobControl, JobExecutor, JobLog, Outcome
from vertexkit.local.vertex.training import gpus
from vertexkit.local.vertex.training.dispositions import log_notes, record_on_run
from vertexkit.local.vertex.training.packages import PackageCache, PackageError
from vertexkit.local.vertex.training.runner import ClusterPlan, ClusterRun, python_argv

# The command `CustomJob.from_local_script` builds for a custom (non-prebuilt) image: it pip
# installs the staged package from the /gcs FUSE mount. Run locally as written, it would
# upgrade pip in the user's own environment; it is run as the python package spec it means.
FROM_LOCAL_SCRIPT = re.compile(
    r"pip3 install -q --user /gcs/(?P<package>\S+) && python3 -m (?P<module>\S+)(?P<args>.*)$"
)


class Executor(JobExecutor):
    """The shared job executor plus what custom jobs need: package environments and GPUs."""

    def __init__(self, backend: VertexBackend) -> None:
        super().__init__(backend.store)
        self.backend = backend
        self.root = backend.home / "training"
        self.packages = PackageCache(backend)  # shared across homes: see packages.py
        self.gpus = gpus.GpuAllocator(gpus.discover())

    # -- custom jobs -----------------------------------------------------------------------
    def start_custom_job(self, job: dict[str, Any]) -> None:
        """Starts a stored job (a CustomJob, or the backing job of a training pipeline); its
        ExperimentRun, if any, lists it from now on, as on Vertex."""
        record_on_run(self.backend.store, job)
        self.submit(job["name"], lambda control: self._run_custom_job(job, control))

    def _run_custom_job(self, job: dict[str, Any], control: JobControl) -> None:
        name, job_id = job["name"], job["name"].rsplit("/", 1)[1]
        spec = job["jobSpec"]
        log = JobLog(self.root / job_id)
        log_notes(spec, log, job)
        self.set_state(name, states.PENDING)
        try:
            pool_argv = self.prepare_pools(spec, log)
        except PackageError as exc:
            self.finish(name, Outcome(states.FAILED, states.CODE_INVALID_ARGUMENT, str(exc)))
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
            base_env=self.base_env(self.root / job_id),
            output_dir=(spec.get("baseOutputDirectory") or {}).get("outputUriPrefix"),
            device_env=lease.env,
        )
        try:
            self.set_state(name, states.RUNNING)
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
            # Scheduling.disableRetries (reference): "If true, overrides
            # Scheduling.restart_job_on_worker_restart to false."
            restart_on_failure=bool(scheduling.get("restartJobOnWorkerRestart"))
            and not scheduling.get("disableRetries"),
            log=log,
            groups=self.backend.processes,
        )

    def base_env(self, job_dir: Path) -> dict[str, str]:
        """What every replica starts from: the allow-list and the local cloud's endpoints, with
        the job's own Python first on PATH when its container command has one (`job_python`)."""
        env = process_env(self.backend.cloud.env())
        own = job_python_dir(job_dir) / "bin"
        if own.is_dir():
            env["PATH"] = str(own) + os.pathsep + env["PATH"]
        return env

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
        python = job_python(log)
        log(
            f"workerpool{pool}: no Docker here: image {container.get('imageUri')} is not pulled; "
            f"its command runs with this job's own Python, {python.parent.parent} (it sees "
            "vertexkit's libraries; what the command installs with pip stays there)."
        )
        return python_argv(container["command"], python) + list(container.get("args") or [])

    def package_argv(self, pool: int, package: dict[str, Any], log: JobLog) -> list[str]:
        log(
            f"workerpool{pool}: prebuilt image {package.get('executorImageUri')} is replaced by "
            "the local Python environment; installing the package URIs."
        )
        python = self.packages.python_for(list(package["packageUris"]))
        return [str(python), "-m", package["pythonModule"], *(package.get("args") or [])]


def job_python_dir(job_dir: Path) -> Path:
    return job_dir / "python"


def job_python(log: JobLog) -> Path:
    """The Python of a job's container commands: an overlay environment of the job's own
    (`venvs.create_overlay`, created once per job, a few ms), so `pip install` in a command (a
    KFP component's `packages_to_install` wrapped as a custom job) installs there, never into
    vertexkit's environment. `python`, `python3`, `pip` and `pip3` in its `bin` come first on the
    replicas' PATH; pip is vertexkit's own, run by this Python, so it installs into the overlay."""
    env_dir = job_python_dir(log.path.parent)
    python = env_dir / "bin" / "python"
    if python.exists():
        return python
    create_overlay(env_dir)
    for name in ("pip", "pip3"):
        script = env_dir / "bin" / name
        script.write_text(f'#!/bin/sh\nexec "{python}" -m pip "$@"\n')
        script.chmod(0o755)
    return python


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
