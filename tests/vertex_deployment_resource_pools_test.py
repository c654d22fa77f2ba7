"""Deployment resource pools through `aiplatform_v1.DeploymentResourcePoolServiceClient` (REST).

Expected values are Google's: fields and the create request from the REST reference
(projects.locations.deploymentResourcePools, CreateDeploymentResourcePoolRequest), the
QueryDeployedModelsResponse fields (deployedModelRefs, totalDeployedModelCount,
totalEndpointCount), and delete of a pool in use answering FAILED_PRECONDITION."""

from __future__ import annotations

import uuid

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform_v1
from google.protobuf import field_mask_pb2

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.projects import numbered_name
from vertexkit.local.vertex.store import now_rfc3339

Client = aiplatform_v1.DeploymentResourcePoolServiceClient


@pytest.fixture
def client(local_cloud: LocalCloud) -> Client:
    return Client(
        credentials=AnonymousCredentials(),
        transport="rest",
        client_options={"api_endpoint": local_cloud.url},
    )


@pytest.fixture
def parent(cloud_context: CloudContext) -> str:
    return f"projects/{cloud_context.project}/locations/{cloud_context.region}"


def pool_body(machine_type: str = "n1-standard-4", replicas: int = 1) -> dict:
    machine = {"machine_spec": {"machine_type": machine_type}, "min_replica_count": replicas}
    return {"dedicated_resources": {**machine, "max_replica_count": 3}}


def create(
    client: Client, parent: str, body: dict | None = None
) -> aiplatform_v1.DeploymentResourcePool:
    pool_id = f"pool-{uuid.uuid4().hex[:8]}"
    operation = client.create_deployment_resource_pool(
        parent=parent,
        deployment_resource_pool=body or pool_body(),
        deployment_resource_pool_id=pool_id,
    )
    return operation.result(timeout=30)


def test_create_get_list_update_delete(client: Client, parent: str) -> None:
    pool = create(client, parent)
    assert pool.name.startswith(f"{numbered_name(parent)}/deploymentResourcePools/pool-")
    assert pool.create_time
    assert (
        client.get_deployment_resource_pool(name=pool.name).dedicated_resources.max_replica_count
        == 3
    )
    assert pool.name in [p.name for p in client.list_deployment_resource_pools(parent=parent)]
    pool.dedicated_resources.max_replica_count = 5
    mask = field_mask_pb2.FieldMask(paths=["dedicated_resources.max_replica_count"])
    updated = client.update_deployment_resource_pool(
        deployment_resource_pool=pool, update_mask=mask
    )
    assert updated.result(timeout=30).dedicated_resources.max_replica_count == 5
    client.delete_deployment_resource_pool(name=pool.name).result(timeout=30)
    with pytest.raises(exceptions.NotFound):
        client.get_deployment_resource_pool(name=pool.name)


def test_a_bad_machine_or_replica_count_is_a_400_naming_the_field(
    client: Client, parent: str
) -> None:
    with pytest.raises(
        exceptions.BadRequest, match=r"dedicatedResources\.machineSpec\.machineType"
    ):
        create(client, parent, pool_body(machine_type="n1-nosuch-4"))
    with pytest.raises(exceptions.BadRequest, match=r"dedicatedResources\.minReplicaCount"):
        create(client, parent, pool_body(replicas=0))


def test_the_machine_cannot_be_updated(client: Client, parent: str) -> None:
    pool = create(client, parent)
    mask = field_mask_pb2.FieldMask(paths=["dedicated_resources.machine_spec"])
    with pytest.raises(exceptions.BadRequest, match="updateMask"):
        client.update_deployment_resource_pool(deployment_resource_pool=pool, update_mask=mask)


def deploy_on(cloud: LocalCloud, parent: str, pool: str, endpoint_id: str) -> None:
    """An endpoint with a model deployed on `pool`, written to the store: no served path deploys
    onto a pool yet (the registry's custom models list only DEDICATED_RESOURCES)."""
    name = f"{parent}/endpoints/{endpoint_id}"
    # Written as the store keys names (the project ID); answered with the number.
    stored_pool = f"{parent}/deploymentResourcePools/{pool.rsplit('/', 1)[1]}"
    deployed = {"id": endpoint_id[-6:], "model": f"{parent}/models/1",
                "sharedResources": stored_pool}  # fmt: skip
    now = now_rfc3339()
    endpoint = {"name": name, "displayName": "shared", "deployedModels": [deployed],
                "createTime": now, "updateTime": now}  # fmt: skip
    cloud.vertex.backend.store.insert("endpoints", name, endpoint)


def test_query_deployed_models_and_delete_of_a_pool_in_use(
    local_cloud: LocalCloud, client: Client, parent: str
) -> None:
    pool = create(client, parent)
    empty = client.query_deployed_models(deployment_resource_pool=pool.name)
    assert list(empty) == []
    for endpoint_id in ("500100", "500200"):
        deploy_on(local_cloud, parent, pool.name, f"{uuid.uuid4().int % 10**6}{endpoint_id}")
    request = {"deployment_resource_pool": pool.name, "page_size": 1}
    pages = list(client.query_deployed_models(request=request).pages)
    assert len(pages) == 2  # one model a page
    assert all(p.total_deployed_model_count == 2 and p.total_endpoint_count == 2 for p in pages)
    refs = {(ref.endpoint, ref.deployed_model_id) for p in pages for ref in p.deployed_model_refs}
    assert len(refs) == 2
    assert pages[0].deployed_models[0].shared_resources == pool.name
    # Vertex sends FAILED_PRECONDITION as HTTP 400, which api_core raises as BadRequest.
    with pytest.raises(exceptions.BadRequest) as refused:
        client.delete_deployment_resource_pool(name=pool.name)
    assert refused.value.response.json()["error"]["status"] == "FAILED_PRECONDITION"
    assert client.get_deployment_resource_pool(name=pool.name).name == pool.name
