"""When a recurring run is due: KFP's two triggers (backend/api/v2beta1/recurring_run.proto).

- `periodic_schedule.interval_second`: every N seconds from the start time (or the creation
  time), the first one N seconds after it, as KFP's ScheduledWorkflow controller counts;
- `cron_schedule.cron`: robfig/cron's six fields, seconds first, in UTC (the KFP server's zone
  on a cluster); `@every 30s` style descriptors are refused, with the field named.
The firing rules (catch-up, concurrency) follow the local Vertex scheduler's
(`vertexkit/local/vertex/pipelines/scheduler.py`): a fired time is never fired again, missed
times fire oldest first or only the latest, and a due time that finds every slot taken waits."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from croniter import croniter

from vertexkit.local.kfp.errors import invalid
from vertexkit.local.kfp.listing import epoch

Resource = dict


@dataclass(frozen=True)
class Trigger:
    start: float  # epoch seconds: no time at or before it (periodic: the count starts there)
    end: float | None
    interval: int | None = None
    cron: str | None = None  # croniter's order: five fields, then seconds

    def next_after(self, moment: float) -> float:
        if self.interval:
            if moment < self.start:
                return self.start + self.interval
            steps = int((moment - self.start) // self.interval) + 1
            return self.start + steps * self.interval
        base = datetime.fromtimestamp(max(moment, self.start - 1e-6), timezone.utc)
        return croniter(self.cron, base).get_next(datetime).timestamp()

    def due_between(self, after: float, until: float, limit: int = 100) -> list[float]:
        """Times in (after, until], oldest first, none past the end time."""
        times: list[float] = []
        moment = self.next_after(after)
        while moment <= until and len(times) < limit:
            if self.end is not None and moment > self.end:
                break
            times.append(moment)
            moment = self.next_after(moment)
        return times


def parse(trigger: Resource, created: float) -> Trigger:
    cron, periodic = trigger.get("cron_schedule"), trigger.get("periodic_schedule")
    if bool(cron) == bool(periodic):
        raise invalid(
            "recurring_run.trigger: exactly one of cron_schedule and periodic_schedule is required"
        )
    schedule, name = (cron, "cron_schedule") if cron else (periodic, "periodic_schedule")
    where = f"recurring_run.trigger.{name}"
    start = epoch(schedule.get("start_time")) if schedule.get("start_time") else None
    end = epoch(schedule.get("end_time")) if schedule.get("end_time") else None
    if start is not None and end is not None and end <= start:
        raise invalid(f"{where}.end_time must be after {where}.start_time")
    first = float(start) if start is not None else created
    last = float(end) if end is not None else None
    if periodic:
        try:
            interval = int(periodic.get("interval_second") or 0)
        except (TypeError, ValueError):
            raise invalid(f"{where}.interval_second: not a number") from None
        if interval < 1:
            raise invalid(f"{where}.interval_second must be at least 1, got {interval}")
        return Trigger(first, last, interval=interval)
    return Trigger(first, last, cron=_croniter_order(str(cron.get("cron") or ""), where))


def _croniter_order(text: str, where: str) -> str:
    fields = text.split()
    if len(fields) != 6:
        raise invalid(
            f"{where}.cron: {text!r} must have 6 fields, seconds first "
            "(second minute hour day-of-month month day-of-week)"
        )
    seconds, rest = fields[0], fields[1:]
    rest = ["*" if value == "?" else value for value in rest]  # robfig's "no specific value"
    expression = " ".join([*rest, seconds])
    if not croniter.is_valid(expression):
        raise invalid(f"{where}.cron: {text!r} is not a valid cron expression")
    return expression


def utc_now() -> float:
    return datetime.now(timezone.utc).timestamp()


def rfc3339(moment: float) -> str:
    value = datetime.fromtimestamp(moment, timezone.utc) + timedelta(0)
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")
