"""metadataStores.metadataSchemas: create, get, list.

A create is parsed with `aiplatform_v1.MetadataSchema` and checked before it is stored:
`schema` is required and must be YAML whose `title` names the schema (an OpenAPI 3.0.2 Schema
Object, the reference); `schemaVersion`, when set, must match the reference's `^[0-9]+.+.+$`;
the pair (title, schemaVersion) is unique in the store (409 otherwise, as the reference says).
`metadataSchemaId` is 4-128 characters of `[a-z0-9-]`, a new ID when absent. The list reads
`filter` with `filters.compile_filter` (a filter it cannot read is a 400).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from vertexkit.local.errors import bad_request, conflict
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.filters import compile_filter
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource, now_rfc3339, page
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.metadata import METADATA_ID, validate_resource_id
from vertexkit.specs.requests import validate_list_query

COLLECTION = "metadataSchemas"
KIND = "MetadataSchema"
VERSION = re.compile(r"^[0-9]+.+.+$")  # the reference's pattern, dots unescaped as written


class MetadataSchemas:
    def __init__(self, backend: VertexBackend) -> None:
        self.store = backend.store

    def create(self, request: VertexRequest) -> Resource:
        body = protos.to_dict(protos.parse(aiplatform_v1.MetadataSchema, request.body))
        body.pop("name", None)
        body.pop("createTime", None)
        schema_id = request.query.get("metadataSchemaId") or None
        validate_resource_id(schema_id, "metadataSchemaId", METADATA_ID)
        title = schema_title(body.get("schema"))
        check_version(body.get("schemaVersion", ""))
        store_name = request.path.rsplit("/", 1)[0]
        self.store.get(store_name, kind="MetadataStore")
        name = f"{request.path}/{schema_id or self.store.new_id()}"
        self.require_unique(store_name, name, title, body.get("schemaVersion", ""))
        schema = {**body, "name": name, "createTime": now_rfc3339()}
        return public(self.store.insert(COLLECTION, name, {**schema, "_title": title}))

    def require_unique(self, store_name: str, name: str, title: str, version: str) -> None:
        if self.store.find(name) is not None:
            raise conflict(f'MetadataSchema "{name}" already exists.')
        for other in self.store.list(COLLECTION, store_name):
            if (other["_title"], other.get("schemaVersion", "")) == (title, version):
                raise conflict(
                    f"MetadataSchema {other['name']} already has title {title!r} and "
                    f"schemaVersion {version!r}: the pair is unique in a store."
                )

    def get(self, request: VertexRequest) -> Resource:
        return public(self.store.get(request.path, kind=KIND))

    def list(self, request: VertexRequest) -> Resource:
        validate_list_query(request.query)
        keep = compile_filter(request.query.get("filter"))
        schemas = self.store.list(COLLECTION, request.path.rsplit("/", 1)[0])
        return page([public(s) for s in schemas if keep(s)], request.query, "metadataSchemas")


def schema_title(text: Any) -> str:
    if not text:
        raise bad_request("schema: required; the YAML of an OpenAPI 3.0.2 Schema Object.")
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise bad_request(f"schema: not valid YAML ({exc}).") from exc
    if not isinstance(parsed, dict) or not isinstance(parsed.get("title"), str):
        raise bad_request("schema: must be a YAML mapping with a `title`, e.g. title: my.Type")
    return parsed["title"]


def check_version(version: str) -> None:
    if version and not VERSION.match(version):
        raise bad_request(f"schemaVersion: {version!r} must match ^[0-9]+.+.+$, e.g. 1.0.0.")


def public(resource: Resource) -> Resource:
    return {key: value for key, value in resource.items() if not key.startswith("_")}
