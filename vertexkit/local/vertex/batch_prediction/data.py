"""Where a batch prediction job reads its rows and writes its results.

Cloud Storage is read and written through the local Storage service's Python interface (the
same files its REST API serves); BigQuery through the real `google-cloud-bigquery` client
pointed at the local cloud, so tables are made exactly as a user's load job makes them.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vertexkit.local.vertex.batch_prediction.instances import csv_rows, jsonl_rows

if TYPE_CHECKING:
    from google.cloud import bigquery

    from vertexkit.local.storage.routes import StorageService


class InputError(ValueError):
    """The job's input or output cannot be used; the message names the field."""


# -- Cloud Storage ---------------------------------------------------------------------------
def split_gs(uri: str) -> tuple[str, str]:
    bucket, _, name = uri.removeprefix("gs://").partition("/")
    return bucket, name


def glob_pattern(name: str) -> re.Pattern[str]:
    """GCS wildcards: `*` and `?` stay within one folder, `**` crosses folders."""
    parts = re.split(r"(\*\*|\*|\?)", name)
    regex = {"**": ".*", "*": "[^/]*", "?": "[^/]"}
    return re.compile("".join(regex.get(part, re.escape(part)) for part in parts) + "$")


def matching_objects(storage: StorageService, uri: str, field: str) -> list[str]:
    bucket, name = split_gs(uri)
    if not any(char in name for char in "*?"):
        names = [name] if storage.stat_object(bucket, name) is not None else []
    else:
        prefix = re.split(r"[*?]", name, maxsplit=1)[0]
        pattern = glob_pattern(name)
        names = [found for found in storage.list_objects(bucket, prefix) if pattern.match(found)]
    if not names:
        raise InputError(f"{field}: no object matches {uri}")
    return sorted(names)


def gcs_rows(storage: StorageService, uris: list[str], input_format: str) -> list[Any]:
    parse = jsonl_rows if input_format == "jsonl" else csv_rows
    rows: list[Any] = []
    for index, uri in enumerate(uris):
        bucket, _ = split_gs(uri)
        for name in matching_objects(storage, uri, f"inputConfig.gcsSource.uris[{index}]"):
            rows.extend(parse(storage.read_object(bucket, name).decode("utf-8")))
    return rows


def write_jsonl(storage: StorageService, uri: str, lines: Iterable[dict[str, Any]]) -> None:
    bucket, name = split_gs(uri)
    text = "".join(json.dumps(line) + "\n" for line in lines)
    storage.write_object(bucket, name, text.encode(), "application/jsonl")


# -- BigQuery --------------------------------------------------------------------------------
def jsonable(value: Any) -> Any:
    """A BigQuery cell as the JSON value an instance holds."""
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [jsonable(item) for item in value]
    return value


def bq_rows(client: bigquery.Client, uri: str) -> list[dict[str, Any]]:
    from google.api_core import exceptions

    table_id = uri.removeprefix("bq://")
    try:
        table = client.get_table(table_id)
        rows = client.list_rows(table)
        return [{key: jsonable(value) for key, value in row.items()} for row in rows]
    except exceptions.NotFound as exc:
        raise InputError(f"inputConfig.bigquerySource.inputUri: {uri} not found") from exc


@dataclass(frozen=True)
class BqTarget:
    project: str
    dataset: str
    predictions: str
    errors: str
    new_dataset: bool


def bq_target(uri: str, model_display_name: str, stamp: str) -> BqTarget:
    """bq://project: a new dataset `prediction_<model>_<time>` with tables `predictions` and
    `errors`; bq://project.dataset: tables `predictions_<time>` and `errors_<time>` in it;
    bq://project.dataset.table: predictions to that (new) table, errors to `errors_<time>`."""
    project, _, dataset = uri.removeprefix("bq://").partition(".")
    dataset, _, table = dataset.partition(".")
    if table:
        return BqTarget(project, dataset, table, f"errors_{stamp}", False)
    if not dataset:
        name = re.sub(r"[^A-Za-z0-9_]", "_", model_display_name)
        return BqTarget(project, f"prediction_{name}_{stamp}", "predictions", "errors", True)
    return BqTarget(project, dataset, f"predictions_{stamp}", f"errors_{stamp}", False)


def bq_type(values: list[Any]) -> str:
    present = [value for value in values if value is not None]
    if present and all(isinstance(value, bool) for value in present):
        return "BOOLEAN"
    if present and all(isinstance(value, int) and not isinstance(value, bool) for value in present):
        return "INTEGER"
    if present and all(
        isinstance(value, int | float) and not isinstance(value, bool) for value in present
    ):
        return "FLOAT"
    return "STRING"


def cell(value: Any, kind: str) -> Any:
    if kind == "STRING" and value is not None and not isinstance(value, str):
        return json.dumps(value)  # lists, objects and mixed types as their JSON text
    return value


def schema_of(rows: list[dict[str, Any]], columns: list[str]) -> dict[str, str]:
    return {column: bq_type([row.get(column) for row in rows]) for column in columns}


def column_order(rows: list[dict[str, Any]], last: str) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(key for key in row if key != last))
    return [*seen, last]


def write_bq_table(
    client: bigquery.Client, table_id: str, rows: list[dict[str, Any]], last: str
) -> None:
    """A new table whose columns are the rows' keys (`last` last), typed from the values."""
    from google.cloud import bigquery

    columns = column_order(rows, last)
    types = schema_of(rows, columns)
    if last == "errors":
        types["errors"] = "RECORD"
    schema = [bigquery.SchemaField(name, kind, mode="NULLABLE",
                                   fields=error_fields() if kind == "RECORD" else ())
              for name, kind in types.items()]  # fmt: skip
    client.create_table(bigquery.Table(table_id, schema=schema))
    if not rows:
        return
    cells = [{name: cell(row.get(name), kind) for name, kind in types.items()} for row in rows]
    config = bigquery.LoadJobConfig(schema=schema, write_disposition="WRITE_APPEND")
    client.load_table_from_json(cells, table_id, job_config=config).result()


def error_fields() -> tuple[Any, ...]:
    from google.cloud import bigquery

    return (bigquery.SchemaField("code", "INTEGER"), bigquery.SchemaField("message", "STRING"))


def ensure_dataset(client: bigquery.Client, target: BqTarget) -> None:
    from google.api_core import exceptions

    dataset_id = f"{target.project}.{target.dataset}"
    if target.new_dataset:
        client.create_dataset(dataset_id)
        return
    try:
        client.get_dataset(dataset_id)
    except exceptions.NotFound as exc:
        raise InputError(
            f"outputConfig.bigqueryDestination.outputUri: dataset {dataset_id} not found"
        ) from exc
