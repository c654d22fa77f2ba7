"""The local cloud: Cloud Storage, BigQuery and Vertex AI REST APIs served on 127.0.0.1.

from vertexkit.local import LocalCloud
with LocalCloud(home=".vertexkit") as cloud:
    cloud.context()  # a CloudContext whose clients talk to this server

`LocalCloud` is imported when first asked for: `vertexkit run` spawns its cloud's process
through `vertexkit.cloud_process`, which must not wait for the server's web stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vertexkit.local.hooks.vertexkit_redirect import install_sdk_projects

if TYPE_CHECKING:
    from vertexkit.local.server import LocalCloud

__all__ = ["LocalCloud"]

# A process that uses the local cloud may point the aiplatform SDK at it with
# `aiplatform.init(api_endpoint=...)` itself: the SDK's own Resource Manager calls then follow
# that endpoint instead of dialling Google's host (hooks/vertexkit_redirect.py says why).
install_sdk_projects()


def __getattr__(name: str) -> Any:
    if name == "LocalCloud":
        from vertexkit.local.server import LocalCloud

        return LocalCloud
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
