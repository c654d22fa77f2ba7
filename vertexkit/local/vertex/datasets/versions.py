"""datasets.datasetVersions: create, get, list, patch, delete, restore.

A version is a snapshot of the dataset's `metadata` (for a tabular dataset, its
`inputConfig`: the BigQuery table or the CSV URIs it reads), taken at create; restore writes
that metadata back onto the dataset and answers the version. The body is parsed with
`aiplatform_v1.DatasetVersion`; its output-only fields (`metadata` among them, per the
reference) are dropped, `displayName` is kept. `bigQueryDatasetName` stays unset: the local
cloud copies no data for a version, it records what the dataset read. Create, delete and
restore answer operations done at once.
"""

from __future__ import annotations

import copy
from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.recipe import Recipe, StandardMethods
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource, now_rfc3339
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.requests import validate_list_query

COLLECTION = "datasetVersions"
KIND = "DatasetVersion"
OUTPUT_ONLY = ("name", "createTime", "updateTime", "bigQueryDatasetName", "metadata",
               "modelReference", "satisfiesPzs", "satisfiesPzi")  # fmt: skip
MAX_DISPLAY_NAME = 128


def validate_version(body: Resource) -> None:
    if len(body.get("displayName", "")) > MAX_DISPLAY_NAME:
        raise bad_request("displayName: at most 128 characters.")


VERSIONS = Recipe(
    COLLECTION, KIND, aiplatform_v1.DatasetVersion, None, None, COLLECTION, validate_version,
    "CreateDatasetVersionOperationMetadata", methods=("create", "list", "get", "patch", "delete"),
    output_only=OUTPUT_ONLY, filterable=False, parent_kind="Dataset",
    updatable={"display_name": "displayName", "displayName": "displayName"},
)  # fmt: skip


class DatasetVersions(StandardMethods):
    """A version is the dataset's metadata when it was taken; restore writes it back."""

    def __init__(self, backend: VertexBackend) -> None:
        super().__init__(backend, VERSIONS)

    def build(self, name: str, body: Resource) -> Resource:
        dataset = self.store.get(name.split(f"/{COLLECTION}/")[0], kind="Dataset")
        return {**super().build(name, body), "metadata": copy.deepcopy(dataset.get("metadata", {}))}

    def lookup(self, request: VertexRequest) -> Resource:
        reject_unread(request.query, ("readMask",))
        return super().lookup(request)

    def items(self, request: VertexRequest) -> list[Resource]:
        validate_list(request.query)
        dataset = self.require_parent(request.path) or {}
        return self.store.list(COLLECTION, dataset["name"])

    def restore(self, request: VertexRequest) -> Resource:
        version = self.store.get(request.path.rsplit(":", 1)[0], kind=KIND)
        dataset_name = version["name"].split(f"/{COLLECTION}/")[0]
        now = now_rfc3339()

        def restored(dataset: Resource) -> None:
            dataset["metadata"] = copy.deepcopy(version["metadata"])
            dataset["updateTime"] = dataset["etag"] = now

        self.store.mutate(dataset_name, restored, "Dataset")
        # The operation's response is the DatasetVersion (the RPC's operation_info), not the
        # dataset.
        return self.backend.operations.run_now(
            version["name"], "RestoreDatasetVersionOperationMetadata", KIND, version
        )


def reject_unread(query: dict[str, Any], fields: tuple[str, ...]) -> None:
    """Query parameters the local cloud does not read are refused rather than ignored."""
    for field in fields:
        if query.get(field):
            raise bad_request(f"{field}: not supported by the local cloud for this request.")


def validate_list(query: dict[str, Any]) -> None:
    reject_unread(query, ("filter", "orderBy", "readMask"))
    try:
        validate_list_query(query)
    except ValueError as exc:
        raise bad_request(str(exc)) from exc
