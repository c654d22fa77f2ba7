"""Runs pipeline jobs as separate processes (the `driver` module) and follows their events.

Each job gets a folder `home/pipelineJobs/<job id>/` with the run settings, the task events and
the driver's log. A watcher thread per job tails the events into the stored job, so
`PipelineJob.wait()` and `get` see task states as they change. Cancel kills the process group.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from vertexkit.local.processes import Group
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.pipelines import models, placeholders, run_metadata
from vertexkit.local.vertex.pipelines.driver import EVENTS_FILE, RUN_FILE
from vertexkit.local.vertex.pipelines.standby import DRIVER_MODULE
from vertexkit.local.vertex.store import Resource, now_rfc3339

# How often the driver's events are read into the stored job: a client polling every 0.1 s at
# most (runtime/polling.py) then sees a task's end within about 0.12 s. A read is one small file
# read.
POLL_SECONDS = 0.02
MAX_PARALLEL_LABEL = "vertexkit-max-parallel"
KILL_GRACE_SECONDS = 5.0


class PipelineRunner:
    def __init__(self, backend: VertexBackend) -> None:
        self.backend = backend
        self.jobs_home = backend.home / "pipelineJobs"
        self._processes: dict[str, Group] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()

    # -- lifecycle -----------------------------------------------------------------------------
    def fail_interrupted_jobs(self) -> None:
        """A job that was running when the local cloud stopped can never finish: mark it FAILED."""
        store = self.backend.store
        for job in store.list_not_in_states(models.PIPELINE_JOBS, models.TERMINAL_STATES):
            store.mutate(job["name"], _mark_stopped)

    def close(self) -> None:
        self._closing.set()
        with self._lock:
            names = list(self._processes)
        for name in names:
            self._kill(name)
        for thread in list(self._threads.values()):
            thread.join(timeout=KILL_GRACE_SECONDS + 2)

    # -- jobs ----------------------------------------------------------------------------------
    def start(
        self,
        job: Resource,
        pipeline_root: Path,
        enable_caching: bool,
        pipeline_root_uri: str | None = None,
    ) -> None:
        job_dir = self.jobs_home / job["name"].rsplit("/", 1)[-1]
        job_dir.mkdir(parents=True, exist_ok=True)
        settings = {
            "pipelineSpec": job["pipelineSpec"],
            "parameterValues": job.get("runtimeConfig", {}).get("parameterValues", {}),
            "pipelineRoot": str(pipeline_root),
            # artifacts are reported by their gs:// URI, as Vertex reports them
            "pipelineRootUri": pipeline_root_uri or self._gs_uri(pipeline_root),
            "enableCaching": enable_caching,
            "cacheRoot": str(self.backend.home / "kfp-cache"),
            "maxParallel": _max_parallel(job),
            "failurePolicy": job.get("runtimeConfig", {}).get("failurePolicy"),
            **placeholders.job_settings(job),  # what Vertex's placeholders resolve to
        }
        (job_dir / RUN_FILE).write_text(json.dumps(settings))
        (job_dir / EVENTS_FILE).write_text("")
        thread = threading.Thread(
            target=self._run, args=(job["name"], job_dir), daemon=True, name="pipeline-job"
        )
        self._threads[job["name"]] = thread
        thread.start()

    def _gs_uri(self, path: Path) -> str | None:
        """The gs:// URI of a folder of the local Cloud Storage (objects are plain files)."""
        try:
            return (
                "gs://" + path.resolve().relative_to(self.backend.storage.home.resolve()).as_posix()
            )
        except ValueError:
            return None

    def cancel(self, name: str) -> None:
        self._kill(name)

    def is_running(self, name: str) -> bool:
        with self._lock:
            return name in self._processes

    def _run(self, name: str, job_dir: Path) -> None:
        """Starts the job's driver and follows it to its end. Whatever goes wrong here ends the
        job FAILED with the cause: a thread that died in silence would leave it PENDING or
        RUNNING for ever, its driver gone."""
        try:
            self._start_and_follow(name, job_dir)
        except Exception as exc:
            traceback.print_exc()
            self._kill(name)
            with self._lock:
                self._processes.pop(name, None)
            reason = f"the local cloud stopped following the job: {type(exc).__name__}: {exc}"
            self.backend.store.mutate(name, lambda job: _fail_unless_done(job, reason))

    def _start_and_follow(self, name: str, job_dir: Path) -> None:
        if self.backend.store.get(name)["state"] == models.CANCELLING:  # cancelled while queued
            self.backend.store.mutate(name, _finish_cancelled)
            return
        try:
            process = self._spawn(name, job_dir)
        except OSError as exc:
            if self._closing.is_set():  # the cloud stopped under the spawn (its fds closing)
                self.backend.store.mutate(name, _mark_stopped_unless_done)
                return
            reason = f"could not start the pipeline process: {exc}"
            self.backend.store.mutate(name, lambda job: _fail(job, reason))
            return
        if self.backend.store.get(name)["state"] == models.CANCELLING:  # cancelled mid-spawn
            self._kill(name)
        follower = _EventFollower(self.backend, name, job_dir / EVENTS_FILE)
        while process.returncode() is None:
            follower.apply_new_events()
            time.sleep(POLL_SECONDS)
        follower.apply_new_events()
        returncode = process.end(KILL_GRACE_SECONDS)  # task processes the driver left behind
        with self._lock:
            self._processes.pop(name, None)
        if self._closing.is_set() and returncode != 0:
            self.backend.store.mutate(name, _mark_stopped_unless_done)
        else:
            self.backend.store.mutate(name, lambda job: follower.finish(job, returncode))

    def _spawn(self, name: str, job_dir: Path) -> Group:
        def launch(job: Resource) -> None:
            if job["state"] == models.QUEUED:
                models.set_state(job, models.PENDING)

        self.backend.store.mutate(name, launch)
        process = self.backend.driver_standby.take(job_dir) or self._spawn_driver(name, job_dir)
        with self._lock:
            self._processes[name] = process
        return process

    def _spawn_driver(self, name: str, job_dir: Path) -> Group:
        env = self.backend.driver_env()
        with (job_dir / "driver.log").open("ab") as log:
            # Its own process group (the task processes join it): cancel ends them all.
            process = self.backend.processes.spawn(
                [sys.executable, "-m", DRIVER_MODULE, str(job_dir)],
                name,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        return process

    def _kill(self, name: str) -> None:
        with self._lock:
            process = self._processes.get(name)
        if process is not None:
            process.end(KILL_GRACE_SECONDS)


class _EventFollower:
    """Applies the driver's events to the stored job, in order, as they arrive."""

    def __init__(self, backend: VertexBackend, name: str, events_path: Path) -> None:
        self.backend = backend
        self.name = name
        self.events_path = events_path
        self._offset = 0
        self._task_ids: dict[int, str] = {}
        self._failed_tasks: list[str] = []
        self._failure_causes: list[str] = []
        self._pipeline_error: str | None = None
        self._succeeded = False
        self._outputs: tuple[dict[str, Any], dict[str, Any]] = ({}, {})

    def apply_new_events(self) -> None:
        with self.events_path.open("rb") as events:
            events.seek(self._offset)
            data = events.read()
        complete = data[: data.rfind(b"\n") + 1]  # a half-written last line waits for next time
        self._offset += len(complete)
        parsed = [json.loads(line) for line in complete.splitlines() if line.strip()]
        if parsed:
            self.backend.store.mutate(self.name, lambda job: self._apply(job, parsed))

    def _apply(self, job: Resource, events: list[dict[str, Any]]) -> None:
        for event in events:
            self._apply_one(job, event)
        job["updateTime"] = now_rfc3339()

    def _apply_one(self, job: Resource, event: dict[str, Any]) -> None:
        kind, at = event["event"], event["time"]
        tasks = models.task_details(job)
        store = self.backend.store
        if kind == "pipeline_started":
            if job["state"] != models.CANCELLING:
                models.set_state(job, models.RUNNING)
            tasks.append(models.root_task(job, self._new_task_id()))
            run_metadata.start_run(store, job, run_parameters(job))
        elif kind in ("task_started", "task_not_triggered"):
            task = self._new_task(tasks, event, at)
            run_metadata.named_artifacts(store, job, task.get("inputs") or {})
            if kind == "task_not_triggered":
                models.set_task_state(task, models.TASK_NOT_TRIGGERED, at)
        elif kind in ("task_succeeded", "task_cached", "task_failed"):
            task = self._task(tasks, event["task_id"])
            state = {
                "task_succeeded": models.TASK_SUCCEEDED,
                "task_cached": models.TASK_SKIPPED,
                "task_failed": models.TASK_FAILED,
            }[kind]
            if task:
                models.set_task_state(task, state, at, event.get("error"))
                _record_outputs(task, event)
                run_metadata.named_artifacts(store, job, task.get("outputs") or {})
                run_metadata.task_execution(store, job, task)
            # a DAG task fails with its failed task: the job's error names the task itself
            if kind == "task_failed" and task is not None and not _has_children(tasks, task):
                self._failed_tasks.append(event["task"])
                self._failure_causes.append(event.get("error") or "")
        elif kind == "task_resources":
            task = self._task(tasks, event["task_id"])
            if task is not None and task.get("state") == models.TASK_RUNNING:
                _record_running_resources(task, event["gcp_resources"])
        elif kind == "pipeline_failed":
            self._pipeline_error = event.get("error")
        elif kind == "pipeline_succeeded":
            self._succeeded = True
            self._outputs = (event.get("parameters") or {}, event.get("outputs") or {})
            run_metadata.named_artifacts(store, job, self._outputs[1])

    def _new_task(self, tasks: list[Resource], event: dict[str, Any], at: str) -> Resource:
        """A task detail; its parent is its DAG task (a loop's, for an iteration's tasks)."""
        task_id = self._new_task_id()
        self._task_ids[event["task_id"]] = str(task_id)
        parent = self._task_ids.get(event.get("parent") or 0)
        task = {
            "taskId": str(task_id),
            "parentTaskId": parent or (tasks[0]["taskId"] if tasks else None),
            "taskName": event["task"],
            "taskUniqueName": event.get("unique", event["task"]),
            "createTime": at,
        }
        if event.get("inputs"):
            task["inputs"] = event["inputs"]
        models.set_task_state(task, models.TASK_RUNNING, at)
        tasks.append({k: v for k, v in task.items() if v is not None})
        return tasks[-1]

    def _new_task_id(self) -> int:
        return self.backend.store.next_counter(f"{self.name}/taskIds")

    def _task(self, tasks: list[Resource], driver_id: int) -> Resource | None:
        task_id = self._task_ids.get(driver_id)
        return next((t for t in tasks if t["taskId"] == task_id), None)

    def finish(self, job: Resource, returncode: int | None) -> None:
        """The process ended: the job's final state from what it reported (or didn't), and
        its run execution's."""
        self._finish_state(job, returncode)
        run_metadata.end_run(self.backend.store, job, *self._outputs)

    def _finish_state(self, job: Resource, returncode: int | None) -> None:
        if job["state"] == models.CANCELLING:
            _finish_cancelled(job)
        elif self._succeeded and returncode == 0:
            models.end_open_tasks(job, models.TASK_SUCCEEDED)
            models.set_state(job, models.SUCCEEDED)
        elif self._failed_tasks:
            models.end_open_tasks(job, models.TASK_FAILED)
            _fail(job, models.dag_failure_message(self._failed_tasks, self._failure_causes))
        else:
            reason = self._pipeline_error or f"the pipeline process exited with {returncode}"
            reason = models.plain_text(reason)
            models.end_open_tasks(job, models.TASK_FAILED)
            _fail(job, reason)


def run_parameters(job: Resource) -> dict[str, Any]:
    """The run's parameters: the values given, the root's defaults for the rest."""
    declared = job["pipelineSpec"].get("root", {}).get("inputDefinitions", {}).get("parameters")
    values = {
        name: spec["defaultValue"]
        for name, spec in (declared or {}).items()
        if "defaultValue" in spec
    }
    return {**values, **(job.get("runtimeConfig", {}).get("parameterValues") or {})}


def _max_parallel(job: Resource) -> int | None:
    """`vertexkit run --max-parallel N` travels as the job label MAX_PARALLEL_LABEL."""
    value = (job.get("labels") or {}).get(MAX_PARALLEL_LABEL, "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def _has_children(tasks: list[Resource], task: Resource) -> bool:
    return any(t.get("parentTaskId") == task["taskId"] for t in tasks)


def _record_outputs(task: Resource, event: dict[str, Any]) -> None:
    """Vertex's shape: artifacts in `outputs`, output parameters as `output:NAME` in the
    task's execution metadata (what the Vertex console and `task_details` show)."""
    if event.get("outputs"):
        task["outputs"] = event["outputs"]
    metadata = event.get("execution_metadata")
    if metadata is None and "execution" in task:  # a running task's, made by its resources
        task["execution"]["state"] = "FAILED"
    if metadata is not None:
        task["execution"] = {
            "displayName": task["taskName"],
            "state": "CACHED" if task["state"] == models.TASK_SKIPPED else "COMPLETE",
            "schemaTitle": "system.ContainerExecution",
            "metadata": metadata,
        }


def _record_running_resources(task: Resource, gcp_resources: str) -> None:
    """A running task's `gcp_resources` (its job, as its launcher wrote it) in its execution's
    metadata as `output:gcp_resources`, where the ended task shows it: a follower links the
    job while the task runs."""
    execution = task.setdefault(
        "execution",
        {"displayName": task["taskName"], "state": "RUNNING",
         "schemaTitle": "system.ContainerExecution", "metadata": {}},
    )  # fmt: skip
    execution.setdefault("metadata", {})["output:gcp_resources"] = gcp_resources


def _finish_cancelled(job: Resource) -> None:
    models.end_open_tasks(job, models.TASK_CANCELLED)
    job["error"] = {"code": models.CODE_CANCELLED, "message": "CANCELED"}
    models.set_state(job, models.CANCELLED)


def _fail_unless_done(job: Resource, message: str) -> None:
    if not models.is_terminal(job):
        models.end_open_tasks(job, models.TASK_FAILED)
        _fail(job, message)


def _fail(job: Resource, message: str) -> None:
    job["error"] = {"code": models.CODE_FAILED_PRECONDITION, "message": message}
    models.set_state(job, models.FAILED)


def _mark_stopped_unless_done(job: Resource) -> None:
    """The local cloud stopped under the job: a cancel asked for before ends CANCELLED, as it
    would have a moment later (the stop and the cancel both end its processes), else FAILED."""
    if job["state"] == models.CANCELLING:
        _finish_cancelled(job)
    elif not models.is_terminal(job):
        _mark_stopped(job)


def _mark_stopped(job: Resource) -> None:
    models.end_open_tasks(job, models.TASK_FAILED)
    job["error"] = {"code": models.CODE_INTERNAL, "message": models.STOPPED_WITH_CLOUD}
    models.set_state(job, models.FAILED)
