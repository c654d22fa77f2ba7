from __future__ import annotations

from datetime import datetime, timezone

import pytest

from vertexkit.specs.cron import Cron, CronError, to_kubeflow

UTC = timezone.utc


def test_times_are_utc_without_prefix_and_local_with_one() -> None:
    start = datetime(2030, 1, 1, 0, 0, tzinfo=UTC)
    assert Cron.parse("0 3 * * *").next_after(start) == datetime(2030, 1, 1, 3, tzinfo=UTC)
    # 03:00 in New York in January is 08:00 UTC
    ny = Cron.parse("CRON_TZ=America/New_York 0 3 * * *").next_after(start)
    assert ny == datetime(2030, 1, 1, 8, tzinfo=UTC)
    assert Cron.parse("TZ=Europe/Paris 0 3 * * *").zone == "Europe/Paris"


def test_due_between_is_exclusive_then_inclusive() -> None:
    cron = Cron.parse("*/5 * * * *")
    after = datetime(2030, 1, 1, 0, 0, tzinfo=UTC)
    until = datetime(2030, 1, 1, 0, 20, tzinfo=UTC)
    assert [t.minute for t in cron.due_between(after, until)] == [5, 10, 15, 20]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "required: 5 cron fields"),
        ("* * * *", "needs 5 fields"),
        ("0 0 * * * *", "got 6 in"),
        ("60 * * * *", "minute must be in 0-59; got 60"),
        ("CRON_TZ=Nowhere/Land * * * * *", "unknown time zone"),
    ],
)
def test_refusals_say_why(text: str, message: str) -> None:
    with pytest.raises(CronError, match=message):
        Cron.parse(text)


def test_kubeflow_dialect_puts_seconds_first_and_says_what_it_drops() -> None:
    assert to_kubeflow("*/15 2 * * 1-5") == ("0 */15 2 * * 1-5", None)
    cron, note = to_kubeflow("CRON_TZ=Asia/Tokyo 0 9 * * *")
    assert cron == "0 0 9 * * *"
    assert note and "Asia/Tokyo" in note
