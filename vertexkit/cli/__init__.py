"""The `vertexkit` command line. Each verb group lives in its own module here; `verbs` holds
the app. This module stays light: `vertexkit run` spawns its local cloud's process before the
verbs are imported (`early_cloud`)."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import TYPE_CHECKING, Any, NoReturn

from vertexkit import gc_tuning
from vertexkit.cli import early_cloud

if TYPE_CHECKING:
    import typer

    app: typer.Typer


def __getattr__(name: str) -> Any:
    """`vertexkit.cli.app`, imported when first asked for."""
    if name == "app":
        from vertexkit.cli.verbs import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> NoReturn:
    """The console script (and `python -m vertexkit.cli`): the app, then a short exit."""
    gc_tuning.collect_less_often()
    try:
        early_cloud.spawn_for(sys.argv[1:])
        from vertexkit.cli.verbs import app

        app()
    except SystemExit as exc:
        short_exit(exc.code)
    except KeyboardInterrupt:  # before a verb ran (a verb's own Ctrl-C ends in VertexkitGroup)
        print("interrupted", file=sys.stderr)
        short_exit(130)
    short_exit(0)


def short_exit(code: object) -> NoReturn:
    """Ends the process without the interpreter's teardown, which frees every module object of
    the Google clients one by one: 1-2 s of CPU after `vertexkit run`, several seconds of wall
    time on a busy machine, for nothing a user sees. What the interpreter does before that
    teardown still happens, in its order: non-daemon threads and thread pools are joined,
    `atexit` handlers run (logging, temp folders, multiprocessing children, duckdb), stdout and
    stderr are flushed. Where that cannot be done as the interpreter does it (another Python, an
    exit code that is not a number, output that cannot be flushed), the interpreter exits as
    before. Only `main()` may call this: tests run `app` in-process and must get their process
    back."""
    shutdown = getattr(threading, "_shutdown", None)
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if shutdown is None or run_exit_handlers is None or not isinstance(code, int | None):
        raise SystemExit(code)
    shutdown()  # what Py_FinalizeEx does first: waits for non-daemon threads
    run_exit_handlers()
    if not _flushed():
        raise SystemExit(code)  # the interpreter reports a broken pipe its own way
    os._exit(int(code or 0))


def _flushed() -> bool:
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True
