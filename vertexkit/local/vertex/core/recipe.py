"""A Vertex resource's recipe and the standard methods it declares, written once.

A `Recipe` says what a resource is (its `aiplatform_v1` message, store collection, ID
parameter and pattern, list key, the `vertexkit.specs` rule its body must pass, whether create
answers a long-running operation, what is deleted with it); `StandardMethods` answers create
(with a client-chosen ID), get, list (filter, pageSize/pageToken), patch (updateMask,
allowMissing) and delete for it, and `register` puts them on the router at the collection's
URL template, taking an area's own handler where it has one. Every create and patch is parsed
with the message type and checked before anything is stored. Metadata contexts, artifacts and
executions, TensorBoard's resources, persistent resources and deployment resource pools are
recipes, and so are the older areas' resources (models, evaluations and slices, endpoints,
datasets and their versions, studies and trials, every job collection); their areas add only
their custom verbs and the methods whose behaviour differs.

Where a resource differs in a way several share, the recipe says so (Vertex gives the ID, the
location must be a Vertex region, a fixed set of updatable fields with the mask required, a
list's own order or filter grammar, a delete that answers Empty). Where an area does something
of its own around a standard method (a job's checks and engine, a model's versions), it
subclasses `StandardMethods` and overrides the step: `check` (a create's rules),
`build` (the stored resource), `created` (after it is stored: start its engine), `lookup`
(a name-keyed get: `models/m@2`), `items` (what a list reads), `view` (how it is answered),
`check_delete` (a job is deleted only once ended).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from vertexkit.local.errors import bad_request, conflict
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.fields import check_etag, noted_operation
from vertexkit.local.vertex.core.filters import Predicate, compile_filter
from vertexkit.local.vertex.router import Handler, VertexRequest, VertexRouter
from vertexkit.local.vertex.store import Resource, apply_update_mask, now_rfc3339, page
from vertexkit.specs.metadata import validate_resource_id
from vertexkit.specs.requests import validate_list_query, validate_parent

OUTPUT_ONLY = ("name", "createTime", "updateTime", "etag", "parentContexts", "runCount",
               "blobStoragePathPrefix")  # fmt: skip


STANDARD_METHODS = ("create", "list", "get", "patch", "delete")


@dataclass(frozen=True)
class Recipe:
    collection: str  # the store's collection, e.g. "metadataContexts"
    kind: str  # the resource's type name, e.g. "Context"
    message: type  # its aiplatform_v1 type
    id_param: str | None  # the create's ID parameter ("contextId"); None: Vertex gives the ID
    id_pattern: re.Pattern[str] | None
    list_key: str  # the list response's field, e.g. "contexts"
    validate: Callable[[Resource], None]
    create_operation: str | None = None  # the create's operation metadata type, if it is an LRO
    # The patch's, where Google's patch answers an operation (tensorboards.patch, as
    # aiplatform.v1's discovery document and the recorded `vertexaitensorboard` traffic say).
    update_operation: str | None = None
    children: tuple[str, ...] = ()  # store collections deleted with it (a tensorboard's runs)
    methods: tuple[str, ...] = STANDARD_METHODS  # which standard methods Google gives it
    # Fields Vertex sets, dropped from a create or patch body (a persistent resource's state).
    output_only: tuple[str, ...] = OUTPUT_ONLY
    # Whether list takes `filter`: some v1 lists (persistent resources, pools) have only paging.
    filterable: bool = True
    # The list `filter` grammar (jobs keep their own: display_name, state, labels.KEY).
    filter_by: Callable[[str | None], Predicate] = compile_filter
    order: Callable[[list[Resource]], list[Resource]] | None = None  # a list's own order
    # updateMask paths (snake_case and camelCase) -> field, when only these may be updated and
    # the mask is required (datasets: display_name, labels, description).
    updatable: Mapping[str, str] | None = None
    # The location in the path must be a Vertex AI region (top-level collections that check it).
    regional: bool = False
    # The 404's kind when the resource a nested collection lives in is missing.
    parent_kind: str = "Parent resource"
    # Whether delete answers a long-running operation (most) or Empty (Vizier's studies, trials).
    delete_operation: bool = True
    # The create operation's notes on fields with no local effect (core/fields.py).
    notes: Callable[[Resource], list[str]] | None = None
    # Whether a patch's stale etag is refused (409 ABORTED). Metadata nodes take it as Vertex
    # does: Google's own system test (test_experiments.py, test_delete_backing_tensorboard_
    # experiment_run_success) updates an experiment's context with an etag read before another
    # update, and passes against Vertex.
    checks_etag: bool = True


def snake_to_camel(path: str) -> str:
    head, *rest = path.split("_")
    return head + "".join(part.title() for part in rest)


def camel_to_snake(path: str) -> str:
    """A field (mask path) in snake_case: REST clients send FieldMask JSON in camelCase."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m[1].lower(), path)


class StandardMethods:
    def __init__(self, backend: VertexBackend, kind: Recipe) -> None:
        self.backend = backend
        self.store = backend.store
        self.kind = kind

    def register(
        self, router: VertexRouter, collection: str, own: dict[str, Handler] | None = None
    ) -> None:
        """The recipe's standard methods at `collection` (a URL template such as
        `projects/{project}/locations/{location}/tensorboards`); `own` replaces some of them
        with the area's handlers (a get that adds computed fields)."""
        own = own or {}
        one = f"{collection}/{{{self.kind.collection}Id}}"
        templates = {
            "create": ("POST", collection), "list": ("GET", collection), "get": ("GET", one),
            "patch": ("PATCH", one), "delete": ("DELETE", one),
        }  # fmt: skip
        for method in self.kind.methods:
            http_method, template = templates[method]
            router.route(http_method, template)(own.get(method) or getattr(self, method))

    # -- create -----------------------------------------------------------------------------------
    def create(self, request: VertexRequest) -> Resource:
        if self.kind.regional:
            validate_parent(request.params["project"], request.params["location"])
        body = self.parsed(request.body)
        resource_id = self.requested_id(request)
        self.check(request, body)
        self.require_parent(request.path)
        name = f"{request.path}/{resource_id or self.new_id(request)}"
        if self.store.find(name) is not None:
            raise conflict(f'{self.kind.kind} "{name}" already exists.')
        resource = self.insert(name, body)
        self.created(resource)
        if self.kind.create_operation:
            operation = self.backend.operations.run_now(
                name, self.kind.create_operation, self.kind.kind, self.view(resource)
            )
            lines = self.kind.notes(body) if self.kind.notes else []
            return noted_operation(self.store, operation, lines)
        return self.view(resource)

    def requested_id(self, request: VertexRequest) -> str | None:
        if self.kind.id_param is None:
            return None
        resource_id = request.query.get(self.kind.id_param) or None
        validate_resource_id(resource_id, self.kind.id_param, self.kind.id_pattern)
        return resource_id

    def check(self, request: VertexRequest, body: Resource) -> None:
        """A create's rules, before anything is stored (an area's own checks override it)."""
        self.kind.validate(body)

    def new_id(self, request: VertexRequest) -> str:
        return self.store.new_id()

    def created(self, resource: Resource) -> None:
        """After a create is stored: where an area starts its engine (a job's run)."""

    def parsed(self, body: Resource) -> Resource:
        parsed = protos.to_dict(protos.parse(self.kind.message, body))
        for output_only in self.kind.output_only:
            parsed.pop(output_only, None)
        return parsed

    def require_parent(self, collection_path: str) -> Resource | None:
        """The resource a collection lives in (a store, a tensorboard, an experiment) exists."""
        parent = collection_path.rsplit("/", 1)[0]
        if parent.count("/") > 3:  # under projects/P/locations/L/...
            return self.store.get(parent, kind=self.kind.parent_kind)
        return None

    def insert(self, name: str, body: Resource) -> Resource:
        return self.store.insert(self.kind.collection, name, self.build(name, body))

    def build(self, name: str, body: Resource) -> Resource:
        """The resource as stored: the body, its name and Vertex's timestamps."""
        now = now_rfc3339()
        return {**body, "name": name, "createTime": now, "updateTime": now, "etag": now}

    # -- the other verbs --------------------------------------------------------------------------
    def get(self, request: VertexRequest) -> Resource:
        return self.view(self.lookup(request))

    def lookup(self, request: VertexRequest) -> Resource:
        """The stored resource a get names (a name-keyed get resolves it otherwise)."""
        return self.store.get(request.path, kind=self.kind.kind)

    def list(self, request: VertexRequest) -> Resource:
        validate_list_query(request.query)
        keep = self.kind.filter_by(request.query.get("filter") if self.kind.filterable else None)
        found = [r for r in self.items(request) if keep(r)]
        if self.kind.order is not None:
            found = self.kind.order(found)
        return page([self.view(r) for r in found], request.query, self.kind.list_key)

    def items(self, request: VertexRequest) -> list[Resource]:
        """What a list reads. Stored resources are keyed by the resource they live in, not by
        the collection path."""
        return self.store.list(self.kind.collection, request.path.rsplit("/", 1)[0])

    def patch(self, request: VertexRequest) -> Resource:
        if self.store.find(request.path) is None and request.query.get("allowMissing") == "true":
            return self.create_missing(request)
        current = self.store.get(request.path, kind=self.kind.kind)
        patch = self.parsed(request.body)
        updated = dict(current)
        if self.kind.updatable is not None:
            paths = self.updatable_paths(request.query.get("updateMask", ""))
            apply_update_mask(updated, paths, self.kind.updatable, patch)
        else:
            mask = [snake_to_camel(p) for p in request.query.get("updateMask", "").split(",") if p]
            for field in mask or list(patch):
                if field in patch:
                    updated[field] = patch[field]
                else:
                    updated.pop(field, None)
        if self.kind.checks_etag:
            check_etag(current, request.body, self.kind.kind)  # after the mask: the request first
        self.check_patch(updated)
        updated["updateTime"] = updated["etag"] = now_rfc3339()
        stored = self.view(self.store.put(request.path, updated))
        if self.kind.update_operation:
            return self.backend.operations.run_now(
                request.path, self.kind.update_operation, self.kind.kind, stored
            )
        return stored

    def updatable_paths(self, mask: str) -> list[str]:
        """The mask's paths, each one of the recipe's updatable fields; a mask is required."""
        updatable = self.kind.updatable or {}
        paths = [p for p in mask.split(",") if p]
        unknown = [p for p in paths if p not in updatable]
        if not paths or unknown:
            fields = ", ".join(dict.fromkeys(camel_to_snake(f) for f in updatable.values()))
            raise bad_request(
                f"updateMask: {', '.join(unknown) or 'required'}; updatable fields are {fields}"
            )
        return paths

    def check_patch(self, updated: Resource) -> None:
        """The resource as a patch leaves it passes the recipe's rule."""
        self.kind.validate(updated)

    def create_missing(self, request: VertexRequest) -> Resource:
        collection, resource_id = request.path.rsplit("/", 1)
        body = self.parsed(request.body)
        validate_resource_id(resource_id, "name", self.kind.id_pattern)
        self.kind.validate(body)
        self.require_parent(collection)
        return self.view(self.insert(request.path, body))

    def delete(self, request: VertexRequest) -> Resource:
        self.check_delete(self.store.get(request.path, kind=self.kind.kind))
        for child in self.store_children(request.path):
            self.store.delete(child)
        self.store.delete(request.path)
        if not self.kind.delete_operation:
            return {}
        operation = self.backend.operations.start(request.path, "DeleteOperationMetadata")
        return self.backend.operations.finish(operation["name"])

    def check_delete(self, resource: Resource) -> None:
        """Whether the resource may be deleted now (a job: once it has ended)."""

    def store_children(self, name: str) -> list[str]:
        """Names stored under `name` in the recipe's child collections."""
        return [
            child["name"]
            for collection in self.kind.children
            for child in self.store.list(collection)
            if child["name"].startswith(f"{name}/")
        ]

    def view(self, resource: Resource) -> Resource:
        """The resource as Vertex answers it (a model renders its version)."""
        return self.public(resource)

    @staticmethod
    def public(resource: Resource) -> Resource:
        return {key: value for key, value in resource.items() if not key.startswith("_")}
