from __future__ import annotations

import itertools

import pytest
from google.api_core import exceptions as api_exceptions

from vertexkit.context import CloudContext
from vertexkit.runtime.polling import (
    LOCAL_CAP_SECONDS,
    Backoff,
    PollTimeout,
    cap_for,
    poll_until,
)

LOCAL = CloudContext("p", vertex_endpoint="http://127.0.0.1:1")
VERTEX = CloudContext("p")


def test_backoff_starts_sub_second_and_is_capped() -> None:
    delays = list(itertools.islice(Backoff(cap=1.0).delays(), 8))
    assert delays[0] == pytest.approx(0.2)
    assert delays == sorted(delays)
    assert max(delays) == 1.0
    assert delays[-1] == 1.0


@pytest.mark.parametrize(
    ("ctx", "first", "cap"),
    [
        pytest.param(LOCAL, 0.025, 0.1, id="local-cloud"),
        pytest.param(VERTEX, 0.2, 10.0, id="vertex"),
        pytest.param(None, 0.2, 10.0, id="no-context"),
    ],
)
def test_backoff_for_where_the_clients_point(
    ctx: CloudContext | None, first: float, cap: float
) -> None:
    delays = list(itertools.islice(Backoff(cap=cap_for(ctx)).delays(), 30))
    assert delays[0] == pytest.approx(first)
    assert max(delays) == pytest.approx(cap)


def test_a_local_job_end_is_seen_within_a_tenth_of_a_second() -> None:
    """No local delay is longer than the cap, and the cap leaves room for the GET that sees the
    end (a millisecond locally): well inside the issue's quarter second."""
    delays = list(itertools.islice(Backoff(cap=cap_for(LOCAL)).delays(), 100))
    assert max(delays) == LOCAL_CAP_SECONDS <= 0.1


def test_poll_until_returns_first_done_result_and_sleeps_with_backoff() -> None:
    states = iter(["QUEUED", "PENDING", "RUNNING", "SUCCEEDED", "never read"])
    slept: list[float] = []
    result = poll_until(
        lambda: next(states), lambda s: s == "SUCCEEDED", cap=0.5, sleep=slept.append
    )
    assert result == "SUCCEEDED"
    assert slept == pytest.approx([0.125, 0.2, 0.32])


def test_progress_starts_the_backoff_over_and_nothing_else_does() -> None:
    states = ["RUNNING"] * 4 + ["RUNNING, task 2"] * 2 + ["SUCCEEDED"]
    polls = iter(zip(states, itertools.count(), strict=False))
    slept: list[float] = []
    poll_until(
        lambda: next(polls),
        lambda poll: poll[0] == "SUCCEEDED",
        cap=0.5,
        sleep=slept.append,
        progress=lambda poll: poll[0],  # the second field changes on every poll: not progress
    )
    assert slept == pytest.approx([0.125, 0.2, 0.32, 0.5, 0.125, 0.2])


def test_transient_errors_are_retried_then_raised() -> None:
    calls = {"n": 0}

    def flaky() -> str:
        calls["n"] += 1
        if calls["n"] < 3:
            raise api_exceptions.ServiceUnavailable("blip")
        return "done"

    assert poll_until(flaky, lambda s: s == "done", sleep=lambda _: None) == "done"

    def always_down() -> str:
        raise ConnectionError("down")

    with pytest.raises(ConnectionError):
        poll_until(always_down, bool, sleep=lambda _: None)


def test_non_transient_errors_propagate_at_once() -> None:
    def missing() -> str:
        raise api_exceptions.NotFound("gone")

    with pytest.raises(api_exceptions.NotFound):
        poll_until(missing, bool, sleep=lambda _: pytest.fail("must not sleep"))


def test_timeout() -> None:
    with pytest.raises(PollTimeout, match="job did not finish"):
        poll_until(lambda: "RUNNING", lambda s: False, cap=0.05, timeout=0.2, describe="job")
