"""A job that names a persistent resource (`jobSpec.persistentResourceId`): checked against it
before the job is stored, as Vertex checks it on create.

Source: `GoogleCloudAiplatformV1CustomJobSpec.persistentResourceId` (discovery): "The ID of the
PersistentResource in the same Project and Location ... The network and CMEK configs on the job
should be consistent with those on the PersistentResource, otherwise, the job will be
rejected"; and Vertex's "Run training jobs on a persistent resource" guide: each worker pool's
machine must be one of the resource's pools, with no more replicas than that pool holds.
Locally the job then runs as processes, like every job; the resource reserves nothing.
"""

from __future__ import annotations

from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex.store import Resource, ResourceStore

COLLECTION = "persistentResources"
RUNNING = "RUNNING"
MACHINE_KEYS = ("machineType", "acceleratorType", "acceleratorCount", "tpuTopology")


def check_job_placement(
    store: ResourceStore, location: str, job: Resource, spec_field: str
) -> None:
    """Raises a 400 naming the field when `job[spec_field]` cannot run on the resource it names.

    `location` is `projects/P/locations/L` of the job; `spec_field` is `jobSpec` (custom jobs)
    or `trialJobSpec` (tuning jobs)."""
    spec = job.get(spec_field) or {}
    resource_id = spec.get("persistentResourceId")
    if not resource_id:
        return
    resource = running_resource(store, location, resource_id, f"{spec_field}.persistentResourceId")
    check_same_network(spec, resource, spec_field)
    check_same_encryption(job, resource)
    check_service_account(spec, resource, spec_field)
    for index, pool in enumerate(spec.get("workerPoolSpecs") or []):
        if int(pool.get("replicaCount") or 0):
            check_pool_fits(pool, resource, f"{spec_field}.workerPoolSpecs[{index}]")


def running_resource(store: ResourceStore, location: str, resource_id: str, field: str) -> Resource:
    name = f"{location}/{COLLECTION}/{resource_id}"
    resource = store.find(name)
    if resource is None:
        raise bad_request(
            f"{field}: persistent resource {name} does not exist; a job runs on a persistent "
            "resource of its own project and location (persistentResources.create)"
        )
    if resource.get("state") != RUNNING:
        raise bad_request(
            f"{field}: persistent resource {name} is {resource.get('state')}; a job can only be "
            "created on a RUNNING persistent resource"
        )
    return resource


def check_same_network(spec: Resource, resource: Resource, spec_field: str) -> None:
    if (spec.get("network") or "") != (resource.get("network") or ""):
        raise bad_request(
            f"{spec_field}.network: {spec.get('network') or 'unset'} differs from the persistent "
            f"resource's network ({resource.get('network') or 'unset'}); they must be the same"
        )


def check_same_encryption(job: Resource, resource: Resource) -> None:
    if (job.get("encryptionSpec") or {}) != (resource.get("encryptionSpec") or {}):
        raise bad_request(
            f"encryptionSpec: {job.get('encryptionSpec') or 'unset'} differs from the persistent "
            f"resource's encryptionSpec ({resource.get('encryptionSpec') or 'unset'}); they "
            "must be the same"
        )


def check_service_account(spec: Resource, resource: Resource, spec_field: str) -> None:
    """`serviceAccountSpec.enableCustomServiceAccount` (discovery): "custom user-managed service
    account is enforced to run any workloads (for example, Vertex Jobs) on the resource"."""
    accounts = (resource.get("resourceRuntimeSpec") or {}).get("serviceAccountSpec") or {}
    if accounts.get("enableCustomServiceAccount") and not spec.get("serviceAccount"):
        raise bad_request(
            f"{spec_field}.serviceAccount: is required: persistent resource {resource['name']} "
            "enforces a custom service account (enableCustomServiceAccount)"
        )


def check_pool_fits(pool: Resource, resource: Resource, field: str) -> None:
    machine = machine_key(pool.get("machineSpec") or {})
    matching = [
        p for p in resource.get("resourcePools") or [] if machine_key(p["machineSpec"]) == machine
    ]
    if not matching:
        offered = [p["machineSpec"] for p in resource.get("resourcePools") or []]
        raise bad_request(
            f"{field}.machineSpec: {pool.get('machineSpec')} is not a machine of persistent "
            f"resource {resource['name']}; its resource pools offer {offered}"
        )
    most = max(pool_capacity(p) for p in matching)
    if int(pool.get("replicaCount") or 0) > most:
        raise bad_request(
            f"{field}.replicaCount: {pool.get('replicaCount')} replicas exceed the "
            f"{most} machines of that type in persistent resource {resource['name']}"
        )


def machine_key(machine: Resource) -> tuple[Any, ...]:
    # proto3 JSON leaves zero values out: an unset count and an explicit 0 are the same machine.
    return tuple(machine.get(key) or None for key in MACHINE_KEYS)


def pool_capacity(pool: Resource) -> int:
    scaling = pool.get("autoscalingSpec") or {}
    return max(int(pool.get("replicaCount") or 0), int(scaling.get("maxReplicaCount") or 0))
