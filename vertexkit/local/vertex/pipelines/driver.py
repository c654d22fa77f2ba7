"""Runs one pipeline job on vertexkit's executor of the IR, in its own process, and reports
task events.

    python -m vertexkit.local.vertex.pipelines.driver JOB_DIR

JOB_DIR/run.json holds the pipeline spec, parameter values, pipeline root and caching settings
(written by the local cloud). Task events go to JOB_DIR/events.jsonl, one JSON object a line,
which the local cloud tails into the job's `jobDetail.taskDetails`:
`task_started` (its id, its parent DAG task's id, display and unique names, input artifacts),
then `task_succeeded`, `task_cached`, `task_failed` or `task_not_triggered`, the outputs the way
Vertex reports them in `PipelineTaskDetail` (artifacts as `{name: {"artifacts": [...]}}`, output
parameters as `output:NAME` keys of the task's execution metadata).

The semantics are `executor`'s (the PipelineSpec IR as the KFP backend's driver gives it), each
executor task's `leaf`'s, each task's process `task_handler`'s (warm workers: `warm_tasks`);
Vertex's pipeline placeholders are `placeholders`'.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from vertexkit import gc_tuning
from vertexkit.kfp_loader import import_kfp
from vertexkit.local.vertex.pipelines import placeholders, task_handler
from vertexkit.local.vertex.pipelines.executor import (
    PipelineExecutor,
    RunSettings,
    json_value,
    vertex_artifacts,
)
from vertexkit.local.vertex.pipelines.leaf import Storage
from vertexkit.local.vertex.pipelines.standby import CLIENTS, LAZY, WARM, WORKERS_FLAG
from vertexkit.local.vertex.pipelines.task_envs import TaskEnvironments
from vertexkit.local.vertex.pipelines.task_main import GCS_MOUNT_ENV
from vertexkit.local.vertex.pipelines.warm_tasks import WarmWorkers, fork_available

RUN_FILE = "run.json"
EVENTS_FILE = "events.jsonl"
CACHE_FOLDER = "executor-cache"  # kfp.local kept its own cache beside, in another shape


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class EventLog:
    """Appends events to the JSON-lines file; flushed per line so the service sees them live."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, event: str, **fields: Any) -> None:
        line = json.dumps({"event": event, "time": _now(), **fields})
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()


def storage_root(settings: dict[str, Any]) -> str | None:
    """The local Cloud Storage folder that holds every bucket: the pipeline root's path less its
    `gs://` URI's bucket and path."""
    path, uri = settings["pipelineRoot"].rstrip("/"), settings.get("pipelineRootUri") or ""
    inside = uri.removeprefix("gs://").rstrip("/")
    if not uri.startswith("gs://") or not path.endswith("/" + inside):
        return None
    return path[: -len(inside) - 1]


def _configure_tasks(settings: dict[str, Any], workers: WarmWorkers | None) -> None:
    max_parallel = int(settings.get("maxParallel") or os.cpu_count() or 1)
    env_root = Path(settings.get("taskEnvRoot") or Path(settings["cacheRoot"]).parent / "task-envs")
    task_handler.configure(
        task_handler.HandlerSettings(
            environments=TaskEnvironments(env_root),
            gcs_mount=storage_root(settings),
            max_parallel=max_parallel,
            workers=workers,
        )
    )


def _start_task_workers(gcs_mount: str | None, lazy: bool = False) -> WarmWorkers | None:
    """The run's warm task workers (`warm_tasks`), or None: every task in a plain process.
    Started first, so they import their modules while the driver imports kfp.local; with
    `lazy`, with the first task that runs. The job's spec (`WarmWorkers.expect`) says what the
    full one imports."""
    if not fork_available():
        print(f"tasks run in plain processes: fork is not available on {sys.platform}")
        return None
    env = dict(os.environ)
    if gcs_mount:
        env[GCS_MOUNT_ENV] = gcs_mount
    return WarmWorkers(env, lazy=lazy)


def _read_settings(job_dir: Path) -> dict[str, Any]:
    return json.loads((job_dir / RUN_FILE).read_text())


def run(job_dir: Path) -> int:
    import_kfp()
    settings = _read_settings(job_dir)
    workers = None
    if settings.get("warmTasks", True):
        workers = _start_task_workers(storage_root(settings))
    return run_with(job_dir, settings, workers)


def run_with(job_dir: Path, settings: dict[str, Any], workers: WarmWorkers | None) -> int:
    """Runs the job with these task workers (None: plain processes); closes them at the end."""
    if workers is not None:
        workers.expect(settings["pipelineSpec"])
    try:
        events = EventLog(job_dir / EVENTS_FILE)
        _configure_tasks(settings, workers)
        return _run_pipeline(settings, events)
    finally:
        if workers is not None:
            workers.close()


def standby(storage_home: str, mode: str = WARM) -> int:
    """A driver started before its job (see `standby`): workers and kfp.local first, then the
    job's folder, one line on stdin (none: the local cloud closed without a job for it).
    `mode` (standby's WARM, CLIENTS, LAZY): what the task workers do meanwhile."""
    workers = _start_task_workers(storage_home, lazy=mode == LAZY)
    if workers is not None and mode == CLIENTS:
        workers.expect_clients()
    _import_executor()

    line = sys.stdin.readline().strip()
    if not line:
        if workers is not None:
            workers.close()
        return 0
    job_dir = Path(line)
    _log_to(job_dir / "driver.log")
    print(f"standby driver {os.getpid()}: running {job_dir.name}", flush=True)
    settings = _read_settings(job_dir)
    if workers is not None and not settings.get("warmTasks", True):
        workers.close()
        workers = None
    return run_with(job_dir, settings, workers)


def _import_executor() -> None:
    """What `run_with` imports, so the standby has done it when its job comes."""
    import_kfp()
    from vertexkit.local.vertex.pipelines import executor  # noqa: F401


def _log_to(path: Path) -> None:
    """This process's stdout and stderr to `path` from now on (the job's driver log)."""
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def executor_settings(settings: dict[str, Any]) -> RunSettings:
    root_uri = settings.get("pipelineRootUri") or settings["pipelineRoot"]
    cache_dir = Path(settings["cacheRoot"]) / CACHE_FOLDER if settings["enableCaching"] else None
    return RunSettings(
        spec=settings["pipelineSpec"],
        parameter_values=settings.get("parameterValues", {}),
        root_uri=root_uri,
        storage=Storage(storage_root(settings)),
        cache_dir=cache_dir,
        job_placeholders=placeholders.job_placeholders(settings),
        job_name=settings.get("pipelineJobName") or "",
        fail_fast=settings.get("failurePolicy") == "PIPELINE_FAILURE_POLICY_FAIL_FAST",
    )


def _run_pipeline(settings: dict[str, Any], events: EventLog) -> int:
    events.write("pipeline_started")
    runner = PipelineExecutor(executor_settings(settings), events.write)
    try:
        outcome = runner.run()
    except Exception as exc:  # a spec that cannot run ends the job FAILED with its reason
        traceback.print_exc()
        events.write("pipeline_failed", error=f"{type(exc).__name__}: {exc}")
        return 1
    if outcome.state != "SUCCEEDED":
        events.write(
            "pipeline_failed",
            error=outcome.error or "the pipeline failed",
            failures=[list(f) for f in runner.failures],
        )
        return 1
    # the pipeline's own outputs: its run execution's `output:NAME` and OUTPUT events
    events.write(
        "pipeline_succeeded",
        outputs=vertex_artifacts(outcome.io.artifacts),
        parameters=json_value(outcome.io.parameters),
    )
    return 0


def main(argv: list[str]) -> None:
    """`JOB_DIR`, or `--standby STORAGE_HOME [--workers MODE]`. Runs the job, then leaves
    without tearing the interpreter down: every event is flushed (EventLog writes through), and
    the local cloud marks the job ended when this process ends."""
    gc_tuning.collect_less_often()
    if argv[0] == "--standby":
        flags = dict(zip(argv[2::2], argv[3::2], strict=False))
        code = standby(argv[1], flags.get(WORKERS_FLAG, WARM))
    else:
        code = run(Path(argv[0]))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
