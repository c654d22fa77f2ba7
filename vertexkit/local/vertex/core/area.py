"""What a Vertex area is handed when it registers: the router for its routes and the narrow
handles it may use. Shared engines (the one job executor, the registry's models) are built by
the Vertex service, so no area reaches into another to get at them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.router import VertexRouter

if TYPE_CHECKING:
    from vertexkit.local.vertex.registry.models import ModelRegistry
    from vertexkit.local.vertex.training.execution import Executor


@dataclass(frozen=True)
class AreaContext:
    router: VertexRouter
    backend: VertexBackend  # the store, operations, storage and the cloud's handles
    executor: Executor  # every job runs on it: custom, tuning, training pipelines, batch
    models: ModelRegistry  # uploads (training pipelines) and reads (batch prediction, console)
