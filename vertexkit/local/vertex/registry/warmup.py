"""Importing a prebuilt framework's modules before the first deploy needs them.

The local cloud serves prebuilt-image models in its own process (serving.py), so the first deploy
of a scikit-learn model pays scikit-learn's import: 1-3 s on 2 cores, on the pipeline's critical
path. A model is usually deployed soon after its upload (evaluated in between), so the upload
starts that import on a background thread. A deploy waits for it rather than importing the same
modules from a second thread at once (two threads importing modules that import each other can
abort one import with a deadlock error).
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Sequence

from vertexkit.runtime.prebuilt import FRAMEWORK_MODULES, prebuilt_framework


def import_quietly(modules: Sequence[str]) -> None:
    for module in modules:
        with contextlib.suppress(Exception):  # not installed: the deploy itself says so
            importlib.import_module(module)


class FrameworkWarmup:
    """One background import per framework and process (imports are per process)."""

    def __init__(self) -> None:
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def start(self, image_uri: str) -> None:
        """Starts importing the modules a model of this prebuilt image needs, once."""
        framework = prebuilt_framework(image_uri) or ""
        with self._lock:
            if framework not in FRAMEWORK_MODULES or framework in self._threads:
                return
            thread = threading.Thread(
                target=import_quietly,
                args=(FRAMEWORK_MODULES[framework],),
                daemon=True,
                name=f"warm-{framework}",
            )
            thread.start()
            self._threads[framework] = thread

    def wait(self, image_uri: str) -> None:
        """Returns once a warm-up started for this image's framework has finished."""
        with self._lock:
            thread = self._threads.get(prebuilt_framework(image_uri) or "")
        if thread is not None:
            thread.join()


WARMUP = FrameworkWarmup()
