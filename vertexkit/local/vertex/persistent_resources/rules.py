"""What a PersistentResource body must hold, checked as Vertex checks a create or an update.

Source: the discovery document (`aiplatform.v1.json`, `GoogleCloudAiplatformV1PersistentResource`,
`...ResourcePool`, `...ResourcePoolAutoscalingSpec`) and the REST reference of
`projects.locations.persistentResources`. Machines and disks are checked by `vertexkit.specs`,
the rule book worker pools use, so a pool accepts exactly the machines a custom job accepts.
"""

from __future__ import annotations

import re

from vertexkit.local.errors import bad_request, refused
from vertexkit.local.vertex.store import Resource
from vertexkit.specs import DiskSpec, MachineSpec
from vertexkit.specs.requests import validate_metadata

# persistentResourceId (discovery: "valid characters are /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/").
RESOURCE_ID = re.compile(r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$")
OUTPUT_ONLY = ("name", "state", "error", "createTime", "startTime", "updateTime",
               "resourceRuntime", "satisfiesPzs", "satisfiesPzi")  # fmt: skip
RAY_REFUSAL = (
    "persistentResource.resourceRuntimeSpec.raySpec: Ray on Vertex is not available locally: "
    "the local cloud runs jobs as processes and starts no Ray cluster (no head node, no "
    "dashboard, no accessUris); create the persistent resource without raySpec"
)




def validate_resource_id(resource_id: str | None) -> str:
    if not resource_id:
        raise bad_request("persistentResourceId: is required")
    if not RESOURCE_ID.match(resource_id):
        raise bad_request(
            f"persistentResourceId: {resource_id!r} is invalid; up to 63 characters matching "
            "^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$"
        )
    return resource_id


def validate_resource(body: Resource) -> None:
    """The whole body of a create (or of a resource after an update), before it is stored."""
    validate_metadata(body, "persistentResource", display_name_required=False)
    if ((body.get("resourceRuntimeSpec") or {}).get("raySpec")) is not None:
        raise refused(RAY_REFUSAL)
    pools = body.get("resourcePools") or []
    if not pools:
        raise bad_request(
            "persistentResource.resourcePools: at least one resource pool is required"
        )
    for index, pool in enumerate(pools):
        validate_pool(pool, f"persistentResource.resourcePools[{index}]")
    check_unique_ids(pools)


def validate_pool(pool: Resource, field: str) -> None:
    if not (pool.get("machineSpec") or {}).get("machineType"):
        raise bad_request(f"{field}.machineSpec.machineType: is required")
    MachineSpec.from_api(pool["machineSpec"], f"{field}.machineSpec")
    if "diskSpec" in pool:
        DiskSpec.from_api(pool["diskSpec"], f"{field}.diskSpec")
    if pool.get("id") and not RESOURCE_ID.match(pool["id"]):
        raise bad_request(
            f"{field}.id: {pool['id']!r} must match ^[a-z]([a-z0-9-]{{0,61}}[a-z0-9])?$"
        )
    check_replicas(pool, field)


def check_replicas(pool: Resource, field: str) -> None:
    """replicaCount >= 1, and within autoscalingSpec's range when there is one (discovery:
    minReplicaCount "must be <= replica_count", maxReplicaCount "must be >= replica_count")."""
    replicas = int(pool.get("replicaCount") or 0)
    if replicas < 1:
        raise bad_request(f"{field}.replicaCount: must be at least 1; got {replicas}")
    scaling = pool.get("autoscalingSpec")
    if scaling is None:
        return
    low, high = int(scaling.get("minReplicaCount") or 0), int(scaling.get("maxReplicaCount") or 0)
    if low > replicas:
        raise bad_request(
            f"{field}.autoscalingSpec.minReplicaCount: must be <= replicaCount ({replicas}); "
            f"got {low}"
        )
    if high and (high < replicas or high <= low):
        raise bad_request(
            f"{field}.autoscalingSpec.maxReplicaCount: must be >= replicaCount ({replicas}) and "
            f"> minReplicaCount ({low}); got {high}"
        )


def check_unique_ids(pools: list[Resource]) -> None:
    seen: set[str] = set()
    for index, pool in enumerate(pools):
        pool_id = pool.get("id")
        if pool_id in seen:
            raise bad_request(
                f"persistentResource.resourcePools[{index}].id: {pool_id!r} is used by another pool"
            )
        if pool_id:
            seen.add(pool_id)


def with_pool_ids(pools: list[Resource]) -> list[Resource]:
    """Vertex generates the ID of a pool given none ("Otherwise, it's generated automatically");
    its scheme is not documented: here the machine type, and its index when that is taken."""
    taken = {pool["id"] for pool in pools if pool.get("id")}
    named = []
    for index, pool in enumerate(pools):
        pool_id = pool.get("id") or pool["machineSpec"]["machineType"]
        if not pool.get("id") and pool_id in taken:
            pool_id = f"{pool_id}-{index}"
        taken.add(pool_id)
        pool = {key: value for key, value in pool.items() if key != "usedReplicaCount"}
        named.append({**pool, "id": pool_id})  # usedReplicaCount is output only: none used here
    return named


def check_immutable_machines(current: list[Resource], updated: list[Resource]) -> None:
    """A pool's machineSpec is "Required. Immutable." (discovery): an update may resize a pool,
    add or remove one, but not change the machine of a pool that stays."""
    machines = {pool["id"]: pool.get("machineSpec") for pool in current}
    for index, pool in enumerate(updated):
        if pool.get("id") in machines and pool.get("machineSpec") != machines[pool["id"]]:
            raise bad_request(
                f"persistentResource.resourcePools[{index}].machineSpec: is immutable; "
                f"pool {pool['id']!r} has {machines[pool['id']]}"
            )
