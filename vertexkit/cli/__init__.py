"""The `vertexkit` command line. Each verb group lives in its own module here."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

import typer

from vertexkit.cli import decisions, demo, jobs, local, pipelines, resources, schedules
from vertexkit.cli.errors import VertexkitGroup

# Every verb runs inside VertexkitGroup.invoke: a user error ends with one `error:` line naming
# the parameter and exit code 2, never a traceback (vertexkit/cli/errors.py).
app = typer.Typer(cls=VertexkitGroup, no_args_is_help=True, add_completion=False, help=__doc__)
app.add_typer(local.app, name="local", help="Run the local cloud.")
app.command("demo")(demo.demo)
app.command("compile")(pipelines.compile_command)
app.command("run")(pipelines.run_command)
app.add_typer(resources.models_app, name="models")
app.add_typer(resources.endpoints_app, name="endpoints")
app.command("predict")(resources.predict)
app.command("logs")(jobs.logs)
app.add_typer(schedules.schedule_app, name="schedule")
app.add_typer(schedules.runs_app, name="runs")
app.add_typer(decisions.decisions_app, name="decisions")


def main() -> NoReturn:
    """The console script (and `python -m vertexkit.cli`): the app, then a short exit."""
    try:
        app()
    except SystemExit as exc:
        short_exit(exc.code)
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
