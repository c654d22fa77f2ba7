"""`vertexkit local up`: serve the local cloud on 127.0.0.1 until interrupted.
`vertexkit local exec -- CMD`: run a command whose Google clients reach the local cloud."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from vertexkit.cli.errors import UserError
from vertexkit.cli.options import HomeOption, spec_checked
from vertexkit.context import VERTEX_ENV
from vertexkit.local.process_env import with_client_hook
from vertexkit.local_up import (
    EXEC,
    LOCAL_UP,
    HomeServed,
    home_or_default,
    running_local_up,
    serving_record,
    write_local_up,
)
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
    """Serve Cloud Storage, BigQuery, Vertex AI and the KFP API on 127.0.0.1; print `export`
    lines first."""
    served = serving_record(home)  # before the port: the serving one may hold it
    if served:
        raise HomeServed(home_or_default(home), served)
    check_port_free(port)
    # Serving at once; the services' heavy parts load meanwhile (a request waits for them).
    # A claim taken between the check above and here is refused by the start (HomeServed).
    from vertexkit.local import LocalCloud  # the web stack: imported by the verbs that serve

    cloud = LocalCloud(home=home, port=port, project=project, use=LOCAL_UP).start(wait=False)
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    found = None
    try:
        found = write_local_up(cloud.home, cloud.url, cloud.env())  # before the lines print
        for name, value in cloud.env().items():
            print(f"export {name}={value}", flush=True)
        # kfp.Client() reads KF_PIPELINES_ENDPOINT when it is given no host
        print(f"export KF_PIPELINES_ENDPOINT={cloud.kfp_url}", flush=True)
        print(f"# console: {cloud.url}/console/", flush=True)  # a comment: `eval` still works
        print(f"# kfp: kfp.Client(host={cloud.kfp_url!r}) (the KFP v2beta1 API)", flush=True)
        cloud.ready()  # a refused state file ends the command here, with its message
        stopped.wait()
    finally:
        if found:
            found.unlink(missing_ok=True)
        cloud.stop()


@app.command(
    "exec",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def exec_command(
    context: typer.Context,
    home: HomeOption = None,
    project: Annotated[
        str,
        typer.Option(help="Project the clients use", callback=spec_checked(validate_project_id)),
    ] = "local-project",
) -> None:
    """Run CMD (after `--`) with Google's clients, created with their defaults, reaching the local
    cloud: the one whose `export` lines are in this shell (`vertexkit local up`), else one started
    for the command's lifetime."""
    command = list(context.args)
    if not command:
        raise UserError("CMD", "give the command to run after `--`, e.g. `-- pytest tests/`")
    with _cloud_env(os.environ, home, project) as cloud_env:
        env = with_client_hook({**os.environ, **cloud_env})
        # `python`, `pytest`: this environment's first, where vertexkit and the clients are.
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        try:
            returncode = subprocess.call(command, env=env)
        except OSError as exc:
            raise UserError("CMD", f"cannot run {command[0]!r}: {exc.strerror}") from None
    raise typer.Exit(returncode)


@contextmanager
def _cloud_env(
    environ: Mapping[str, str], home: Path | None, project: str
) -> Iterator[dict[str, str]]:
    """The running local cloud's variables (exported, or a `local up` serving the home), or a
    local cloud's started for the block (once another command's own cloud on the home ends)."""
    if environ.get(VERTEX_ENV):
        yield {}
        return
    running = running_local_up(home)
    if running:
        yield running
        return
    from vertexkit.local import LocalCloud

    cloud = LocalCloud(home=home, port=0, project=project, use=EXEC).start()
    try:
        yield cloud.env()
    finally:
        cloud.stop()


@app.command("cache")
def cache(
    clear: Annotated[
        bool, typer.Option("--clear", help="Remove every environment no running job uses")
    ] = False,
) -> None:
    """The trainer-environment cache: count, size, each environment's last use (`--clear`
    empties it). Bounded: past $VERTEXKIT_TRAINER_ENV_LIMIT environments (default 20) the least
    recently used are removed when a new one is built."""
    from datetime import datetime

    from rich.table import Table

    from vertexkit.cli.errors import plain_console
    from vertexkit.local.vertex.training import env_cache

    root = env_cache.default_root()
    console = plain_console()
    try:
        keep = env_cache.limit()
    except ValueError as exc:
        raise UserError(env_cache.LIMIT_ENV, str(exc).split(": ", 1)[-1]) from None
    if clear:
        removed, kept = env_cache.clear(root)
        console.print(f"removed {len(removed)} trainer environment(s) from {root}", soft_wrap=True)
        for path in kept:
            console.print(f"kept {path.name}: a running process uses it")
        return
    envs = env_cache.environments(root)
    sizes = {env.path: env.size() for env in envs}
    bound = f"limit {keep}" if keep else "no limit"
    console.print(
        f"{root}: {len(envs)} trainer environment(s), {_size_text(sum(sizes.values()))} "
        f"({bound}; {env_cache.LIMIT_ENV})",
        soft_wrap=True,
    )
    if not envs:
        return
    table = Table("environment", "last used", "size", "packages")
    for env in reversed(envs):  # most recently used first
        used = datetime.fromtimestamp(env.last_used).strftime("%Y-%m-%d %H:%M:%S")
        table.add_row(env.key, used, _size_text(sizes[env.path]), ", ".join(env.packages) or "-")
    console.print(table)


def _size_text(size: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"
