"""datasets: create, get, list, patch, delete (the SDK's TabularDataset); import and export
(`transfer`), versions (`versions`), data items, annotations and saved queries (`items`).

A create request is parsed with `aiplatform_v1.Dataset`, checked by `vertexkit.specs.datasets`
and its source read (the table or the CSV header) before anything is stored; it answers a
long-running operation, done at once, whose response is the Dataset, as the SDK waits on.
"""

from __future__ import annotations

from functools import partial

from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core import fields
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.core.recipe import Recipe, StandardMethods
from vertexkit.local.vertex.datasets import sources, transfer, versions
from vertexkit.local.vertex.datasets.items import DatasetItems
from vertexkit.local.vertex.datasets.versions import DatasetVersions
from vertexkit.local.vertex.router import VertexRequest, VertexRouter
from vertexkit.local.vertex.store import Resource
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.datasets import validate_dataset
from vertexkit.specs.requests import validate_metadata

LOCATION = "projects/{project}/locations/{location}"
COLLECTION = "datasets"
KIND = "Dataset"
OUTPUT_ONLY = ("name", "createTime", "updateTime", "etag", "dataItemCount", "metadataArtifact")
PATCHABLE = {"display_name": "displayName", "displayName": "displayName", "labels": "labels",
             "description": "description"}  # fmt: skip
DATASETS = Recipe(
    COLLECTION, KIND, aiplatform_v1.Dataset, None, None, COLLECTION, validate_dataset,
    "CreateDatasetOperationMetadata", children=(versions.COLLECTION,), output_only=OUTPUT_ONLY,
    updatable=PATCHABLE, regional=True,
    notes=lambda body: fields.notes(body, fields.DATASET_NOTES, "dataset"),
)  # fmt: skip


class Datasets(StandardMethods):
    """A dataset's source is read (the table or the CSV header) before it is stored; a patch
    changes its metadata only (display name, labels, description)."""

    def __init__(self, backend: VertexBackend) -> None:
        super().__init__(backend, DATASETS)

    def check(self, request: VertexRequest, body: Resource) -> None:
        validate_dataset(body)
        sources.check_readable(self.backend, body)

    def check_patch(self, updated: Resource) -> None:
        validate_metadata(updated, "")


class DatasetsArea(Lifecycle):
    """Datasets, their versions, items and transfers: nothing to start or stop."""


def find_dataset(backend: VertexBackend, location: str, dataset_id: str) -> Resource | None:
    return backend.store.find(f"{location}/{COLLECTION}/{dataset_id}")


def register(context: AreaContext) -> DatasetsArea:
    router, backend = context.router, context.backend
    area = DatasetsArea()
    collection = f"{LOCATION}/{COLLECTION}"
    dataset = f"{collection}/{{dataset}}"
    Datasets(backend).register(router, collection)
    router.route("POST", f"{dataset}:import")(partial(transfer.import_data, backend))
    router.route("POST", f"{dataset}:export")(partial(transfer.export_data, backend))
    dataset_versions = DatasetVersions(backend)
    dataset_versions.register(router, f"{dataset}/{versions.COLLECTION}")
    router.route("GET", f"{dataset}/{versions.COLLECTION}/{{version}}:restore")(
        dataset_versions.restore
    )
    register_items(router, DatasetItems(backend), dataset)
    return area


def register_items(router: VertexRouter, items: DatasetItems, dataset: str) -> None:
    router.route("GET", f"{dataset}/dataItems")(items.list_data_items)
    router.route("GET", f"{dataset}/dataItems/{{item}}/annotations")(items.list_annotations)
    router.route("GET", f"{dataset}/annotationSpecs/{{spec}}")(items.get_annotation_spec)
    router.route("GET", f"{dataset}/savedQueries")(items.list_saved_queries)
    router.route("DELETE", f"{dataset}/savedQueries/{{query}}")(items.delete_saved_query)
    router.route("GET", f"{dataset}:searchDataItems")(items.search_data_items)
