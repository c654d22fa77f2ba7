"""Fires schedules: a thread that, every `interval` seconds, starts the runs that are due.

State lives in the ResourceStore, so a restart picks up where it left off. Each schedule keeps a
private cursor (`_cursor`: the last scheduled time it dealt with); every fired scheduled time is
also written as its own resource (`<schedule>/firings/<epoch seconds>`) whose primary key makes a
second firing of the same time impossible, even across restarts.

What fires on a tick (times in (cursor, now]):
- normally only the latest due time; older ones, missed while the local cloud was down, are
  skipped (a laptop asleep for a day must not start 1440 runs of `* * * * *`);
- after `resume` with catch_up, or with allow_queueing, every due time in order, each waiting
  for a free slot under max_concurrent_run_count;
- otherwise a due time that finds max_concurrent_run_count runs active is skipped.
The clock is injectable (`clock`), so tests drive time instead of waiting for it.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from vertexkit.local.ticker import Ticker
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.pipelines import models
from vertexkit.local.vertex.store import Resource
from vertexkit.specs.cron import Cron

log = logging.getLogger(__name__)
Clock = Callable[[], datetime]
StartRun = Callable[[Resource, datetime], Resource]  # (schedule, scheduled time) -> job


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class Scheduler:
    def __init__(self, backend: VertexBackend, start_run: StartRun, interval: float = 1.0) -> None:
        self.backend = backend
        self.start_run = start_run
        self.clock: Clock = utc_now
        self.interval = interval
        self._tick_lock = threading.Lock()
        self._ticker = Ticker(self.tick, interval, "vertex-scheduler")

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._ticker.start()

    def close(self) -> None:
        self._ticker.close()

    # -- firing ----------------------------------------------------------------------------------
    def tick(self) -> list[str]:
        """Starts every run due at `clock()`; returns the names of the pipeline jobs started."""
        with self._tick_lock:
            now = self.clock()
            started: list[str] = []
            for schedule in self.backend.store.list(models.SCHEDULES):
                if schedule.get("state") == models.ACTIVE:
                    started.extend(self._tick_schedule(schedule["name"], now))
            return started

    def _tick_schedule(self, name: str, now: datetime) -> list[str]:
        schedule = self.backend.store.get(name)
        cron = Cron.parse(schedule["cron"])
        cursor = models.parse_time(schedule["_cursor"])
        due = cron.due_between(cursor, now)
        in_order = bool(schedule.get("_backfill") or schedule.get("allowQueueing"))
        if not in_order and len(due) > 1:
            cursor = due[-2]  # missed while down: skip all but the latest
            due = due[-1:]
        started: list[str] = []
        waiting = False
        for moment in due:
            if self._completes(schedule, moment):
                break
            if self._active_runs(name) >= run_limit(schedule):
                if in_order:
                    waiting = True
                    break
                cursor = moment  # Vertex skips a run that finds every slot taken
                continue
            job = self._fire(schedule, moment)
            cursor = moment
            if job:
                started.append(job["name"])
                schedule = self.backend.store.get(name)
        self._save_progress(name, cursor, cron, now, backfill_done=not waiting)
        return started

    def _completes(self, schedule: Resource, moment: datetime) -> bool:
        """True (and the schedule is COMPLETED) when max_run_count or end_time is reached."""
        max_runs = int(schedule.get("maxRunCount") or 0)
        end = schedule.get("endTime")
        reached_count = max_runs and int(schedule.get("startedRunCount") or 0) >= max_runs
        past_end = end and moment > models.parse_time(end)
        if reached_count or past_end:
            self.backend.store.mutate(schedule["name"], _complete)
            return True
        return False

    def _active_runs(self, schedule_name: str) -> int:
        return sum(
            1
            for job in self.backend.store.list(models.PIPELINE_JOBS)
            if job.get("scheduleName") == schedule_name and not models.is_terminal(job)
        )

    def _fire(self, schedule: Resource, moment: datetime) -> Resource | None:
        firing = f"{schedule['name']}/firings/{int(moment.timestamp())}"
        try:
            self.backend.store.insert(
                models.FIRINGS, firing, {"name": firing, "scheduledRunTime": _iso(moment)}
            )
        except sqlite3.IntegrityError:
            return None  # already fired (before a restart): never twice
        try:
            job = self.start_run(schedule, moment)
            response = job["name"]
        except Exception as exc:  # the run could not start: Vertex records the error and goes on
            log.warning("schedule %s could not start its run: %s", schedule["name"], exc)
            job, response = None, f"error: {exc}"

        def record(stored: Resource) -> None:
            if job:
                stored["startedRunCount"] = int(stored.get("startedRunCount") or 0) + 1
            stored["lastScheduledRunResponse"] = {
                "scheduledRunTime": _iso(moment),
                "runResponse": response,
            }

        self.backend.store.mutate(schedule["name"], record)
        return job

    def _save_progress(
        self, name: str, cursor: datetime, cron: Cron, now: datetime, backfill_done: bool
    ) -> None:
        def save(schedule: Resource) -> None:
            schedule["_cursor"] = _iso(cursor)
            if backfill_done:
                schedule.pop("_backfill", None)
            max_runs = int(schedule.get("maxRunCount") or 0)
            if max_runs and int(schedule.get("startedRunCount") or 0) >= max_runs:
                _complete(schedule)
            if schedule.get("state") != models.ACTIVE:
                return
            upcoming = cron.next_after(cursor)
            end = schedule.get("endTime")
            if end and upcoming > models.parse_time(end):
                _complete(schedule)
            else:
                schedule["nextRunTime"] = _iso(upcoming)

        self.backend.store.mutate(name, save)


def run_limit(schedule: Resource) -> int:
    """How many of its runs may be active at once: maxConcurrentRunCount, and
    maxConcurrentActiveRunCount ("the number of runs that can be in a non-terminal state at
    the same time", Schedule REST reference) when it is set and lower."""
    limit = int(schedule.get("maxConcurrentRunCount") or 1)
    active = int(schedule.get("maxConcurrentActiveRunCount") or 0)
    return min(limit, active) if active else limit


def initial_cursor(schedule: Resource, created: datetime) -> datetime:
    """Just before the first time a run may be scheduled: the start time or creation time."""
    start = schedule.get("startTime")
    first = models.parse_time(start) if start else created
    return first - timedelta(microseconds=1)


def _complete(schedule: Resource) -> None:
    schedule["state"] = models.COMPLETED
    schedule.pop("nextRunTime", None)


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
