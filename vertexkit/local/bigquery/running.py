"""Jobs between jobs.insert and DONE. Each runs in its own thread on its own DuckDB connection,
so a long query holds no lock that another call waits for, and can be interrupted: by its
`jobTimeoutMs`, by jobs.cancel, or by the service stopping. Only DONE jobs are stored, so a
restart never finds one RUNNING."""

from __future__ import annotations

import contextlib
import copy
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import duckdb

from vertexkit.local.bigquery.models import TableLocks
from vertexkit.local.bigquery.sql import QueryError, ScriptScope, TableName

INTERRUPT_EVERY_S = 0.05  # how often a stopped job's statement is interrupted until it ends
IDLE_THREAD_S = 30.0  # how long a job thread with no job waits for the next before it ends


def timeout_error(timeout_ms: int) -> QueryError:
    """BigQuery's answer for a job past its jobTimeoutMs."""
    seconds = f"{timeout_ms / 1000:g}"
    return QueryError(f"Job execution was cancelled: Job timed out after {seconds} sec", "timeout")


def cancelled_error() -> QueryError:
    return QueryError("Job execution was cancelled: User requested cancellation", "stopped")


def shutdown_error() -> QueryError:
    message = "Job execution was cancelled: the local BigQuery stopped while the job ran"
    return QueryError(message, "backendError")


def copy_tree(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars), a few times faster than
    copy.deepcopy, which keeps a memo for shared and cyclic objects a job body never has;
    anything else is handed to copy.deepcopy."""
    if isinstance(value, dict):
        return {key: copy_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_tree(item) for item in value]
    if value is None or isinstance(value, (str, int, float)):  # bool is an int
        return value
    return copy.deepcopy(value)


class RunningJob:
    def __init__(
        self,
        project: str,
        job: dict[str, Any],
        cursor: duckdb.DuckDBPyConnection,
        table_locks: TableLocks,
        parent: RunningJob | None = None,
    ) -> None:
        self.project = project
        self.parent = parent  # a script's job, for a child job: stopping it stops the child
        self.scope: ScriptScope | None = None  # a child's view of its script's objects
        self.extra_statistics: dict[str, Any] = {}  # parentJobId, numChildJobs
        self.job = job
        self.cursor = cursor
        self.table_locks = table_locks
        # What jobs.get answers until DONE: a copy, since the job thread keeps editing `job`.
        self.snapshot = copy_tree(job)
        self.started = time.time()
        self.recorded = False  # the DONE record was written in the job's own transaction
        self.done = threading.Event()
        self.stop_error: QueryError | None = None
        self._finishing = False
        self._lock = threading.Lock()  # stop() never interrupts a connection finish() closed
        self._timer: threading.Timer | None = None

    @property
    def job_id(self) -> str:
        return str(self.job["jobReference"]["jobId"])

    def resource(self) -> dict[str, Any]:
        return self.job if self.done.is_set() else self.snapshot

    def stop_after(self, timeout_ms: int) -> None:
        self._timer = threading.Timer(timeout_ms / 1000, self.stop, [timeout_error(timeout_ms)])
        self._timer.daemon = True
        self._timer.start()

    def stop(self, error: QueryError) -> None:
        """Interrupts the running statement; the job ends DONE with `error` (first one wins)."""
        with self._lock:
            if self._finishing or self.stop_error is not None:
                return
            self.stop_error = error
        # DuckDB's interrupt reaches only a statement already executing: one that starts a
        # moment later (the job thread was still translating) would run to its end. So keep
        # interrupting until the job thread has noticed and finished.
        threading.Thread(target=self._interrupt_until_done, daemon=True).start()

    def _interrupt_until_done(self) -> None:
        while not self.done.is_set():
            with self._lock:
                if self._finishing:
                    return
                self.cursor.interrupt()
            self.done.wait(INTERRUPT_EVERY_S)

    def raise_if_stopped(self) -> None:
        if self.stop_error is not None:
            raise self.stop_error
        if self.parent is not None:
            self.parent.raise_if_stopped()

    def finish(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._finishing = True
        with contextlib.suppress(duckdb.Error):
            self.cursor.close()
        self.done.set()

    @contextlib.contextmanager
    def transaction(self, *writes: TableName | None) -> Iterator[duckdb.DuckDBPyConnection]:
        """One job = one transaction: on any error or stop nothing it wrote survives. The
        tables it `writes` are locked for its length; reads need no lock."""
        targets = [name for name in writes if name is not None]
        with self.table_locks.holding(targets, self.raise_if_stopped):
            self.raise_if_stopped()
            cur = self.cursor
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
                self.raise_if_stopped()
            except BaseException:
                with contextlib.suppress(duckdb.Error):
                    cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")


class RunningJobs:
    """The jobs now running, by (project, job id)."""

    def __init__(self) -> None:
        self._jobs: dict[tuple[str, str], RunningJob] = {}
        self._lock = threading.Lock()

    def add(self, run: RunningJob) -> None:
        with self._lock:
            self._jobs[(run.project, run.job_id)] = run

    def remove(self, run: RunningJob) -> None:
        with self._lock:
            self._jobs.pop((run.project, run.job_id), None)

    def get(self, project: str, job_id: str) -> RunningJob | None:
        with self._lock:
            return self._jobs.get((project, job_id))

    def of_project(self, project: str) -> list[RunningJob]:
        with self._lock:
            return [run for (owner, _), run in self._jobs.items() if owner == project]

    def stop_all(self, wait_s: float) -> None:
        with self._lock:
            runs = list(self._jobs.values())
        for run in runs:
            run.stop(shutdown_error())
        for run in runs:
            run.done.wait(wait_s)


class JobThreads:
    """The threads jobs run on: every job gets a thread at once (a long job never waits for
    another), but a thread whose job ended waits up to `idle_s` for the next one instead of
    ending. A new thread per job cost about 0.5 ms of CPU per `SELECT 1`: the OS thread, and
    the per-thread state of DuckDB and malloc warmed up again each time."""

    def __init__(self, idle_s: float = IDLE_THREAD_S) -> None:
        self._idle_s = idle_s
        self._work: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._idle = 0  # threads waiting on `_work`; changed with `_lock` held
        self._lock = threading.Lock()
        self._closed = False

    def run(self, work: Callable[[], None], name: str) -> None:
        """Runs `work` on an idle thread, or on a new one (named `name`) when none is idle."""
        with self._lock:
            if self._idle:
                self._idle -= 1  # with the put, under the lock: a waiting thread's timeout
                self._work.put(work)  # check sees this item (see _loop)
                return
        threading.Thread(target=self._loop, args=(work,), daemon=True, name=name).start()

    def close(self) -> None:
        """Ends the idle threads; a thread still running a job ends after it."""
        with self._lock:
            self._closed = True
            for _ in range(self._idle):
                self._work.put(None)
            self._idle = 0

    def _loop(self, work: Callable[[], None] | None) -> None:
        while work is not None:
            work()
            work = self._next()

    def _next(self) -> Callable[[], None] | None:
        with self._lock:
            if self._closed:
                return None
            self._idle += 1
        try:
            return self._work.get(timeout=self._idle_s)
        except queue.Empty:
            with self._lock:
                try:  # given work just as the wait ended: run it
                    return self._work.get_nowait()
                except queue.Empty:
                    self._idle -= 1
                    return None
