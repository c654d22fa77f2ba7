"""A Vertex resource's recipe and the standard methods it declares, written once.

A `Recipe` says what a resource is (its `aiplatform_v1` message, store collection, ID
parameter and pattern, list key, the `vertexkit.specs` rule its body must pass, whether create
answers a long-running operation, what is deleted with it); `StandardMethods` answers create
(with a client-chosen ID), get, list (filter, pageSize/pageToken), patch (updateMask,
allowMissing) and delete for it, and `register` puts them on the router at the collection's
URL template, taking an area's own handler where it has one. Every create and patch is parsed
with the message type and checked before anything is stored. Metadata contexts, artifacts and
executions, TensorBoard's resources, persistent resources and deployment resource pools are
recipes; their areas add only their custom verbs and the methods whose behaviour differs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from vertexkit.local.errors import conflict
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core import fields
from vertexkit.local.vertex.core.filters import compile_filter
from vertexkit.local.vertex.router import Handler, VertexRequest, VertexRouter
from vertexkit.local.vertex.store import Resource, now_rfc3339, page
from vertexkit.specs.metadata import validate_resource_id
from vertexkit.specs.requests import validate_list_query

OUTPUT_ONLY = ("name", "createTime", "updateTime", "etag", "parentContexts", "runCount",
               "blobStoragePathPrefix")  # fmt: skip


STANDARD_METHODS = ("create", "list", "get", "patch", "delete")


@dataclass(frozen=True)
class Recipe:
    collection: str  # the store's collection, e.g. "metadataContexts"
    kind: str  # the resource's type name, e.g. "Context"
    message: type  # its aiplatform_v1 type
    id_param: str  # the create request's ID parameter, e.g. "contextId"
    id_pattern: re.Pattern[str]
    list_key: str  # the list response's field, e.g. "contexts"
    validate: Callable[[Resource], None]
    create_operation: str | None = None  # the create's operation metadata type, if it is an LRO
    children: tuple[str, ...] = ()  # store collections deleted with it (a tensorboard's runs)
    methods: tuple[str, ...] = STANDARD_METHODS  # which standard methods Google gives it
    # Fields Vertex sets, dropped from a create or patch body (a persistent resource's state).
    output_only: tuple[str, ...] = OUTPUT_ONLY
    # Whether list takes `filter`: some v1 lists (persistent resources, pools) have only paging.
    filterable: bool = True
    # The create operation's notes on fields with no local effect (core/fields.py).
    notes: Callable[[Resource], list[str]] | None = None


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
        body = self.parsed(request.body)
        resource_id = request.query.get(self.kind.id_param) or None
        validate_resource_id(resource_id, self.kind.id_param, self.kind.id_pattern)
        self.kind.validate(body)
        self.require_parent(request.path)
        name = f"{request.path}/{resource_id or self.store.new_id()}"
        if self.store.find(name) is not None:
            raise conflict(f'{self.kind.kind} "{name}" already exists.')
        resource = self.insert(name, body)
        if self.kind.create_operation:
            operation = self.backend.operations.run_now(
                name, self.kind.create_operation, self.kind.kind, self.public(resource)
            )
            lines = self.kind.notes(body) if self.kind.notes else []
            return fields.noted_operation(self.store, operation, lines)
        return self.public(resource)

    def parsed(self, body: Resource) -> Resource:
        parsed = protos.to_dict(protos.parse(self.kind.message, body))
        for output_only in self.kind.output_only:
            parsed.pop(output_only, None)
        return parsed

    def require_parent(self, collection_path: str) -> None:
        """The resource a collection lives in (a store, a tensorboard, an experiment) exists."""
        parent = collection_path.rsplit("/", 1)[0]
        if parent.count("/") > 3:  # under projects/P/locations/L/...
            self.store.get(parent, kind="Parent resource")

    def insert(self, name: str, body: Resource) -> Resource:
        now = now_rfc3339()
        resource = {**body, "name": name, "createTime": now, "updateTime": now, "etag": now}
        return self.store.insert(self.kind.collection, name, resource)

    # -- the other verbs --------------------------------------------------------------------------
    def get(self, request: VertexRequest) -> Resource:
        return self.public(self.store.get(request.path, kind=self.kind.kind))

    def list(self, request: VertexRequest) -> Resource:
        validate_list_query(request.query)
        keep = compile_filter(request.query.get("filter") if self.kind.filterable else None)
        # Stored resources are keyed by the resource they live in, not by the collection path.
        items = self.store.list(self.kind.collection, request.path.rsplit("/", 1)[0])
        return page([self.public(r) for r in items if keep(r)], request.query, self.kind.list_key)

    def patch(self, request: VertexRequest) -> Resource:
        if self.store.find(request.path) is None and request.query.get("allowMissing") == "true":
            return self.create_missing(request)
        current = self.store.get(request.path, kind=self.kind.kind)
        fields.check_etag(current, request.body, self.kind.kind)
        patch = self.parsed(request.body)
        mask = [snake_to_camel(p) for p in request.query.get("updateMask", "").split(",") if p]
        updated = dict(current)
        for field in mask or list(patch):
            if field in patch:
                updated[field] = patch[field]
            else:
                updated.pop(field, None)
        self.kind.validate(updated)
        updated["updateTime"] = updated["etag"] = now_rfc3339()
        return self.public(self.store.put(request.path, updated))

    def create_missing(self, request: VertexRequest) -> Resource:
        collection, resource_id = request.path.rsplit("/", 1)
        body = self.parsed(request.body)
        validate_resource_id(resource_id, "name", self.kind.id_pattern)
        self.kind.validate(body)
        self.require_parent(collection)
        return self.public(self.insert(request.path, body))

    def delete(self, request: VertexRequest) -> Resource:
        self.store.get(request.path, kind=self.kind.kind)
        for child in self.store_children(request.path):
            self.store.delete(child)
        self.store.delete(request.path)
        operation = self.backend.operations.start(request.path, "DeleteOperationMetadata")
        return self.backend.operations.finish(operation["name"])

    def store_children(self, name: str) -> list[str]:
        """Names stored under `name` in the recipe's child collections."""
        return [
            child["name"]
            for collection in self.kind.children
            for child in self.store.list(collection)
            if child["name"].startswith(f"{name}/")
        ]

    @staticmethod
    def public(resource: Resource) -> Resource:
        return {key: value for key, value in resource.items() if not key.startswith("_")}
