"""What every vertexkit component shares: the runtime image and the component decorator.

Components are KFP lightweight Python components whose bodies import `vertexkit` at run time: on
Vertex AI Pipelines and Kubeflow they run in the runtime image (the repo's Dockerfile; `vertexkit
compile --image` swaps in the one you pushed), and under `kfp.local` in this environment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kfp import dsl

RUNTIME_IMAGE = "vertexkit/runtime:0.1.0"


def vertexkit_component(func: Callable[..., Any]) -> Any:
    """`@dsl.component` on the runtime image; kfp is already installed there."""
    return dsl.component(func, base_image=RUNTIME_IMAGE, install_kfp_package=False)
