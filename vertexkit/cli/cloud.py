"""Which cloud a resource command talks to.

The local cloud serving the home (its env exported, or found through the home's claim: a
`vertexkit local up`, or another command's own cloud while it runs, `vertexkit.local_up`) or
`--project` for Vertex AI; with none of these, the local cloud starts in-process on its saved
state for the length of the command.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vertexkit.context import VERTEX_ENV, CloudContext, environ_set
from vertexkit.local_up import COMMAND, serving_env
from vertexkit.vertex_rest import VertexRest


@contextmanager
def context_for_command(
    project: str | None = None, region: str | None = None, home: Path | None = None
) -> Iterator[CloudContext]:
    """The cloud a verb talks to; while it is in use the process env points Google's clients
    at it. Builds no client: the read verbs speak REST themselves (vertexkit/vertex_rest.py)
    and never pay for the aiplatform SDK's import."""
    if os.environ.get(VERTEX_ENV) or project:
        yield CloudContext.from_env(project=project, region=region)
        return
    running = serving_env(home)  # a read is short: even a cloud that ends with its command
    if running:
        with environ_set(running):
            yield CloudContext.from_env()
        return
    from vertexkit.local import LocalCloud

    with LocalCloud(home=home, use=COMMAND) as cloud, environ_set(cloud.env()):
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
