"""Polling long-running resources with exponential backoff: sub-second first, capped.

One policy everywhere; only the cap differs: against Vertex AI a poll costs quota and jobs take
minutes (cap 10 s); against the local cloud a poll is a local HTTP call of about a millisecond of
CPU (client and server), and a task or `vertexkit run` sees a job's end within about 0.1 s (cap
0.1 s: a custom job's task saw its end 0.1 s late on average with a 0.2 s cap, on the local
loop's critical path). The first delay is at most a quarter of the cap: 0.2 s against Vertex,
0.025 s locally (most local work ends sooner than 0.1 s).
A caller may name what counts as progress (`progress`: a pipeline's task states): progress seen
since the last poll starts the backoff over, as one step tends to follow another soon.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from google.api_core import exceptions as api_exceptions

if TYPE_CHECKING:
    from vertexkit.context import CloudContext

log = logging.getLogger(__name__)

T = TypeVar("T")

FIRST_DELAY_SECONDS = 0.2
FIRST_DELAY_SHARE_OF_CAP = 0.25
GROWTH = 1.6
CLOUD_CAP_SECONDS = 10.0
LOCAL_CAP_SECONDS = 0.1
TRANSIENT_RETRY_LIMIT = 5

# Errors a poll survives: the resource still exists, the network or server hiccuped.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    ConnectionError,
    api_exceptions.ServiceUnavailable,
    api_exceptions.InternalServerError,
    api_exceptions.TooManyRequests,
    api_exceptions.DeadlineExceeded,
)


_NOTHING_YET = object()


class PollTimeout(TimeoutError):
    """The resource did not reach a final state within the allowed time."""


@dataclass(frozen=True)
class Backoff:
    """Delays first, first*growth, ... up to cap; first is at most a quarter of the cap."""

    first: float = FIRST_DELAY_SECONDS
    growth: float = GROWTH
    cap: float = CLOUD_CAP_SECONDS

    def delays(self) -> Iterator[float]:
        delay = min(self.first, self.cap * FIRST_DELAY_SHARE_OF_CAP)
        while True:
            yield delay
            delay = min(delay * self.growth, self.cap)


def cap_for(ctx: CloudContext | None) -> float:
    """The backoff cap that suits where the clients point."""
    return LOCAL_CAP_SECONDS if ctx is not None and ctx.is_emulated else CLOUD_CAP_SECONDS


def poll_until(
    fetch: Callable[[], T],
    is_done: Callable[[T], bool],
    *,
    cap: float = CLOUD_CAP_SECONDS,
    timeout: float | None = None,
    describe: str = "resource",
    on_poll: Callable[[T], None] | None = None,
    progress: Callable[[T], object] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    transient: tuple[type[BaseException], ...] = TRANSIENT_ERRORS,
) -> T:
    """Calls `fetch` until `is_done(result)`, sleeping with backoff between calls.

    Transient errors (`transient`: connection resets, 429/500/503 as google.api_core raises
    them) are retried up to TRANSIENT_RETRY_LIMIT times in a row; anything else propagates.
    `timeout` (seconds) raises PollTimeout. A change in `progress(result)` starts the backoff
    over; without it the delays only grow (a resource whose GET changes on every call, a
    BigQuery job's running statistics, must not keep the first delay).
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    failures_in_a_row = 0
    delays = Backoff(cap=cap).delays()
    last: object = _NOTHING_YET
    while True:
        try:
            result = fetch()
            failures_in_a_row = 0
        except transient as error:
            failures_in_a_row += 1
            if failures_in_a_row >= TRANSIENT_RETRY_LIMIT:
                raise
            log.warning("polling %s failed (%s); retrying", describe, error)
        else:
            if on_poll is not None:
                on_poll(result)
            if is_done(result):
                return result
            if progress is not None and progress(result) != last:  # the next step is likely soon
                delays, last = Backoff(cap=cap).delays(), progress(result)
        delay = next(delays)
        if deadline is not None and time.monotonic() + delay > deadline:
            raise PollTimeout(f"{describe} did not finish within {timeout:g} s")
        sleep(delay)
