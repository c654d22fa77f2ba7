"""Which cloud a resource command talks to.

A running `vertexkit local up` (its env exported, or found through the `local-up.json` it keeps
in its home while it serves) or `--project` for Vertex AI; with none of these, the local cloud
starts in-process on its saved state for the length of the command.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from vertexkit.cli.vertex_rest import VertexRest
from vertexkit.context import VERTEX_ENV, CloudContext

LOCAL_UP_FILE = "local-up.json"  # {"url", "pid", "env"}: written by `local up`, removed at exit
HOME_ENV = "VERTEXKIT_HOME"  # the same variable vertexkit.local.server.default_home reads


def home_or_default(home: Path | None) -> Path:
    return (home or Path(os.environ.get(HOME_ENV) or ".vertexkit")).resolve()


def write_local_up(home: Path, url: str, env: dict[str, str]) -> Path:
    """Tells later commands on this home where the running local cloud answers."""
    path = home / LOCAL_UP_FILE
    partial = path.with_name(f".{LOCAL_UP_FILE}.{os.getpid()}")
    partial.write_text(json.dumps({"url": url, "pid": os.getpid(), "env": env}))
    partial.replace(path)  # whole or absent: a reader never sees half a file
    return path


def running_local_up(home: Path | None) -> dict[str, str] | None:
    """The env of the `local up` serving this home, when its process lives and answers."""
    with suppress(OSError, ValueError, KeyError, TypeError):
        found = json.loads((home_or_default(home) / LOCAL_UP_FILE).read_text())
        os.kill(int(found["pid"]), 0)  # a file left by a killed process names a dead pid
        with urllib.request.urlopen(found["url"] + "/healthz", timeout=2) as answer:
            if answer.status == 200:
                return {str(k): str(v) for k, v in found["env"].items()}
    return None


@contextmanager
def context_for_command(
    project: str | None = None, region: str | None = None, home: Path | None = None
) -> Iterator[CloudContext]:
    """The cloud a verb talks to; while it is in use the process env points Google's clients
    at it. Builds no client: the read verbs speak REST themselves (vertexkit/cli/vertex_rest.py)
    and never pay for the aiplatform SDK's import."""
    if os.environ.get(VERTEX_ENV) or project:
        yield CloudContext.from_env(project=project, region=region)
        return
    running = running_local_up(home)
    if running:
        with _env_set(running):
            yield CloudContext.from_env()
        return
    from vertexkit.local import LocalCloud

    with LocalCloud(home=home) as cloud, _env_set(cloud.env()):
        yield cloud.context()


@contextmanager
def cloud_for_command(
    project: str | None = None, region: str | None = None, home: Path | None = None
) -> Iterator[CloudContext]:
    """`context_for_command` with the high-level aiplatform SDK pointed at it as well."""
    with context_for_command(project, region, home) as context:
        context.init_aiplatform()
        yield context


@contextmanager
def rest_for_command(
    project: str | None = None, region: str | None = None, home: Path | None = None
) -> Iterator[VertexRest]:
    """The Vertex AI REST API of the cloud a read verb talks to (see `context_for_command`)."""
    with context_for_command(project, region, home) as context:
        yield VertexRest.for_context(context)


@contextmanager
def _env_set(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
