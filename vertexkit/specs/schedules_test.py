from __future__ import annotations

from typing import Any

import pytest

from vertexkit.specs import Schedule, SpecError, validate_cron


@pytest.mark.parametrize(
    "cron",
    [
        "0 3 * * *",
        "*/15 9-17 * * MON-FRI",
        "CRON_TZ=Europe/Paris 0 3 1,15 * *",
        "TZ=America/New_York 30 2 * JAN-MAR 0",
        "0 0 * * 7",
    ],
)
def test_cron_accepted(cron: str) -> None:
    assert validate_cron(cron) == cron


@pytest.mark.parametrize(
    ("cron", "words"),
    [
        ("", "5 cron fields"),
        ("0 3 * *", "needs 5 fields"),
        ("0 3 * * * *", "needs 5 fields"),
        ("60 3 * * *", "minute must be in 0-59"),
        ("0 24 * * *", "hour must be in 0-23"),
        ("0 0 0 * *", "day of month must be in 1-31"),
        ("0 0 * 13 *", "month must be in 1-12"),
        ("0 0 * * FUNDAY", "day of week"),
        ("*/0 * * * *", "step must be a positive"),
        ("0 9-5 * * *", "runs backwards"),
        ("CRON_TZ=Mars/Olympus 0 3 * * *", "IANA"),
    ],
)
def test_cron_rejected(cron: str, words: str) -> None:
    with pytest.raises(SpecError) as caught:
        validate_cron(cron)
    assert caught.value.field == "cron" and words in str(caught.value)


BASE: dict[str, Any] = {"displayName": "nightly", "cron": "0 3 * * *", "maxConcurrentRunCount": "1"}


def test_schedule_round_trip() -> None:
    body = BASE | {
        "startTime": "2025-01-01T00:00:00Z",
        "endTime": "2025-02-01T00:00:00Z",
        "maxRunCount": "10",
    }
    schedule = Schedule.from_api(body)
    assert schedule.to_api()["maxRunCount"] == 10


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"startTime": "2025-02-01T00:00:00Z", "endTime": "2025-01-01T00:00:00Z"}, "endTime"),
        ({"startTime": "yesterday"}, "startTime"),
        ({"maxRunCount": 0}, "maxRunCount"),
        ({"maxConcurrentRunCount": 0}, "maxConcurrentRunCount"),
        ({"cron": "bad"}, "cron"),
        ({"displayName": ""}, "displayName"),
    ],
)
def test_schedule_rejected(change: dict[str, Any], field: str) -> None:
    with pytest.raises(SpecError) as caught:
        Schedule.from_api(BASE | change)
    assert caught.value.field == field
