"""Cron in Vertex AI's dialect, and its translation to Kubeflow Pipelines' dialect.

Vertex: five fields (minute hour day-of-month month day-of-week), optionally prefixed with
`CRON_TZ=<IANA zone> ` or `TZ=<IANA zone> `; without a prefix the times are UTC.
Kubeflow Pipelines (robfig/cron): six fields, seconds first, and the zone is the KFP server's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from croniter import croniter

from vertexkit.specs.errors import SpecError
from vertexkit.specs.schedules import validate_cron

_PREFIX = re.compile(r"^(CRON_TZ|TZ)=(\S+)\s+(.*)$")
FIELD_NAMES = ("minute", "hour", "day-of-month", "month", "day-of-week")


class CronError(ValueError):
    """An expression Vertex would reject; the message says why and what is allowed."""


@dataclass(frozen=True)
class Cron:
    expression: str  # the five fields, without the time zone prefix
    zone: str  # IANA name; "UTC" when there is no prefix

    @classmethod
    def parse(cls, text: str) -> Cron:
        """Validates with the field-by-field rules of `schedules.validate_cron` (messages that
        name the field and its range), then with croniter, which the scheduler runs on."""
        try:
            validate_cron(text)
        except SpecError as exc:
            raise CronError(f"cron {exc.reason}") from None
        text = text.strip()
        zone = "UTC"
        prefixed = _PREFIX.match(text)
        if prefixed:
            zone, text = prefixed.group(2), prefixed.group(3).strip()
        if not croniter.is_valid(text):
            raise CronError(f"{text!r} is not a valid cron expression ({' '.join(FIELD_NAMES)})")
        return cls(" ".join(text.split()), zone)

    def times_after(self, moment: datetime) -> croniter:
        """Iterates the scheduled times strictly after `moment`, as aware datetimes."""
        local = moment.astimezone(ZoneInfo(self.zone))
        return croniter(self.expression, local)

    def next_after(self, moment: datetime) -> datetime:
        return self.times_after(moment).get_next(datetime).astimezone(timezone.utc)

    def due_between(self, after: datetime, until: datetime, limit: int = 1000) -> list[datetime]:
        """Scheduled times in (after, until], oldest first, at most `limit` of them."""
        times: list[datetime] = []
        iterator = self.times_after(after)
        while len(times) < limit:
            moment = iterator.get_next(datetime).astimezone(timezone.utc)
            if moment > until:
                break
            times.append(moment)
        return times


def validate(text: str) -> Cron:
    return Cron.parse(text)


def to_kubeflow(text: str) -> tuple[str, str | None]:
    """Vertex cron -> (KFP 6-field cron with seconds first, a note for the user or None).

    KFP has no per-schedule time zone: a prefixed zone is dropped and the note says so.
    """
    cron = Cron.parse(text)
    note = None
    if cron.zone != "UTC":
        note = (
            f"Kubeflow Pipelines runs cron in its server's time zone; {cron.zone} "
            "from the CRON_TZ/TZ prefix is not carried over"
        )
    return f"0 {cron.expression}", note


def first_after(cron: Cron, start: datetime) -> datetime:
    """The first scheduled time at or after `start`."""
    return cron.next_after(start - timedelta(microseconds=1))
