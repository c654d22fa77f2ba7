"""Persistent resources through Google's clients: `aiplatform_v1.PersistentResourceServiceClient`
(REST) for the resource, `aiplatform.CustomJob(...).run(persistent_resource_id=...)` and
`JobServiceClient.create_custom_job` for jobs on one.

Expected values are Google's: the resource's fields and states from the REST reference
(projects.locations.persistentResources, PersistentResource.State), the job rule from
CustomJobSpec.persistentResourceId ("The ID of the PersistentResource in the same Project and
Location which to run")."""

from __future__ import annotations

import sys
import uuid
from typing import Any

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, aiplatform_v1
from google.cloud.aiplatform import jobs as sdk_jobs
from google.protobuf import field_mask_pb2

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.projects import numbered_name

MACHINE = {"machine_type": "n1-standard-4"}
State = aiplatform_v1.PersistentResource.State
Client = aiplatform_v1.PersistentResourceServiceClient


def options(cloud: LocalCloud) -> dict:
    return {
        "credentials": AnonymousCredentials(),
        "transport": "rest",
        "client_options": {"api_endpoint": cloud.url},
    }


@pytest.fixture
def client(local_cloud: LocalCloud) -> Client:
    return Client(**options(local_cloud))


@pytest.fixture
def parent(cloud_context: CloudContext) -> str:
    return f"projects/{cloud_context.project}/locations/{cloud_context.region}"


def new_id() -> str:
    return f"pr-{uuid.uuid4().hex[:8]}"


def resource(machine: dict | None = None, replicas: int = 2, **fields: object) -> dict:
    pool = {"machine_spec": machine or MACHINE, "replica_count": replicas}
    return {"display_name": "reserved", "resource_pools": [pool], **fields}


def create(client: Client, parent: str, body: dict, resource_id: str | None = None) -> Any:
    return client.create_persistent_resource(
        parent=parent, persistent_resource=body, persistent_resource_id=resource_id or new_id()
    )


def test_create_provisions_then_runs_and_is_listed(client: Client, parent: str) -> None:
    resource_id = new_id()
    operation = create(client, parent, resource(), resource_id)
    created = operation.result(timeout=30)
    # The reference's name format, with the project number Vertex names resources with.
    name = f"{numbered_name(parent)}/persistentResources/{resource_id}"
    assert created.name == name and created.state == State.RUNNING
    assert created.start_time and created.create_time and created.update_time
    assert created.resource_pools[0].replica_count == 2
    assert created.resource_pools[0].id  # "Otherwise, it's generated automatically."
    assert client.get_persistent_resource(name=name).state == State.RUNNING
    assert name in [r.name for r in client.list_persistent_resources(parent=parent)]
    with pytest.raises(exceptions.Conflict):
        create(client, parent, resource(), resource_id)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (resource({"machine_type": "n1-nosuch-4"}), "resourcePools[0].machineSpec.machineType"),
        (resource(replicas=0), "resourcePools[0].replicaCount"),
        ({"display_name": "no pools"}, "persistentResource.resourcePools"),
    ],
)
def test_a_bad_pool_is_a_400_naming_the_field(
    client: Client, parent: str, body: dict, field: str
) -> None:
    with pytest.raises(exceptions.BadRequest, match=field.replace("[", r"\[").replace("]", r"\]")):
        create(client, parent, body)


def test_ray_on_vertex_is_refused_naming_ray_spec(client: Client, parent: str) -> None:
    body = resource(resource_runtime_spec={"ray_spec": {"image_uri": "us-docker.pkg.dev/x/ray"}})
    with pytest.raises(exceptions.MethodNotImplemented, match="raySpec"):
        create(client, parent, body)


def test_resize_reboot_and_delete(client: Client, parent: str) -> None:
    created = create(client, parent, resource()).result(timeout=30)
    created.resource_pools[0].replica_count = 3
    mask = field_mask_pb2.FieldMask(paths=["resource_pools"])
    updated = client.update_persistent_resource(persistent_resource=created, update_mask=mask)
    assert updated.result(timeout=30).resource_pools[0].replica_count == 3
    rebooted = client.reboot_persistent_resource(name=created.name).result(timeout=30)
    assert rebooted.state == State.RUNNING
    client.delete_persistent_resource(name=created.name).result(timeout=30)
    with pytest.raises(exceptions.NotFound):
        client.get_persistent_resource(name=created.name)


def test_update_without_a_mask_or_of_the_machine_is_a_400(client: Client, parent: str) -> None:
    created = create(client, parent, resource()).result(timeout=30)
    with pytest.raises(exceptions.BadRequest, match="updateMask"):
        client.update_persistent_resource(persistent_resource=created, update_mask={})
    created.resource_pools[0].machine_spec.machine_type = "n1-standard-8"
    mask = field_mask_pb2.FieldMask(paths=["resource_pools"])
    with pytest.raises(exceptions.BadRequest, match=r"resourcePools\[0\]\.machineSpec"):
        client.update_persistent_resource(persistent_resource=created, update_mask=mask)


# -- jobs on a persistent resource ---------------------------------------------------------------
def tiny_pool(machine: dict | None = None) -> dict:
    return {
        "machine_spec": machine or MACHINE,
        "replica_count": 1,
        "container_spec": {
            "image_uri": "us-docker.pkg.dev/my-project/trainers/app:latest",
            "command": [sys.executable, "-c", "print(1)"],
        },
    }


def job_client(cloud: LocalCloud) -> aiplatform_v1.JobServiceClient:
    return aiplatform_v1.JobServiceClient(**options(cloud))


def job_on(resource_id: str, machine: dict | None = None) -> dict:
    spec = {"worker_pool_specs": [tiny_pool(machine)], "persistent_resource_id": resource_id}
    return {"display_name": "on-reserved", "job_spec": spec}


def test_a_job_on_a_missing_resource_is_a_400_naming_the_field(
    local_cloud: LocalCloud, parent: str
) -> None:
    with pytest.raises(exceptions.BadRequest, match=r"jobSpec\.persistentResourceId"):
        job_client(local_cloud).create_custom_job(parent=parent, custom_job=job_on("pr-missing"))


def test_a_job_on_another_machine_is_a_400_naming_the_pool(
    local_cloud: LocalCloud,
    client: Client,
    parent: str,
) -> None:
    resource_id = new_id()
    create(client, parent, resource(), resource_id).result(timeout=30)
    other = {"machine_type": "n1-standard-8"}
    with pytest.raises(exceptions.BadRequest, match=r"workerPoolSpecs\[0\]\.machineSpec"):
        job_client(local_cloud).create_custom_job(
            parent=parent, custom_job=job_on(resource_id, other)
        )


def test_a_job_runs_on_a_running_resource(
    cloud_context: CloudContext,
    client: Client,
    parent: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sdk_jobs, "_JOB_WAIT_TIME", 0.1)  # the SDK polls every 5 s otherwise
    cloud_context.init_aiplatform(staging_bucket="gs://vertexkit-staging")
    resource_id = new_id()
    create(client, parent, resource(), resource_id).result(timeout=30)
    job = aiplatform.CustomJob(display_name="on-reserved", worker_pool_specs=[tiny_pool()])
    job.run(persistent_resource_id=resource_id, timeout=60)
    assert job.state.name == "JOB_STATE_SUCCEEDED"
    assert job.job_spec.persistent_resource_id == resource_id
