"""The datasets.get/insert answer: the fields BigQuery fills in itself when a dataset is made
(REST reference `Dataset`, and a recorded real answer in GoogleCloudPlatform/k8s-config-connector
pkg/test/resourcefixture/testdata/basic/bigquery/v1beta1/bigquerydataset/basicbigquerydataset/
_http.log): default `access` entries, `type`, `selfLink`, `maxTimeTravelHours`, `location`."""

from __future__ import annotations

from typing import Any

from vertexkit.local.bigquery.responses import LOCATION

# The reference's `access`: "If unspecified at dataset creation time, BigQuery adds default
# dataset access for ... projectReaders READER, projectWriters WRITER, projectOwners OWNER,
# [dataset creator email] OWNER". The order is the recorded answer's. The local cloud has no
# caller identity, so the creator's own OWNER entry (`userByEmail`) is not invented.
DEFAULT_ACCESS = (
    {"role": "WRITER", "specialGroup": "projectWriters"},
    {"role": "OWNER", "specialGroup": "projectOwners"},
    {"role": "READER", "specialGroup": "projectReaders"},
)
DEFAULT_TIME_TRAVEL_HOURS = "168"  # reference: "The default value is 168 hours if this is not set"
API_ROOT = "https://bigquery.googleapis.com/bigquery/v2"
OUTPUT_ONLY = ("datasetReference", "id", "kind", "etag", "selfLink", "type")


def creation_defaults(body: dict[str, Any]) -> dict[str, Any]:
    """What is stored for a new dataset: the caller's fields plus BigQuery's defaults."""
    stored = {k: v for k, v in body.items() if k not in OUTPUT_ONLY}
    stored.setdefault("access", [dict(entry) for entry in DEFAULT_ACCESS])
    stored.setdefault("maxTimeTravelHours", DEFAULT_TIME_TRAVEL_HOURS)
    stored["location"] = body.get("location") or LOCATION
    return stored


def dataset_location(body: dict[str, Any]) -> str:
    return str(body.get("location") or LOCATION)


def dataset_resource(project: str, dataset: str, body: dict[str, Any]) -> dict[str, Any]:
    """The full `Dataset` as datasets.get answers it."""
    stored = {k: v for k, v in body.items() if k not in OUTPUT_ONLY}
    resource: dict[str, Any] = {
        "kind": "bigquery#dataset",
        "id": f"{project}:{dataset}",
        "selfLink": f"{API_ROOT}/projects/{project}/datasets/{dataset}",
        "datasetReference": {"projectId": project, "datasetId": dataset},
        "type": "DEFAULT",
        "maxTimeTravelHours": DEFAULT_TIME_TRAVEL_HOURS,
        **stored,
        "location": dataset_location(body),
        "etag": str(body.get("lastModifiedTime", "")),
    }
    return resource


def list_entry(project: str, dataset: str, body: dict[str, Any]) -> dict[str, Any]:
    """One `datasets[]` item of datasets.list (reference `DatasetList`)."""
    entry: dict[str, Any] = {
        "kind": "bigquery#dataset",
        "id": f"{project}:{dataset}",
        "datasetReference": {"projectId": project, "datasetId": dataset},
        "location": dataset_location(body),
    }
    for key in ("labels", "friendlyName"):
        if body.get(key):
            entry[key] = body[key]
    return entry
