"""Which cloud a resource command talks to.

A running `vertexkit local up` (its env exported) or `--project` for Vertex AI; with neither,
the local cloud starts in-process on its saved state for the length of the command.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vertexkit.context import VERTEX_ENV, CloudContext


@contextmanager
def cloud_for_command(
    project: str | None = None, region: str | None = None, home: Path | None = None
) -> Iterator[CloudContext]:
    if os.environ.get(VERTEX_ENV) or project:
        context = CloudContext.from_env(project=project, region=region)
        context.init_aiplatform()
        yield context
        return
    from vertexkit.local import LocalCloud

    saved = dict(os.environ)
    with LocalCloud(home=home) as cloud:
        os.environ.update(cloud.env())
        try:
            context = cloud.context()
            context.init_aiplatform()
            yield context
        finally:
            os.environ.clear()
            os.environ.update(saved)
