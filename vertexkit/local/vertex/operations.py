"""Long-running operations, as `google.longrunning.Operation` JSON.

The SDK polls an operation by its name at `/v1/{name}` and `/ui/{name}`. An operation finishes
with a `response` (an Any with its `@type`) or an `error` (a google.rpc.Status).
"""

from __future__ import annotations

import functools
from typing import Any

from vertexkit.local.discovery import google_document
from vertexkit.local.vertex.store import Resource, ResourceStore, now_rfc3339

TYPE_PREFIX = "type.googleapis.com/google.cloud.aiplatform.v1."
COLLECTION = "operations"


class Operations:
    def __init__(self, store: ResourceStore) -> None:
        self._store = store

    def start(self, parent: str, metadata_type: str, response_type: str | None = None) -> Resource:
        """Creates a running operation for work on `parent` (a resource or a location), named
        where Vertex names it (`operation_parent`)."""
        name = f"{operation_parent(parent, metadata_type)}/operations/{self._store.new_id()}"
        now = now_rfc3339()
        operation: Resource = {
            "name": name,
            "metadata": {
                "@type": TYPE_PREFIX + metadata_type,
                "genericMetadata": {"createTime": now, "updateTime": now},
            },
            "done": False,
        }
        if response_type:
            operation["_responseType"] = response_type  # private: stripped before answering
        return self._store.insert(COLLECTION, name, operation)

    def finish(self, name: str, response: dict[str, Any] | None = None) -> Resource:
        def change(operation: Resource) -> None:
            response_type = operation.pop("_responseType", None)
            operation["done"] = True
            operation["metadata"]["genericMetadata"]["updateTime"] = now_rfc3339()
            if response_type:
                operation["response"] = {"@type": TYPE_PREFIX + response_type, **(response or {})}
            else:
                operation["response"] = {"@type": "type.googleapis.com/google.protobuf.Empty"}

        return self.public(self._store.mutate(name, change, "Operation"))

    def fail(self, name: str, code: int, message: str) -> Resource:
        """Ends an operation with a google.rpc.Status (code is the gRPC code, 3 = invalid)."""

        def change(operation: Resource) -> None:
            operation.pop("_responseType", None)
            operation["done"] = True
            operation["error"] = {"code": code, "message": message}

        return self.public(self._store.mutate(name, change, "Operation"))

    def get(self, name: str) -> Resource:
        return self.public(self._store.get(name, "Operation"))

    def run_now(
        self, parent: str, metadata_type: str, response_type: str, response: dict[str, Any]
    ) -> Resource:
        """An operation that is already done: for work that completes within the request."""
        operation = self.start(parent, metadata_type, response_type)
        return self.finish(operation["name"], response)

    @staticmethod
    def public(operation: Resource) -> Resource:
        return {k: v for k, v in operation.items() if not k.startswith("_")}


# Recorded Vertex traffic (GoogleCloudPlatform/k8s-config-connector, testdata/basic/vertexai):
# a TensorBoard's update and delete operations are named under the location
# (`vertexaitensorboard/_http.log`), a metadata store's delete under the store itself
# (`metadatastore/metadatastorebasic/_http.log`); each create under the new resource.
OPERATIONS_AT_LOCATION = {("tensorboards", "DeleteOperationMetadata")}


def operation_parent(parent: str, metadata_type: str) -> str:
    """Where Vertex names an operation: as recorded (above), else under the nearest resource
    that has an `operations` collection in aiplatform.v1 (a dataset version's under its
    dataset), which is also what the clients' HTTP bindings accept when they poll it."""
    parts = parent.strip("/").split("/")
    location = "/".join(parts[:4])
    family = parts[4] if len(parts) > 4 else ""
    if metadata_type.startswith("Update") or (family, metadata_type) in OPERATIONS_AT_LOCATION:
        return location
    rest = parts[4 : len(parts) - (len(parts) - 4) % 2]  # a resource, not a collection
    while rest and tuple(rest[0::2]) not in operation_holders():
        rest = rest[:-2]
    return "/".join([location, *rest])


@functools.cache
def operation_holders() -> frozenset[tuple[str, ...]]:
    """The collections under a location whose resources hold operations (`customJobs`,
    `datasets/dataItems`, ...), from the aiplatform.v1 discovery document."""
    resources = google_document("aiplatform", "v1")["resources"]["projects"]["resources"]
    return frozenset(_holders(resources["locations"]["resources"], ()))


def _holders(resources: dict[str, Any], path: tuple[str, ...]) -> list[tuple[str, ...]]:
    found = []
    for name, resource in resources.items():
        children = resource.get("resources", {})
        if "operations" in children and name != "operations":
            found.append((*path, name))
        found += _holders({k: v for k, v in children.items() if k != "operations"}, (*path, name))
    return found
