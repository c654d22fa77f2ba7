"""Model Registry, endpoint and prediction routes of the local Vertex AI.

Paths and bodies are those of `aiplatform_v1` ModelService, EndpointService and
PredictionService over REST. Note: the SDK's `Endpoint.raw_predict` ignores `api_endpoint` and
always dials Google's host; `:rawPredict` is served here for plain HTTP clients.
"""

from __future__ import annotations

from vertexkit.local.errors import refused
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.registry import (
    endpoint_changes,
    explain,
    methods,
    responses,
    slices,
    transfer,
)
from vertexkit.local.vertex.registry.endpoints import EndpointRegistry
from vertexkit.local.vertex.registry.models import ModelRegistry
from vertexkit.local.vertex.router import VertexRequest, VertexRouter
from vertexkit.local.vertex.store import Resource, page
from vertexkit.specs.requests import validate_list_query, validate_parent

LOCATION = "projects/{project}/locations/{location}"
MODELS = LOCATION + "/models"
MODEL = MODELS + "/{model}"
EVALUATIONS = MODEL + "/evaluations"
EVALUATION = EVALUATIONS + "/{evaluation}"
SLICES = EVALUATION + "/slices"
ENDPOINTS = LOCATION + "/endpoints"
ENDPOINT = ENDPOINTS + "/{endpoint}"


class RegistryArea(Lifecycle):
    """The registry's state objects; `close()` stops every model server process."""

    def __init__(self, backend: VertexBackend, models: ModelRegistry) -> None:
        self.models = models  # built by the Vertex service: training pipelines upload to it
        self.endpoints = EndpointRegistry(backend, models, models.lock)
        self._display_names: dict[str, str] = {}

    def model_display_name(self, deployed: Resource) -> str:
        key = f"{deployed['model']}@{deployed['modelVersionId']}"
        if key not in self._display_names:
            version = self.models.store.find(key) or {}
            self._display_names[key] = version.get("displayName", "")
        return self._display_names[key]

    def warm(self) -> None:
        self.endpoints.warm_deployed()

    def close(self) -> None:
        self.endpoints.close()


def register(context: AreaContext) -> RegistryArea:
    router = context.router
    area = RegistryArea(context.backend, context.models)
    backend = context.backend
    methods.Models(backend, area.models).register(router, MODELS)
    methods.Evaluations(backend, area.models).register(router, EVALUATIONS)
    methods.Slices(backend, area.models).register(router, SLICES)
    methods.Endpoints(backend, area.endpoints).register(router, ENDPOINTS)
    _register_models(router, area.models)
    _register_model_transfers(router, area.models)
    _register_slices(router, area.models)
    _register_endpoints(router, area)
    _register_endpoint_changes(router, area)
    return area


def checked_page(items: list[Resource], query: dict[str, str], key: str) -> Resource:
    validate_list_query(query)
    return page(items, query, key)


def checked_parent(request: VertexRequest) -> str:
    """The request's `projects/P/locations/L`, refused unless L is a Vertex AI region."""
    validate_parent(request.params["project"], request.params["location"])
    return request.parent


def _model_param(request: VertexRequest) -> str:
    return request.params["model"]


def _register_models(router: VertexRouter, models: ModelRegistry) -> None:
    @router.route("POST", MODELS + ":upload")
    def upload(request: VertexRequest) -> Resource:
        return models.upload(checked_parent(request), request.body)

    @router.route("GET", MODEL + ":listVersions")
    def list_versions(request: VertexRequest) -> Resource:
        found = models.list_versions(
            request.parent, _model_param(request), request.query.get("filter")
        )
        return checked_page(found, request.query, "models")

    @router.route("POST", MODEL + ":mergeVersionAliases")
    def merge_aliases(request: VertexRequest) -> Resource:
        return models.merge_aliases(request.parent, _model_param(request), request.body)

    @router.route("DELETE", MODEL + ":deleteVersion")
    def delete_version(request: VertexRequest) -> Resource:
        return models.delete_version(request.parent, _model_param(request))

    @router.route("POST", EVALUATIONS + ":import")
    def import_evaluation(request: VertexRequest) -> Resource:
        return models.import_evaluation(request.parent, _model_param(request), request.body)

def _register_endpoints(router: VertexRouter, area: RegistryArea) -> None:
    endpoints = area.endpoints

    def endpoint_name(request: VertexRequest) -> str:
        return f"{request.parent}/endpoints/{request.params['endpoint']}"

    @router.route("POST", ENDPOINT + ":deployModel")
    def deploy_model(request: VertexRequest) -> Resource:
        return endpoints.deploy(endpoint_name(request), request.body)

    @router.route("POST", ENDPOINT + ":undeployModel")
    def undeploy_model(request: VertexRequest) -> Resource:
        return endpoints.undeploy(endpoint_name(request), request.body)

    def content_length(request: VertexRequest) -> int:
        return int(request.headers.get("content-length") or 0)

    @router.route("POST", ENDPOINT + ":predict")
    def predict(request: VertexRequest) -> Resource:
        deployed, predictions = endpoints.predict(
            endpoint_name(request), request.body, content_length(request)
        )
        return responses.prediction(deployed, area.model_display_name(deployed), predictions)

    @router.route("POST", ENDPOINT + ":rawPredict")
    def raw_predict(request: VertexRequest) -> object:
        deployed, predictions = endpoints.predict(
            endpoint_name(request), request.body, content_length(request)
        )
        return responses.raw_prediction(request.params["endpoint"], deployed, predictions)


def _register_model_transfers(router: VertexRouter, models: ModelRegistry) -> None:
    @router.route("POST", MODELS + ":copy")
    def copy_model(request: VertexRequest) -> Resource:
        return transfer.copy_model(models, checked_parent(request), request.body)

    @router.route("POST", MODEL + ":export")
    def export_model(request: VertexRequest) -> Resource:
        _, version = models.resolve(request.parent, _model_param(request))
        return transfer.export_model(models.backend, version, request.body)

    @router.route("GET", MODEL + ":listCheckpoints")
    def list_checkpoints(request: VertexRequest) -> Resource:
        validate_list_query(request.query)
        return transfer.list_checkpoints(models, request.parent, _model_param(request))

    @router.route("POST", MODEL + ":updateExplanationDataset")
    def update_explanation_dataset(request: VertexRequest) -> Resource:
        transfer.refuse_explanation_dataset(
            models, request.parent, _model_param(request), request.body
        )


def _register_slices(router: VertexRouter, models: ModelRegistry) -> None:
    def evaluation_of(request: VertexRequest) -> tuple[str, str, str]:
        return request.parent, _model_param(request), request.params["evaluation"]

    @router.route("POST", SLICES + "/{slice}:batchImport")
    def batch_import(request: VertexRequest) -> Resource:
        return slices.batch_import(
            models, *evaluation_of(request), request.params["slice"], request.body
        )


# Tensor-typed and gRPC-shaped prediction methods no local model server speaks.
DIRECT_REFUSALS = {
    "directPredict": (
        "directPredict hands Tensor inputs straight to a model server's own predict (TF "
        "Serving-style servers); the local cloud's scikit-learn/XGBoost predictors and custom "
        "containers take JSON instances: use :predict."
    ),
    "directRawPredict": (
        "directRawPredict calls a method (method_name) of the model server's own gRPC service "
        "with raw bytes; local model servers speak HTTP JSON only: use :rawPredict."
    ),
    "serverStreamingPredict": (
        "serverStreamingPredict streams Tensor outputs from a model server that produces them "
        "incrementally; the local predictors answer once, in JSON: use :predict, or "
        ":streamRawPredict for one chunk."
    ),
}


def _register_endpoint_changes(router: VertexRouter, area: RegistryArea) -> None:
    endpoints = area.endpoints

    def endpoint_name(request: VertexRequest) -> str:
        return f"{request.parent}/endpoints/{request.params['endpoint']}"

    @router.route("POST", ENDPOINT + ":update")
    def update_long_running(request: VertexRequest) -> Resource:
        return endpoint_changes.update_long_running(endpoints, endpoint_name(request), request.body)

    @router.route("POST", ENDPOINT + ":mutateDeployedModel")
    def mutate_deployed_model(request: VertexRequest) -> Resource:
        return endpoint_changes.mutate_deployed_model(
            endpoints, endpoint_name(request), request.body
        )

    @router.route("POST", ENDPOINT + ":explain")
    def explain_instances(request: VertexRequest) -> Resource:
        return explain.explain(endpoints, endpoint_name(request), request.body)

    @router.route("POST", ENDPOINT + ":streamRawPredict")
    def stream_raw_predict(request: VertexRequest) -> object:
        """The whole answer as one chunk: local predictors do not stream."""
        length = int(request.headers.get("content-length") or 0)
        deployed, predictions = endpoints.predict(endpoint_name(request), request.body, length)
        return responses.raw_prediction(request.params["endpoint"], deployed, predictions)

    for verb, reason in DIRECT_REFUSALS.items():
        _register_refusal(router, ENDPOINT + ":" + verb, reason)


def _register_refusal(router: VertexRouter, path: str, reason: str) -> None:
    @router.route("POST", path)
    def refuse(request: VertexRequest) -> Resource:
        raise refused(f"{reason} (endpoint {request.params['endpoint']})")
