"""The one place where a CLI verb's exception becomes what the user sees.

A user error (a bad option or `--param`, a missing file, a port in use, a spec or preflight
refusal, a 4xx from the service, no Google credentials for a Vertex AI target) prints one
`error: ...` line naming the parameter and exits 2. Anything else is a bug in vertexkit: one line
saying so and where the full traceback was written (a file in the temp directory), exit 1; the
terminal never gets a traceback either way.
Messages are printed as plain text, never parsed as rich markup: `[/x]` in a value stays text.
"""

from __future__ import annotations

import errno
import os
import re
import sys
import tempfile
import traceback
from http import HTTPStatus
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

USER_ERROR_EXIT = 2
BUG_EXIT = 1
INTERRUPTED_EXIT = 130  # 128 + SIGINT, as a shell reports a command ended by Ctrl-C

# typer >= 0.22 vendors click and older ones re-export it: find the base class either way.
_USAGE_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
_HTTP_PREFIX = re.compile(r"^(GET|POST|PUT|PATCH|DELETE) \S+: ")


class UserError(Exception):
    """A refusal that names what the user gave: `param` is the option, argument or variable."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}" if param else message)
        self.param = param


def fail(message: str, param: str = "") -> NoReturn:
    """Ends the verb with one `error:` line (printed by `VertexkitGroup`) and exit code 2."""
    raise UserError(param, message)


def one_line(message: str) -> str:
    return " ".join(line.strip() for line in str(message).splitlines() if line.strip())


def plain_console(stderr: bool = False) -> Console:
    """A console that never reads rich markup: names, messages and values print as they are.
    Piped or redirected (not a terminal), and with no COLUMNS set, a table is as wide as its
    cells, not cut to rich's default of 80 columns: `vertexkit runs show X | less` and a
    script's `grep` see whole IDs and names on one line."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if os.environ.get("COLUMNS") or _is_terminal(stream) else PIPED_WIDTH
    return Console(stderr=stderr, markup=False, width=width)


PIPED_WIDTH = 4096  # wide enough for any row; rich sizes a table to its content within it


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):
        return False


def print_error(message: str) -> None:
    console = Console(stderr=True, soft_wrap=True, highlight=False)
    console.print(Text.assemble(("error:", "red"), " ", one_line(message)))


def _os_error(exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return "the address is already in use (another process listens on this port)"
    if exc.strerror and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    return exc.strerror or str(exc)


def client_error_message(exc: Any) -> str:
    """A 4xx from Vertex AI, BigQuery or Cloud Storage (or the local cloud): status and reason."""
    reason = _HTTP_PREFIX.sub("", exc.message)  # the REST transport's "POST url: " adds nothing
    return f"the service refused the request ({_status(exc.code)}): {reason}"


def _status(code: int) -> str:
    try:
        return f"{code} {HTTPStatus(code).phrase}"
    except ValueError:
        return str(code)


def user_error_message(exc: Exception) -> str | None:
    """The one line a user error prints, or None when `exc` is not one (a bug)."""
    from google.api_core.exceptions import ClientError
    from google.auth.exceptions import DefaultCredentialsError

    from vertexkit.pipeline_registry import PipelineNotFound

    if isinstance(exc, _USAGE_ERROR):
        return _usage_message(exc)
    if isinstance(exc, DefaultCredentialsError):  # a Vertex AI target on a machine not logged in
        return f"--project: no Google credentials for Vertex AI: {exc}"
    if isinstance(exc, ClientError):
        return client_error_message(exc)
    if isinstance(exc, OSError):
        return _os_error(exc)
    if isinstance(exc, (UserError, ValueError, PipelineNotFound)):
        return str(exc) or type(exc).__name__
    return None


def _usage_message(exc: Any) -> str:
    context = getattr(exc, "ctx", None)
    hint = f" (see `{context.command_path} --help`)" if context is not None else ""
    return f"{exc.format_message()}{hint}"


def report_bug(exc: Exception) -> str:
    """Writes the traceback to a temp file; returns the line that points at it."""
    with tempfile.NamedTemporaryFile(
        "w", prefix="vertexkit-traceback-", suffix=".txt", delete=False
    ) as handle:
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=handle)
    return (
        f"unexpected {type(exc).__name__}: {exc} (a bug in vertexkit; "
        f"the full traceback is in {handle.name})"
    )


class VertexkitGroup(TyperGroup):
    """The root command group: every verb runs inside its `invoke`, so its errors end here."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort):
            raise
        except KeyboardInterrupt:  # a verb with no more to say (`vertexkit run` says more)
            Console(stderr=True, soft_wrap=True, highlight=False).print("interrupted")
            raise typer.Exit(INTERRUPTED_EXIT) from None
        except Exception as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # a group without a verb: its help
                raise
            message = user_error_message(exc)
            print_error(message if message is not None else report_bug(exc))
            raise typer.Exit(USER_ERROR_EXIT if message is not None else BUG_EXIT) from None
