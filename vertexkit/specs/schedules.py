"""Schedule: Vertex's cron dialect and run limits (the scheduler itself is a later issue)."""

from __future__ import annotations

import re
import zoneinfo
from datetime import datetime
from functools import cache
from typing import Any

from pydantic import Field

from vertexkit.specs.base import SpecModel
from vertexkit.specs.errors import SpecError, join_path
from vertexkit.specs.naming import validate_display_name

MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
# (name, lowest, highest, names mapped to numbers from `lowest`)
CRON_FIELDS: tuple[tuple[str, int, int, tuple[str, ...]], ...] = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, MONTHS),
    ("day of week", 0, 6, DAYS),
)
ZONE_PREFIX = re.compile(r"^(CRON_TZ|TZ)=(\S+)\s+")


@cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def validate_cron(cron: Any, field: str = "cron") -> str:
    """`[CRON_TZ=Zone |TZ=Zone ]m h dom mon dow`, e.g. `CRON_TZ=Europe/Paris 0 3 * * MON-FRI`."""
    if not isinstance(cron, str) or not cron.strip():
        raise SpecError(field, "required: 5 cron fields, optionally after CRON_TZ=Zone or TZ=Zone")
    expression = cron.strip()
    prefix = ZONE_PREFIX.match(expression)
    if prefix:
        zone = prefix.group(2)
        if zone not in _zones():
            raise SpecError(
                field, f"unknown time zone {zone!r}; use an IANA name such as America/New_York"
            )
        expression = expression[prefix.end() :]
    parts = expression.split()
    if len(parts) != len(CRON_FIELDS):
        raise SpecError(
            field,
            "needs 5 fields (minute hour day-of-month month day-of-week), optionally after "
            f"CRON_TZ=Zone or TZ=Zone; got {len(parts)} in {cron!r}",
        )
    for part, (name, low, high, names) in zip(parts, CRON_FIELDS, strict=True):
        for item in part.split(","):
            _check_cron_item(item, name, low, high, names, field)
    return cron


def _cron_number(
    text: str, name: str, low: int, high: int, names: tuple[str, ...], field: str
) -> int:
    upper = text.upper()
    if upper in names:
        return names.index(upper) + low
    if not text.isdigit():
        raise SpecError(field, f"{name} value {text!r} is not a number in {low}-{high}")
    number = int(text)
    if name == "day of week" and number == 7:
        return 0  # 7 is Sunday too, as in standard cron
    if not low <= number <= high:
        raise SpecError(field, f"{name} must be in {low}-{high}; got {number}")
    return number


def _check_cron_item(
    item: str, name: str, low: int, high: int, names: tuple[str, ...], field: str
) -> None:
    base, _, step = item.partition("/")
    if step and (not step.isdigit() or int(step) < 1):
        raise SpecError(field, f"{name} step must be a positive number; got {item!r}")
    if base == "*":
        return
    start, dash, end = base.partition("-")
    first = _cron_number(start, name, low, high, names, field)
    if dash:
        last = _cron_number(end, name, low, high, names, field)
        if last < first:
            raise SpecError(field, f"{name} range {base!r} runs backwards")


def _timestamp(value: str, field: str) -> datetime:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise SpecError(
            field, f"must be an RFC 3339 timestamp like 2025-01-01T00:00:00Z; got {value!r}"
        ) from None


class Schedule(SpecModel):
    """A recurring run: cron, optional window, run limits."""

    display_name: str = ""
    cron: str = ""
    start_time: str | None = None
    end_time: str | None = None
    max_run_count: int | None = Field(default=None)
    max_concurrent_run_count: int = 1
    allow_queueing: bool | None = None
    catch_up: bool | None = None
    create_pipeline_job_request: dict[str, Any] | None = None

    def check(self, path: str) -> None:
        validate_display_name(self.display_name, join_path(path, "displayName"))
        validate_cron(self.cron, join_path(path, "cron"))
        start = (
            _timestamp(self.start_time, join_path(path, "startTime")) if self.start_time else None
        )
        end = _timestamp(self.end_time, join_path(path, "endTime")) if self.end_time else None
        if start and end and end <= start:
            raise SpecError(
                join_path(path, "endTime"), f"must be after startTime ({self.start_time})"
            )
        if self.max_run_count is not None and self.max_run_count < 1:
            raise SpecError(
                join_path(path, "maxRunCount"),
                f"must be at least 1 (or unset for no limit); got {self.max_run_count}",
            )
        if self.max_concurrent_run_count < 1:
            raise SpecError(
                join_path(path, "maxConcurrentRunCount"),
                f"must be at least 1; got {self.max_concurrent_run_count}",
            )
