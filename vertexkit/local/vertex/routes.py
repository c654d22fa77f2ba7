"""Vertex AI REST routes: `/v1/{name}` and `/ui/{name}`, dispatched by resource template.

Each area registers its own handlers: `training` (custom jobs, tuning jobs), `registry`
(models, evaluations, endpoints, prediction), `pipelines` (pipeline jobs, schedules),
`training_pipelines` (training pipelines), `batch_prediction` (batch prediction jobs).
Every resource's `operations` sub-collection is answered by `core.operations`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from vertexkit.local.deferred import Once
from vertexkit.local.handles import CloudHandles
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.iam import IamPolicies
from vertexkit.local.vertex.core.operations import OperationsCollection
from vertexkit.local.vertex.router import VertexRouter

if TYPE_CHECKING:
    from vertexkit.local.storage.routes import StorageService
    from vertexkit.local.vertex.registry.routes import RegistryArea
    from vertexkit.local.vertex.training.execution import Executor

METHODS = ["GET", "POST", "PATCH", "DELETE", "PUT"]
LOCATION = "projects/{project}/locations/{location}"
IAM_RESOURCES = {
    f"{LOCATION}/models/{{model}}": "Model",
    f"{LOCATION}/datasets/{{dataset}}": "Dataset",
}


class VertexService(Lifecycle):
    def __init__(self, home: Path, storage: StorageService, cloud: CloudHandles) -> None:
        self.backend = VertexBackend(home, storage, cloud)  # opens (and checks) the state now
        self.router = VertexRouter()
        self._register_operations()
        self._register_iam()
        # The areas import every `aiplatform_v1` type they parse with (about 2 s): they load in
        # the local cloud's warm-up thread, or on the first request, whichever comes first; a
        # request is dispatched only once they are registered and started.
        self._areas: Once[list[Lifecycle]] = Once(self._load_areas)
        self._registered: list[Lifecycle] = []  # closed even when a later area failed to start
        self._executor: Executor | None = None
        self._registry: RegistryArea | None = None

    @property
    def areas(self) -> list[Lifecycle]:
        return self._areas.get()

    def registry(self) -> RegistryArea:
        """Models and endpoints, for the console's reads (once the areas are loaded)."""
        self._areas.get()
        assert self._registry is not None
        return self._registry

    def _load_areas(self) -> list[Lifecycle]:
        areas = self._registered = self._register_areas()
        for area in areas:
            area.start()
        return areas

    def _register_areas(self) -> list[Lifecycle]:
        from vertexkit.local.vertex.batch_prediction.routes import (
            register as register_batch_prediction,
        )
        from vertexkit.local.vertex.datasets.routes import register as register_datasets
        from vertexkit.local.vertex.deployment_resource_pools.routes import (
            register as register_deployment_resource_pools,
        )
        from vertexkit.local.vertex.metadata.routes import register as register_metadata
        from vertexkit.local.vertex.persistent_resources.routes import (
            register as register_persistent_resources,
        )
        from vertexkit.local.vertex.pipelines.routes import register as register_pipelines
        from vertexkit.local.vertex.registry.routes import register as register_registry
        from vertexkit.local.vertex.studies.routes import register as register_studies
        from vertexkit.local.vertex.tensorboards.routes import register as register_tensorboards
        from vertexkit.local.vertex.training.execution import Executor
        from vertexkit.local.vertex.training.routes import register as register_training
        from vertexkit.local.vertex.training_pipelines.routes import (
            register as register_training_pipelines,
        )

        router, backend = self.router, self.backend
        executor = self._executor = Executor(backend)
        registry = self._registry = register_registry(router, backend)
        # Custom jobs, tuning jobs, training pipelines and batch prediction run on one executor;
        # the last two upload to and read from the registry's models.
        return [
            register_training(router, backend, executor),
            registry,
            register_pipelines(router, backend),
            register_training_pipelines(router, backend, executor, registry.models),
            register_datasets(router, backend),
            register_metadata(router, backend),
            register_tensorboards(router, backend),
            register_batch_prediction(router, backend, executor, registry.models),
            register_persistent_resources(router, backend),
            register_deployment_resource_pools(router, backend),
            register_studies(router, backend),
        ]

    def _register_operations(self) -> None:
        """Every resource's `operations` sub-collection, and each location's (`core.operations`)."""
        collection = OperationsCollection(self.backend.store, self.backend.operations)
        self.router.add_matcher(collection.match)

    def _register_iam(self) -> None:
        """IAM on the collections Google gives it (aiplatform.v1: models and datasets)."""
        policies = IamPolicies(self.backend.store)
        for template, kind in IAM_RESOURCES.items():
            policies.register(self.router, template, kind)

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
            area.warm()

    def close(self) -> None:
        self._areas.built()  # waits for a load in progress
        for area in self._registered:
            area.close()
        if self._executor is not None:  # after the areas: their jobs end on it
            self._executor.close()
        self.backend.close()
