"""Vertex AI REST routes: `/v1/{name}` and `/ui/{name}`, dispatched by resource template.

Each area registers its own handlers: `training` (custom jobs, tuning jobs), `registry`
(models, evaluations, endpoints, prediction), `pipelines` (pipeline jobs, schedules),
`training_pipelines` (training pipelines), `batch_prediction` (batch prediction jobs).
Operations are served here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from vertexkit.local.deferred import Once
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.router import VertexRequest, VertexRouter
from vertexkit.local.vertex.store import page

if TYPE_CHECKING:
    from vertexkit.local.server import LocalCloud
    from vertexkit.local.storage.routes import StorageService

OPERATION = "projects/{project}/locations/{location}/operations/{operation}"
NESTED_OPERATION = (
    "projects/{project}/locations/{location}/{collection}/{resource}/operations/{operation}"
)
METHODS = ["GET", "POST", "PATCH", "DELETE", "PUT"]


class VertexService:
    def __init__(self, home: Path, storage: StorageService, cloud: LocalCloud) -> None:
        self.backend = VertexBackend(home, storage, cloud)  # opens (and checks) the state now
        self.router = VertexRouter()
        self._register_operations()
        # The areas import every `aiplatform_v1` type they parse with (about 2 s): they load in
        # the local cloud's warm-up thread, or on the first request, whichever comes first; a
        # request is dispatched only once they are registered and started.
        self._areas: Once[list[Any]] = Once(self._load_areas)
        self._registered: list[Any] = []  # closed even when a later area failed to start

    @property
    def areas(self) -> list[Any]:
        return self._areas.get()

    def _load_areas(self) -> list[Any]:
        areas = self._registered = self._register_areas()
        for area in areas:
            start = getattr(area, "start", None)
            if start:
                start()
        return areas

    def _register_areas(self) -> list[Any]:
        from vertexkit.local.vertex.batch_prediction.routes import (
            register as register_batch_prediction,
        )
        from vertexkit.local.vertex.datasets.routes import register as register_datasets
        from vertexkit.local.vertex.metadata.routes import register as register_metadata
        from vertexkit.local.vertex.pipelines.routes import register as register_pipelines
        from vertexkit.local.vertex.registry.routes import register as register_registry
        from vertexkit.local.vertex.studies.routes import register as register_studies
        from vertexkit.local.vertex.tensorboards.routes import register as register_tensorboards
        from vertexkit.local.vertex.training.routes import register as register_training
        from vertexkit.local.vertex.training_pipelines.routes import (
            register as register_training_pipelines,
        )

        training = register_training(self.router, self.backend)
        registry = register_registry(self.router, self.backend)
        return [
            training,
            registry,
            register_pipelines(self.router, self.backend),
            # Training pipelines run on the training executor and upload to the registry.
            register_training_pipelines(self.router, self.backend, training, registry),
            register_datasets(self.router, self.backend),
            register_metadata(self.router, self.backend),
            register_tensorboards(self.router, self.backend),
            register_batch_prediction(self.router, self.backend, training, registry),
            register_studies(self.router, self.backend),
        ]

    def _register_operations(self) -> None:
        operations = self.backend.operations

        def get_operation(request: VertexRequest) -> dict:
            return operations.get(request.path)

        def wait_operation(request: VertexRequest) -> dict:
            return operations.get(request.path.rsplit(":", 1)[0])

        def list_operations(request: VertexRequest) -> dict:
            prefix = request.path.rstrip("/") + "/"
            items = [
                operations.public(op)
                for op in self.backend.store.list("operations")
                if op["name"].startswith(prefix)
            ]
            return page(items, request.query, "operations")

        for template in (OPERATION, NESTED_OPERATION):
            self.router.route("GET", template)(get_operation)
            self.router.route("POST", template + ":wait")(wait_operation)
        self.router.route("GET", "projects/{project}/locations/{location}/operations")(
            list_operations
        )

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/v1/{path:path}", self._dispatch, methods=METHODS),
            Route("/ui/{path:path}", self._dispatch, methods=METHODS),
        ]

    async def _dispatch(self, request: Request) -> Response:
        await run_in_threadpool(self._areas.get)
        return await self.router.dispatch(request)

    def start(self) -> None:
        self._areas.get()

    def warm(self) -> None:
        """What the areas do ahead of a request they expect (`LocalCloud`'s warm-up, last)."""
        for area in self.areas:
            warm = getattr(area, "warm", None)
            if warm:
                warm()

    def close(self) -> None:
        self._areas.built()  # waits for a load in progress
        for area in self._registered:
            close = getattr(area, "close", None)
            if close:
                close()
        self.backend.close()
