"""persistentResources: create, get, list, patch, delete, reboot.

On Vertex a persistent resource is a reservation of machines on Google that jobs naming it
(`jobSpec.persistentResourceId`) run on. Locally it runs nothing by itself and reserves
nothing: jobs run as local processes whether or not they name one. What it does here is what
a client can observe: its lifecycle (PROVISIONING -> RUNNING; REBOOTING or UPDATING -> RUNNING;
each change a long-running operation), and the checks a job naming it must pass
(`persistent_resources.jobs`).

Every request field is honoured or refused: the pools' machines and disks are checked like a
custom job's worker pools; `network`, `encryptionSpec`, `resourceRuntimeSpec.serviceAccountSpec`
are stored and a job on the resource must agree with them; `resourceRuntimeSpec.raySpec`
(Ray on Vertex) is refused with 501, since no Ray cluster is started locally.
`resourceRuntime` (Ray's access URIs) is therefore never filled.
"""

from __future__ import annotations

import threading

from vertexkit.local.errors import ApiError, bad_request, conflict, failed_precondition
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core import fields
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.core.recipe import Recipe, StandardMethods
from vertexkit.local.vertex.persistent_resources import rules
from vertexkit.local.vertex.persistent_resources.jobs import COLLECTION, RUNNING
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource, now_rfc3339
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.requests import validate_parent

LOCATION = "projects/{project}/locations/{location}"
RESOURCE = f"{LOCATION}/{COLLECTION}/{{resource}}"
KIND = "PersistentResource"
# get, list and delete are the recipe's; create and patch are the area's (below), since each
# change is answered at once and settles to RUNNING later.
PERSISTENT_RESOURCES = Recipe(
    COLLECTION, KIND, aiplatform_v1.PersistentResource, "persistentResourceId",
    rules.RESOURCE_ID, "persistentResources", rules.validate_resource,
    output_only=rules.OUTPUT_ONLY, filterable=False,
)  # fmt: skip
# The states a change passes through before RUNNING (enum of `PersistentResource.state`).
SETTLING = ("PROVISIONING", "REBOOTING", "UPDATING")
# updateMask paths, camelCase and snake_case (the REST reference does not list them; these
# are the fields a user sets that do not re-create the machines).
UPDATABLE = {"displayName": "displayName", "display_name": "displayName", "labels": "labels",
             "resourcePools": "resourcePools", "resource_pools": "resourcePools"}  # fmt: skip


class PersistentResourcesArea(Lifecycle):
    def __init__(self, backend: VertexBackend) -> None:
        self.backend = backend
        self.store = backend.store
        self.methods = StandardMethods(backend, PERSISTENT_RESOURCES)
        self._settlers: list[threading.Thread] = []

    # -- lifecycle: a change is answered with its operation, then settles to RUNNING -----------
    def start(self) -> None:
        """A resource left settling by a stopped cloud settles now: nothing was running it."""
        for resource in self.store.list(COLLECTION):
            if resource.get("state") in SETTLING:
                self.settle(resource["name"])

    def close(self) -> None:
        for settler in self._settlers:
            settler.join(timeout=5)

    def begin(self, name: str, state: str, metadata_type: str) -> Resource:
        operation = self.backend.operations.start(name, metadata_type, KIND)

        def change(resource: Resource) -> None:
            resource.update(state=state, updateTime=now_rfc3339(), _operation=operation["name"])

        self.store.mutate(name, change, KIND)
        settler = threading.Thread(target=self.settle, args=(name,), daemon=True)
        self._settlers = [t for t in self._settlers if t.is_alive()] + [settler]
        settler.start()
        return self.backend.operations.public(operation)

    def settle(self, name: str) -> None:
        operation: str | None = None

        def change(resource: Resource) -> None:
            nonlocal operation
            operation = resource.pop("_operation", None)
            now = now_rfc3339()
            resource.update(state=RUNNING, updateTime=now)
            resource.setdefault("startTime", now)  # "for the first time entered RUNNING"

        try:
            resource = self.store.mutate(name, change, KIND)
        except ApiError:  # deleted before it settled: its delete answered already
            return
        if operation:
            self.backend.operations.finish(operation, StandardMethods.public(resource))

    # -- verbs -----------------------------------------------------------------------------
    def create(self, request: VertexRequest) -> Resource:
        validate_parent(request.params["project"], request.params["location"])
        resource_id = rules.validate_resource_id(request.query.get("persistentResourceId"))
        body = self.methods.parsed(request.body)
        rules.validate_resource(body)
        name = f"{request.parent}/{COLLECTION}/{resource_id}"
        if self.store.find(name) is not None:
            raise conflict(f"PersistentResource {name} already exists.")
        now = now_rfc3339()
        body.update(name=name, resourcePools=rules.with_pool_ids(body["resourcePools"]),
                    createTime=now, updateTime=now)  # fmt: skip
        self.store.insert(COLLECTION, name, body)
        operation = self.begin(name, "PROVISIONING", "CreatePersistentResourceOperationMetadata")
        lines = fields.notes(body, fields.PERSISTENT_RESOURCE_NOTES, "persistentResource")
        return fields.noted_operation(self.store, operation, lines)

    def patch(self, request: VertexRequest) -> Resource:
        fields = update_fields(request.query.get("updateMask", ""))
        current = self.running(request.path, "updated")
        patch = self.methods.parsed(request.body)
        updated = {**current}
        for field in fields:
            if field in patch:
                updated[field] = patch[field]
            else:
                updated.pop(field, None)
        rules.validate_resource(updated)
        rules.check_immutable_machines(current["resourcePools"], updated.get("resourcePools", []))
        updated["resourcePools"] = rules.with_pool_ids(updated["resourcePools"])
        self.store.put(request.path, updated)
        return self.begin(request.path, "UPDATING", "UpdatePersistentResourceOperationMetadata")

    def reboot(self, request: VertexRequest) -> Resource:
        protos.parse(aiplatform_v1.RebootPersistentResourceRequest, request.body)
        name = request.path.rsplit(":", 1)[0]
        self.running(name, "rebooted")
        return self.begin(name, "REBOOTING", "RebootPersistentResourceOperationMetadata")

    def running(self, name: str, verb: str) -> Resource:
        """A resource in the middle of a change cannot take another one (FAILED_PRECONDITION)."""
        resource = self.store.get(name, kind=KIND)
        if resource.get("state") != RUNNING:
            raise failed_precondition(
                f"PersistentResource {name} is {resource.get('state')}; it can be {verb} only "
                "when RUNNING."
            )
        return resource


def update_fields(mask: str) -> list[str]:
    paths = [path.strip() for path in mask.split(",") if path.strip()]
    if not paths:
        raise bad_request("updateMask: is required (e.g. resource_pools, display_name, labels)")
    for path in paths:
        if path not in UPDATABLE:
            allowed = ", ".join(sorted({"display_name", "labels", "resource_pools"}))
            raise bad_request(f"updateMask: {path!r} cannot be updated; allowed: {allowed}")
    return [UPDATABLE[path] for path in paths]


def register(context: AreaContext) -> PersistentResourcesArea:
    router, backend = context.router, context.backend
    area = PersistentResourcesArea(backend)
    own = {"create": area.create, "patch": area.patch}
    area.methods.register(router, f"{LOCATION}/{COLLECTION}", own)
    router.route("POST", f"{RESOURCE}:reboot")(area.reboot)
    return area
