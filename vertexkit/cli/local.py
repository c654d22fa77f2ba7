"""`vertexkit local up`: serve the local cloud on 127.0.0.1 until interrupted."""

from __future__ import annotations

import signal
import socket
import threading
from typing import Annotated

import typer

from vertexkit.cli.cloud import write_local_up
from vertexkit.cli.errors import UserError
from vertexkit.cli.options import HomeOption, spec_checked
from vertexkit.local import LocalCloud
from vertexkit.specs.naming import validate_project_id

app = typer.Typer(no_args_is_help=True)


def check_port_free(port: int) -> None:
    """Refuses a port another process listens on before the home directory is made."""
    if port == 0:
        return
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as LocalCloud binds it
    try:
        probe.bind(("127.0.0.1", port))
    except OSError as exc:
        raise UserError("--port", f"127.0.0.1:{port} is not free: {exc.strerror}") from None
    finally:
        probe.close()


@app.command("up")
def up(
    home: HomeOption = None,
    port: Annotated[
        int, typer.Option(help="Port on 127.0.0.1 (0 picks a free one)", min=0, max=65535)
    ] = 9023,
    project: Annotated[
        str,
        typer.Option(help="Project the clients use", callback=spec_checked(validate_project_id)),
    ] = "local-project",
) -> None:
    """Serve Cloud Storage, BigQuery and Vertex AI on 127.0.0.1; print `export` lines first."""
    check_port_free(port)
    # Serving at once; the services' heavy parts load meanwhile (a request waits for them).
    cloud = LocalCloud(home=home, port=port, project=project).start(wait=False)
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    found = None
    try:
        found = write_local_up(cloud.home, cloud.url, cloud.env())  # before the lines print
        for name, value in cloud.env().items():
            print(f"export {name}={value}", flush=True)
        print(f"# console: {cloud.url}/console/", flush=True)  # a comment: `eval` still works
        cloud.ready()  # a refused state file ends the command here, with its message
        stopped.wait()
    finally:
        if found:
            found.unlink(missing_ok=True)
        cloud.stop()
