"""`vertexkit local up`: serve the local cloud on 127.0.0.1 until interrupted."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Annotated

import typer

from vertexkit.local import LocalCloud

app = typer.Typer(no_args_is_help=True)


@app.command("up")
def up(
    home: Annotated[
        Path | None,
        typer.Option(help="State directory (default: $VERTEXKIT_HOME, else .vertexkit)"),
    ] = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 picks a free one)")] = 9023,
    project: Annotated[str, typer.Option(help="Project the clients use")] = "local-project",
) -> None:
    """Serve Cloud Storage, BigQuery and Vertex AI on 127.0.0.1; print `export` lines first."""
    cloud = LocalCloud(home=home, port=port, project=project).start()
    for name, value in cloud.env().items():
        print(f"export {name}={value}", flush=True)
    print(f"# console: {cloud.url}/console/", flush=True)  # a comment: `eval` still works
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    try:
        stopped.wait()
    finally:
        cloud.stop()
