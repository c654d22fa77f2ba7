"""SIGTERM cancels the cloud resource being polled, then the process exits.

KFP (on Vertex AI Pipelines and Kubeflow) stops a task by sending SIGTERM to its container. A
component that only exited would leave its custom job, tuning job or BigQuery job running and
billing; so, like GCPC's ExecutionContext, we cancel the resource first.

    with cancel_on_sigterm() as scope:
        job = client.create_custom_job(...)
        scope.cancel_with(lambda: client.cancel_custom_job(name=job.name))
        poll(...)
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

log = logging.getLogger(__name__)

EXIT_CODE_ON_SIGTERM = 128 + signal.SIGTERM  # the shell convention for "terminated by SIGTERM"


class CancelScope:
    """Holds the cancel action for whatever resource is currently being waited on."""

    def __init__(self) -> None:
        self._cancel: Callable[[], None] | None = None
        self._lock = threading.Lock()

    def cancel_with(self, cancel: Callable[[], None] | None) -> None:
        with self._lock:
            self._cancel = cancel

    def run_cancel(self) -> None:
        with self._lock:
            cancel = self._cancel
        if cancel is None:
            return
        try:
            cancel()
        except Exception as error:  # best effort: the process is exiting anyway
            log.error("cancelling on SIGTERM failed: %s", error)


@contextmanager
def cancel_on_sigterm(
    cancel: Callable[[], None] | None = None, exit_code: int = EXIT_CODE_ON_SIGTERM
) -> Iterator[CancelScope]:
    """Within the block, SIGTERM runs the scope's cancel action and exits with `exit_code`.

    Outside the main thread Python cannot install signal handlers; the block then runs without
    one (and says so in the log) rather than failing.
    """
    scope = CancelScope()
    scope.cancel_with(cancel)

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        print("SIGTERM received: cancelling the running resource", file=sys.stderr, flush=True)
        scope.run_cancel()
        # os._exit: unwinding through the poll loop would run code that assumes the job lives.
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(exit_code)

    if threading.current_thread() is not threading.main_thread():
        log.info("not in the main thread: SIGTERM will not cancel the resource")
        yield scope
        return
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield scope
    finally:
        signal.signal(signal.SIGTERM, previous)
