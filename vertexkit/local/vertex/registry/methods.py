"""The registry's resources on the recipe: models (with their versions), evaluations, slices
and endpoints.

Each is declared once (message, collection, list key, the registry's own filter grammar,
which standard methods Google gives it); what differs is the registry's own and stays in
`ModelRegistry` / `EndpointRegistry`: a model's get is name-keyed (`models/m`, `models/m@2`,
`models/m@alias` answer that version), its list shows each model's default version, its patch
and delete work on versions and aliases; an endpoint's create checks what it may carry, its
delete refuses while models are deployed. A model is created by `:upload` (a custom verb).
"""

from __future__ import annotations

from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.filters import Predicate
from vertexkit.local.vertex.core.recipe import Recipe, StandardMethods
from vertexkit.local.vertex.registry import slices
from vertexkit.local.vertex.registry.endpoints import ENDPOINT_ID, EndpointRegistry
from vertexkit.local.vertex.registry.filters import compile_filter
from vertexkit.local.vertex.registry.models import ModelRegistry
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.requests import validate_parent


def no_rule(body: Resource) -> None:
    """The registry's own methods hold the rules (`ModelRegistry`, `EndpointRegistry`)."""


def unfiltered(text: str | None) -> Predicate:
    """Lists whose filter the registry does not read (evaluations, slices): kept as before."""
    return lambda resource: True


MODELS = Recipe(
    "models", "Model", aiplatform_v1.Model, None, None, "models", no_rule,
    methods=("list", "get", "patch", "delete"), filter_by=compile_filter,
)  # fmt: skip
EVALUATIONS = Recipe(
    "modelEvaluations", "ModelEvaluation", aiplatform_v1.ModelEvaluation, None, None,
    "modelEvaluations", no_rule, methods=("list", "get"), filter_by=unfiltered,
)  # fmt: skip
SLICES = Recipe(
    "modelEvaluationSlices", "ModelEvaluationSlice", aiplatform_v1.ModelEvaluationSlice, None,
    None, "modelEvaluationSlices", no_rule, methods=("list", "get"), filter_by=unfiltered,
)  # fmt: skip
ENDPOINTS = Recipe(
    "endpoints", "Endpoint", aiplatform_v1.Endpoint, "endpointId", ENDPOINT_ID, "endpoints",
    no_rule, "CreateEndpointOperationMetadata", filter_by=compile_filter,
)  # fmt: skip


def model_param(path: str) -> str:
    """`m`, `m@2` or `m@alias` from a path under `.../models/`."""
    return path.split("/models/", 1)[1].split("/", 1)[0]


class Models(StandardMethods):
    def __init__(self, backend: VertexBackend, models: ModelRegistry) -> None:
        super().__init__(backend, MODELS)
        self.models = models

    def lookup(self, request: VertexRequest) -> Resource:
        model, version = self.models.resolve(request.parent, model_param(request.path))
        return self.models.render(version, model)

    def items(self, request: VertexRequest) -> list[Resource]:
        return self.models.list_models(request.parent, None)

    def patch(self, request: VertexRequest) -> Resource:
        mask = request.query.get("updateMask", "")
        return self.models.update(
            request.parent, model_param(request.path), request.body, mask
        )

    def delete(self, request: VertexRequest) -> Resource:
        return self.models.delete_model(request.parent, model_param(request.path))


class Evaluations(StandardMethods):
    """A version's evaluations (`models/m@2/evaluations` lists version 2's)."""

    def __init__(self, backend: VertexBackend, models: ModelRegistry) -> None:
        super().__init__(backend, EVALUATIONS)
        self.models = models

    def lookup(self, request: VertexRequest) -> Resource:
        evaluation = request.path.rsplit("/", 1)[1]
        return self.models.get_evaluation(
            request.parent, model_param(request.path), evaluation
        )

    def items(self, request: VertexRequest) -> list[Resource]:
        return self.models.list_evaluations(request.parent, model_param(request.path))


class Slices(StandardMethods):
    """No slice is stored: an evaluation's list is empty, a get 404s once the evaluation is
    found (`slices`)."""

    def __init__(self, backend: VertexBackend, models: ModelRegistry) -> None:
        super().__init__(backend, SLICES)
        self.models = models

    def evaluation_of(self, path: str) -> tuple[str, str]:
        return model_param(path), path.split("/evaluations/", 1)[1].split("/", 1)[0]

    def lookup(self, request: VertexRequest) -> Resource:
        model, evaluation = self.evaluation_of(request.path)
        slice_id = request.path.rsplit("/", 1)[1]
        return slices.get_slice(self.models, request.parent, model, evaluation, slice_id)

    def items(self, request: VertexRequest) -> list[Resource]:
        model, evaluation = self.evaluation_of(request.path)
        return slices.list_slices(self.models, request.parent, model, evaluation)


class Endpoints(StandardMethods):
    def __init__(self, backend: VertexBackend, endpoints: EndpointRegistry) -> None:
        super().__init__(backend, ENDPOINTS)
        self.endpoints = endpoints

    def create(self, request: VertexRequest) -> Resource:
        validate_parent(request.params["project"], request.params["location"])
        endpoint_id = request.query.get("endpointId")
        return self.endpoints.create(request.parent, endpoint_id, request.body)

    def lookup(self, request: VertexRequest) -> Resource:
        return self.endpoints.get(request.path)

    def items(self, request: VertexRequest) -> list[Resource]:
        return self.endpoints.list(request.parent, None)

    def patch(self, request: VertexRequest) -> Resource:
        mask = request.query.get("updateMask", "")
        return self.endpoints.update(request.path, request.body, mask)

    def delete(self, request: VertexRequest) -> Resource:
        return self.endpoints.delete(request.path)
