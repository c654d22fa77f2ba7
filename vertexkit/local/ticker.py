"""A tick on a thread of its own: what fires the local schedules (Vertex's Schedules and KFP's
recurring runs) every few seconds until the local cloud closes."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class Ticker:
    """Calls `tick` every `seconds` on a daemon thread named `name`, from `start()` to
    `close()`. A tick that raises is logged loudly and the next one runs: one broken schedule
    must not stop the others."""

    def __init__(self, tick: Callable[[], Any], seconds: float, name: str) -> None:
        self._tick = tick
        self._seconds = seconds
        self._name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, daemon=True, name=self._name)
            self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=10)
        self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(self._seconds):
            try:
                self._tick()
            except Exception:
                log.exception("%s failed a tick", self._name)
