"""datasets: create, get, list, patch, delete (the SDK's TabularDataset); import and export
(`transfer`), versions (`versions`), data items, annotations and saved queries (`items`).

A create request is parsed with `aiplatform_v1.Dataset`, checked by `vertexkit.specs.datasets`
and its source read (the table or the CSV header) before anything is stored; it answers a
long-running operation, done at once, whose response is the Dataset, as the SDK waits on.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core import fields
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.datasets import sources, transfer
from vertexkit.local.vertex.datasets.items import DatasetItems
from vertexkit.local.vertex.datasets.versions import DatasetVersions
from vertexkit.local.vertex.router import VertexRequest, VertexRouter
from vertexkit.local.vertex.store import Resource, apply_update_mask, now_rfc3339, page
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.datasets import validate_dataset
from vertexkit.specs.requests import validate_list_query, validate_metadata, validate_parent

LOCATION = "projects/{project}/locations/{location}"
COLLECTION = "datasets"
KIND = "Dataset"
OUTPUT_ONLY = ("name", "createTime", "updateTime", "etag", "dataItemCount", "metadataArtifact")
PATCHABLE = {"display_name": "displayName", "displayName": "displayName", "labels": "labels",
             "description": "description"}  # fmt: skip




class DatasetsArea(Lifecycle):
    def __init__(self, backend: VertexBackend) -> None:
        self.backend = backend
        self.store = backend.store
        self.versions = DatasetVersions(backend)

    def create(self, request: VertexRequest) -> dict[str, Any]:
        validate_parent(request.params["project"], request.params["location"])
        body = protos.to_dict(protos.parse(aiplatform_v1.Dataset, request.body))
        for output_only in OUTPUT_ONLY:
            body.pop(output_only, None)
        validate_dataset(body)
        sources.check_readable(self.backend, body)
        now = now_rfc3339()
        name = f"{request.parent}/{COLLECTION}/{self.store.new_id()}"
        dataset = {**body, "name": name, "createTime": now, "updateTime": now, "etag": now}
        self.store.insert(COLLECTION, name, dataset)
        operation = self.backend.operations.run_now(
            name, "CreateDatasetOperationMetadata", KIND, dataset
        )
        lines = fields.notes(body, fields.DATASET_NOTES, "dataset")
        return fields.noted_operation(self.store, operation, lines)

    def get(self, request: VertexRequest) -> dict[str, Any]:
        return self.store.get(request.path, kind=KIND)

    def list(self, request: VertexRequest) -> dict[str, Any]:
        validate_list_query(request.query)
        datasets = self.store.list(COLLECTION, request.parent)
        wanted = request.query.get("filter", "")
        if wanted.startswith("display_name="):
            shown = wanted.split("=", 1)[1].strip().strip('"')
            datasets = [d for d in datasets if d.get("displayName") == shown]
        return page(datasets, request.query, COLLECTION)

    def patch(self, request: VertexRequest) -> dict[str, Any]:
        current = self.store.get(request.path, kind=KIND)
        patch = protos.to_dict(protos.parse(aiplatform_v1.Dataset, request.body))
        paths = [p for p in request.query.get("updateMask", "").split(",") if p]
        unknown = [p for p in paths if p not in PATCHABLE]
        if not paths or unknown:
            raise bad_request(
                f"updateMask: {', '.join(unknown) or 'required'}; updatable fields are "
                "display_name, labels, description"
            )
        fields.check_etag(current, request.body, KIND)
        updated = dict(current)
        apply_update_mask(updated, paths, PATCHABLE, patch)
        validate_metadata(updated, "")
        updated["updateTime"] = updated["etag"] = now_rfc3339()
        return self.store.put(request.path, updated)

    def delete(self, request: VertexRequest) -> dict[str, Any]:
        self.store.get(request.path, kind=KIND)
        self.versions.delete_all(request.path)
        self.store.delete(request.path)
        operation = self.backend.operations.start(request.path, "DeleteOperationMetadata")
        return self.backend.operations.finish(operation["name"])


def find_dataset(backend: VertexBackend, location: str, dataset_id: str) -> Resource | None:
    return backend.store.find(f"{location}/{COLLECTION}/{dataset_id}")


def register(context: AreaContext) -> DatasetsArea:
    router, backend = context.router, context.backend
    area = DatasetsArea(backend)
    collection = f"{LOCATION}/{COLLECTION}"
    dataset = f"{collection}/{{dataset}}"
    router.route("POST", collection)(area.create)
    router.route("GET", collection)(area.list)
    router.route("GET", dataset)(area.get)
    router.route("PATCH", dataset)(area.patch)
    router.route("DELETE", dataset)(area.delete)
    router.route("POST", f"{dataset}:import")(partial(transfer.import_data, backend))
    router.route("POST", f"{dataset}:export")(partial(transfer.export_data, backend))
    register_versions(router, area.versions, f"{dataset}/datasetVersions")
    register_items(router, DatasetItems(backend), dataset)
    return area


def register_versions(router: VertexRouter, versions: DatasetVersions, collection: str) -> None:
    version = f"{collection}/{{version}}"
    router.route("POST", collection)(versions.create)
    router.route("GET", collection)(versions.list)
    router.route("GET", version)(versions.get)
    router.route("PATCH", version)(versions.patch)
    router.route("DELETE", version)(versions.delete)
    router.route("GET", f"{version}:restore")(versions.restore)


def register_items(router: VertexRouter, items: DatasetItems, dataset: str) -> None:
    router.route("GET", f"{dataset}/dataItems")(items.list_data_items)
    router.route("GET", f"{dataset}/dataItems/{{item}}/annotations")(items.list_annotations)
    router.route("GET", f"{dataset}/annotationSpecs/{{spec}}")(items.get_annotation_spec)
    router.route("GET", f"{dataset}/savedQueries")(items.list_saved_queries)
    router.route("DELETE", f"{dataset}/savedQueries/{{query}}")(items.delete_saved_query)
    router.route("GET", f"{dataset}:searchDataItems")(items.search_data_items)
