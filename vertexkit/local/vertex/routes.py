"""Vertex AI REST routes: `/v1/{name}` and `/ui/{name}`, dispatched by resource template.

Each area registers its own handlers: `training` (custom jobs, tuning jobs), `registry`
(models, evaluations, endpoints, prediction), `pipelines` (pipeline jobs, schedules),
`training_pipelines` (training pipelines), `batch_prediction` (batch prediction jobs).
Every resource's `operations` sub-collection is answered by `core.operations`.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from vertexkit.local.deferred import Once
from vertexkit.local.handles import CloudHandles
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex.backend import VertexBackend, VertexState
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.core.iam import IamPolicies
from vertexkit.local.vertex.core.operations import OperationsCollection
from vertexkit.local.vertex.router import VertexRouter

if TYPE_CHECKING:
    from vertexkit.local.storage.routes import StorageService
    from vertexkit.local.vertex.registry.routes import RegistryArea
    from vertexkit.local.vertex.training.execution import Executor

METHODS = ["GET", "POST", "PATCH", "DELETE", "PUT"]
LOCATION = "projects/{project}/locations/{location}"
# Every Vertex area, one folder each under vertexkit/local/vertex/ with a `routes.register`:
# a new resource family is its folder and one line here.
AREAS = (
    "training",  # customJobs, hyperparameterTuningJobs
    "registry",  # models, evaluations, endpoints
    "pipelines",  # pipelineJobs, schedules
    "training_pipelines",
    "datasets",
    "metadata",  # metadataStores
    "tensorboards",
    "batch_prediction",
    "studies",  # Vizier
    "persistent_resources",
    "deployment_resource_pools",
)
IAM_RESOURCES = {
    f"{LOCATION}/models/{{model}}": "Model",
    f"{LOCATION}/datasets/{{dataset}}": "Dataset",
}


class VertexService(Lifecycle):
    def __init__(self, state: VertexState, storage: StorageService, cloud: CloudHandles) -> None:
        self.backend = VertexBackend(state, storage, cloud)
        self.router = VertexRouter(self.backend.names)
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
        """Each area of AREAS registers its routes on the context's router."""
        from vertexkit.local.vertex.registry.models import ModelRegistry
        from vertexkit.local.vertex.training.execution import Executor

        # One lock for the registry's writes that span models and endpoints.
        models = ModelRegistry(self.backend, threading.RLock())
        executor = self._executor = Executor(self.backend)
        context = AreaContext(self.router, self.backend, executor, models)
        areas = [_area_routes(name).register(context) for name in AREAS]
        self._registry = areas[AREAS.index("registry")]  # type: ignore[assignment]
        return areas

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


def _area_routes(name: str) -> ModuleType:
    """An area's routes, imported when the areas load (they import every `aiplatform_v1` type
    they parse with: see `VertexService.__init__`)."""
    return importlib.import_module(f"vertexkit.local.vertex.{name}.routes")
