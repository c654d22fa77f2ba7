"""One job's life: a thread runs its work; cancel and shutdown reach the thread through a stop
event; `finish` moves it to its end state once, whatever the work did (a bug included)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vertexkit.local.vertex.jobs import states
from vertexkit.local.vertex.store import ResourceStore, now_rfc3339


@dataclass
class Outcome:
    state: str
    code: int = 0
    message: str = ""


@dataclass
class JobControl:
    stop: threading.Event = field(default_factory=threading.Event)
    reason: str = "cancel"  # or "shutdown"
    thread: threading.Thread | None = None

    def outcome(self) -> Outcome:
        if self.reason == "shutdown":
            return Outcome(states.FAILED, states.CODE_INTERNAL, states.STOPPED_WITH_CLOUD)
        return Outcome(states.CANCELLED, states.CODE_CANCELLED, "CANCELED")


class JobLog:
    """`job.log` beside the replicas' logs: what the local cloud did and what it could not do."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / "job.log"
        directory.mkdir(parents=True, exist_ok=True)

    def __call__(self, message: str) -> None:
        with self.path.open("a") as log:
            log.write(f"{now_rfc3339()} {message}\n")


class JobExecutor:
    """Runs each job's work on a thread of its own and keeps its record's state."""

    def __init__(self, store: ResourceStore) -> None:
        self.store = store
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
            self.finish(name, Outcome(states.FAILED, states.CODE_INTERNAL, f"internal: {exc!r}"))
        finally:
            with self._lock:
                self.controls.pop(name, None)

    def set_state(self, name: str, state: str) -> None:
        def change(job: dict[str, Any]) -> None:
            if not states.is_terminal(job) and job.get("state") != states.CANCELLING:
                states.set_state(job, state)

        self.store.mutate(name, change)

    def finish(self, name: str, outcome: Outcome) -> None:
        def change(job: dict[str, Any]) -> None:
            if states.is_terminal(job):
                return
            states.set_state(job, outcome.state)
            if outcome.state != states.SUCCEEDED:
                states.set_error(job, outcome.code, outcome.message)

        with contextlib.suppress(Exception):  # the store may be closed at shutdown
            self.store.mutate(name, change)

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
