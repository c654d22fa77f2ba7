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
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.fields import check_etag
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource, now_rfc3339, page
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.requests import validate_list_query

COLLECTION = "datasetVersions"
KIND = "DatasetVersion"
OUTPUT_ONLY = ("name", "createTime", "updateTime", "bigQueryDatasetName", "metadata",
               "modelReference", "satisfiesPzs", "satisfiesPzi")  # fmt: skip
MAX_DISPLAY_NAME = 128


class DatasetVersions:
    def __init__(self, backend: VertexBackend) -> None:
        self.backend = backend
        self.store = backend.store

    def create(self, request: VertexRequest) -> Resource:
        body = self.parsed(request.body)
        dataset = self.store.get(request.path.rsplit("/", 1)[0], kind="Dataset")
        now = now_rfc3339()
        name = f"{dataset['name']}/{COLLECTION}/{self.store.new_id()}"
        version = {**body, "name": name, "createTime": now, "updateTime": now, "etag": now,
                   "metadata": copy.deepcopy(dataset.get("metadata", {}))}  # fmt: skip
        self.store.insert(COLLECTION, name, version)
        return self.backend.operations.run_now(
            name, "CreateDatasetVersionOperationMetadata", KIND, version
        )

    def parsed(self, body: Resource) -> Resource:
        parsed = protos.to_dict(protos.parse(aiplatform_v1.DatasetVersion, body))
        for output_only in OUTPUT_ONLY:
            parsed.pop(output_only, None)
        if len(parsed.get("displayName", "")) > MAX_DISPLAY_NAME:
            raise bad_request("displayName: at most 128 characters.")
        return parsed

    def get(self, request: VertexRequest) -> Resource:
        reject_unread(request.query, ("readMask",))
        return self.store.get(request.path, kind=KIND)

    def list(self, request: VertexRequest) -> Resource:
        validate_list(request.query)
        dataset = self.store.get(request.path.rsplit("/", 1)[0], kind="Dataset")
        return page(self.store.list(COLLECTION, dataset["name"]), request.query, COLLECTION)

    def patch(self, request: VertexRequest) -> Resource:
        current = self.store.get(request.path, kind=KIND)
        patch = self.parsed(request.body)
        paths = [p for p in request.query.get("updateMask", "").split(",") if p]
        if not paths or any(p not in ("display_name", "displayName") for p in paths):
            raise bad_request(
                f"updateMask: {request.query.get('updateMask') or 'required'}; the updatable "
                "field is display_name."
            )
        check_etag(current, request.body, KIND)  # after the mask: the request is checked first
        updated = {**current, "displayName": patch.get("displayName", "")}
        updated["updateTime"] = updated["etag"] = now_rfc3339()
        return self.store.put(request.path, updated)

    def delete(self, request: VertexRequest) -> Resource:
        self.store.get(request.path, kind=KIND)
        self.store.delete(request.path)
        operation = self.backend.operations.start(request.path, "DeleteOperationMetadata")
        return self.backend.operations.finish(operation["name"])

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

    def delete_all(self, dataset_name: str) -> None:
        """A dataset's versions go with it."""
        for version in self.store.list(COLLECTION, dataset_name):
            self.store.delete(version["name"])


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
