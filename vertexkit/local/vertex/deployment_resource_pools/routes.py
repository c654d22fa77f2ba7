"""deploymentResourcePools: create, get, list, patch, delete, queryDeployedModels.

A deployment resource pool is a `DedicatedResources` (a machine, a replica range) that models
deployed to endpoints share by naming it in `deployedModel.sharedResources`. Locally a model
server is a process whatever its resources say, so the pool runs nothing itself: it is stored,
its machine checked like a deployed model's, and read back by the deployments naming it
(queryDeployedModels; delete refuses a pool still in use with FAILED_PRECONDITION, as Vertex).

Every field is honoured or refused: `dedicatedResources` is checked by `vertexkit.specs` (the
machine for serving, the replica range); `serviceAccount`, `disableContainerLogging` and
`encryptionSpec` are stored and answered back (no container is started on the pool's behalf,
so there is nothing for them to change locally).
Source: discovery `GoogleCloudAiplatformV1DeploymentResourcePool`,
`...CreateDeploymentResourcePoolRequest`, `...QueryDeployedModelsResponse`.
"""

from __future__ import annotations

import re

from vertexkit.local.errors import bad_request, conflict, failed_precondition
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core import fields
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.core.recipe import Recipe, StandardMethods
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource, now_rfc3339, page
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs import validate_dedicated_resources
from vertexkit.specs.requests import validate_list_query, validate_parent

LOCATION = "projects/{project}/locations/{location}"
COLLECTION = "deploymentResourcePools"
POOL = f"{LOCATION}/{COLLECTION}/{{pool}}"
KIND = "DeploymentResourcePool"
FIELD = "deploymentResourcePool"
# deploymentResourcePoolId (discovery: "valid characters are /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/").
POOL_ID = re.compile(r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$")
OUTPUT_ONLY = ("name", "createTime", "satisfiesPzs", "satisfiesPzi")
# updateMask paths: those the REST reference lists as updatable for a deployed model's
# resources (endpoints.mutateDeployedModel: min/max_replica_count, autoscaling_metric_specs,
# disable_container_logging); the machine itself is "Required. Immutable." (discovery).
UPDATABLE = {
    "dedicated_resources.min_replica_count": ("dedicatedResources", "minReplicaCount"),
    "dedicated_resources.max_replica_count": ("dedicatedResources", "maxReplicaCount"),
    "dedicated_resources.autoscaling_metric_specs": (
        "dedicatedResources",
        "autoscalingMetricSpecs",
    ),
    "disable_container_logging": ("disableContainerLogging", None),
}


def validate_pool(pool: Resource) -> None:
    resources = pool.get("dedicatedResources")
    if not resources:
        raise bad_request(f"{FIELD}.dedicatedResources: is required")
    if not (resources.get("machineSpec") or {}).get("machineType"):
        raise bad_request(f"{FIELD}.dedicatedResources.machineSpec.machineType: is required")
    validate_dedicated_resources(resources, f"{FIELD}.dedicatedResources")


def mask_paths(mask: str) -> list[str]:
    """updateMask paths in snake_case (camelCase accepted, as the REST surface sends it)."""
    paths = [re.sub(r"(?<!^)(?=[A-Z])", "_", p.strip()).lower() for p in mask.split(",")]
    paths = [path for path in paths if path]
    if not paths:
        raise bad_request(f"updateMask: is required; allowed: {', '.join(UPDATABLE)}")
    for path in paths:
        if path not in UPDATABLE:
            raise bad_request(
                f"updateMask: {path!r} cannot be updated; allowed: {', '.join(UPDATABLE)}"
            )
    return paths


def apply_path(pool: Resource, patch: Resource, path: str) -> None:
    """One masked field takes the patch's value, or is cleared when the patch leaves it out."""
    top, inner = UPDATABLE[path]
    source, target = patch, pool
    if inner is not None:
        source, target = patch.get(top) or {}, pool.setdefault(top, {})
        top = inner
    if top in source:
        target[top] = source[top]
    else:
        target.pop(top, None)


# get and list are the recipe's; create (its ID and pool in the body), patch (nested mask
# paths) and delete (refused while in use) are the area's, below.
POOLS = Recipe(
    COLLECTION, KIND, aiplatform_v1.DeploymentResourcePool, "deploymentResourcePoolId", POOL_ID,
    COLLECTION, validate_pool, "CreateDeploymentResourcePoolOperationMetadata",
    output_only=OUTPUT_ONLY, filterable=False,
)  # fmt: skip


class DeploymentResourcePoolsArea(Lifecycle):
    def __init__(self, backend: VertexBackend) -> None:
        self.backend = backend
        self.store = backend.store
        self.pools = StandardMethods(backend, POOLS)

    def create(self, request: VertexRequest) -> Resource:
        validate_parent(request.params["project"], request.params["location"])
        message = protos.parse(aiplatform_v1.CreateDeploymentResourcePoolRequest, request.body)
        pool_id = message.deployment_resource_pool_id
        if not POOL_ID.match(pool_id or ""):
            raise bad_request(
                f"deploymentResourcePoolId: {pool_id!r} is invalid; it is required, up to 63 "
                "characters matching ^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$"
            )
        pool = self.pools.parsed(protos.to_dict(message.deployment_resource_pool))
        validate_pool(pool)
        name = f"{request.parent}/{COLLECTION}/{pool_id}"
        if self.store.find(name) is not None:
            raise conflict(f"DeploymentResourcePool {name} already exists.")
        pool.update(name=name, createTime=now_rfc3339())
        self.store.insert(COLLECTION, name, pool)
        operation = self.backend.operations.run_now(name, POOLS.create_operation, KIND, pool)
        lines = fields.notes(pool, fields.POOL_NOTES, "deploymentResourcePool")
        return fields.noted_operation(self.store, operation, lines)

    def patch(self, request: VertexRequest) -> Resource:
        paths = mask_paths(request.query.get("updateMask", ""))
        pool = self.store.get(request.path, kind=KIND)
        patch = self.pools.parsed(request.body)
        for path in paths:
            apply_path(pool, patch, path)
        validate_pool(pool)
        self.store.put(request.path, pool)
        return self.backend.operations.run_now(
            request.path, "UpdateDeploymentResourcePoolOperationMetadata", KIND, pool
        )

    def delete(self, request: VertexRequest) -> Resource:
        self.store.get(request.path, kind=KIND)
        in_use = self.deployments(request.path)
        if in_use:
            refs = [f"{endpoint}/deployedModels/{model['id']}" for endpoint, model in in_use]
            raise failed_precondition(
                f"DeploymentResourcePool {request.path} is still used by deployed models {refs}; "
                "undeploy them first."
            )
        return self.pools.delete(request)

    def query_deployed_models(self, request: VertexRequest) -> Resource:
        validate_list_query(request.query)
        name = request.path.rsplit(":", 1)[0]
        self.store.get(name, kind=KIND)
        found = self.deployments(name)
        refs = [{"endpoint": endpoint, "deployedModelId": model["id"]} for endpoint, model in found]
        response = page(refs, request.query, "deployedModelRefs")
        shown = response.get("deployedModelRefs", [])
        start = int(request.query.get("pageToken") or 0)
        if shown:  # the deprecated full models, for the same page
            response["deployedModels"] = [model for _, model in found[start : start + len(shown)]]
        response["totalDeployedModelCount"] = len(found)
        response["totalEndpointCount"] = len({endpoint for endpoint, _ in found})
        return response

    def deployments(self, pool: str) -> list[tuple[str, Resource]]:
        """(endpoint name, deployed model) of every model deployed with `sharedResources` = pool."""
        location = pool.split(f"/{COLLECTION}/", 1)[0]
        return [
            (endpoint["name"], model)
            for endpoint in self.store.list("endpoints", location)
            for model in endpoint.get("deployedModels") or []
            if model.get("sharedResources") == pool
        ]


def register(context: AreaContext) -> DeploymentResourcePoolsArea:
    router, backend = context.router, context.backend
    area = DeploymentResourcePoolsArea(backend)
    own = {"create": area.create, "patch": area.patch, "delete": area.delete}
    area.pools.register(router, f"{LOCATION}/{COLLECTION}", own)
    router.route("GET", f"{POOL}:queryDeployedModels")(area.query_deployed_models)
    return area
