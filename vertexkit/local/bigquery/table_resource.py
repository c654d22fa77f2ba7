"""The tables.get answer (REST reference `Table`): `location` inherited from the dataset
("This value is inherited from the dataset"), the sizes as int64 strings, and the options given
when the table was made (partitioning, clustering, encryption, constraints) answered back."""

from __future__ import annotations

from typing import Any

from vertexkit.local.bigquery import billing
from vertexkit.local.bigquery.dataset_resource import dataset_location
from vertexkit.local.bigquery.partitioning import TABLE_OPTIONS
from vertexkit.local.bigquery.sql import TableName

EXTERNAL = "externalDataConfiguration"
STORED = ("description", "labels", "friendlyName", "expirationTime", "view", EXTERNAL,
          *TABLE_OPTIONS)  # fmt: skip


def table_resource(warehouse: Any, name: TableName) -> dict[str, Any]:
    cur = warehouse.cursor()
    try:
        kind = warehouse.require_table(cur, name)
        extras = warehouse.table_extras(cur, name)
        fields = warehouse.table_schema(cur, name)
        rows = warehouse.count_rows(cur, name) if kind == "TABLE" else 0
        # Logical bytes: the sizes BigQuery bills a full scan at (billing.py); a view stores none
        size = billing.estimate(warehouse, cur, [name], None) if kind == "TABLE" else 0
        location = dataset_location(warehouse.dataset_body(cur, name.project, name.dataset))
    finally:
        cur.close()
    resource: dict[str, Any] = {
        "kind": "bigquery#table",
        "id": name.bigquery_id,
        "tableReference": {
            "projectId": name.project,
            "datasetId": name.dataset,
            "tableId": name.table,
        },
        "schema": {"fields": fields},
        "type": "EXTERNAL" if EXTERNAL in extras else kind,
        "location": location,
        "creationTime": extras.get("creationTime", "0"),
        "lastModifiedTime": extras.get("lastModifiedTime", "0"),
        "etag": extras.get("lastModifiedTime", "0"),
        # an external table's data is in Cloud Storage: BigQuery counts none of it
        **(_sizes(0, 0) if EXTERNAL in extras else _sizes(rows, size)),
    }
    for key in STORED:
        if key in extras:
            resource[key] = extras[key]
    return resource


def _sizes(rows: int, size: int) -> dict[str, str]:
    """Every byte is "active" (under 90 days old: the local tables are not aged)."""
    return {
        "numRows": str(rows),
        "numBytes": str(size),
        "numLongTermBytes": "0",
        "numTotalLogicalBytes": str(size),
        "numActiveLogicalBytes": str(size),
        "numLongTermLogicalBytes": "0",
    }
