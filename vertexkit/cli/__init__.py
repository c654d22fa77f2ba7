"""The `vertexkit` command line. Each verb group lives in its own module here."""

from __future__ import annotations

import typer

from vertexkit.cli import demo, local

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)
app.add_typer(local.app, name="local", help="Run the local cloud.")
app.command("demo")(demo.demo)


def main() -> None:
    app()
