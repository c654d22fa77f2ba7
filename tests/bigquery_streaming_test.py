"""tabledata.insertAll through the real client (`insert_rows_json`): values by type, per-row
errors as BigQuery reports them, all-or-nothing without skipInvalidRows, insertId de-duplication,
and requests refused before anything is written."""

from __future__ import annotations

import datetime
import re
import uuid

import pytest
from google.api_core import exceptions
from google.cloud import bigquery

from vertexkit.local import LocalCloud

SCHEMA = (
    "id INT64 NOT NULL, name STRING, score FLOAT64, ok BOOL, tags ARRAY<INT64>, "
    "p STRUCT<x FLOAT64, y STRING>, at TIMESTAMP, day DATE, raw BYTES, price NUMERIC"
)


@pytest.fixture(scope="module")
def client(local_cloud: LocalCloud) -> bigquery.Client:
    return local_cloud.context().bigquery_client()


@pytest.fixture
def table(client: bigquery.Client) -> str:
    dataset = "streaming_ds"
    client.create_dataset(dataset, exists_ok=True)
    name = f"{dataset}.t_{uuid.uuid4().hex[:8]}"
    client.query_and_wait(f"CREATE TABLE {name} ({SCHEMA})")
    return name


def count(client: bigquery.Client, table: str) -> int:
    return next(iter(client.query_and_wait(f"SELECT COUNT(*) FROM {table}")))[0]


def test_values_of_every_type_are_written(client: bigquery.Client, table: str) -> None:
    row = {
        "id": "7",
        "name": "a",
        "score": 1.5,
        "ok": "true",
        "tags": [1, "2"],
        "p": {"x": 2, "y": "q"},
        "at": "2024-01-02 03:04:05.5 UTC",
        "day": "2024-01-02",
        "raw": "YWI=",
        "price": "2.50",
    }
    assert client.insert_rows_json(table, [row, {"id": 8, "at": 1700000000}]) == []
    got = [dict(r) for r in client.query_and_wait(f"SELECT * FROM {table} ORDER BY id")]
    assert got[0]["id"] == 7 and got[0]["tags"] == [1, 2] and got[0]["p"] == {"x": 2.0, "y": "q"}
    assert got[0]["at"] == datetime.datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=datetime.UTC)
    assert got[0]["raw"] == b"ab" and str(got[0]["price"]) == "2.500000000"
    assert got[1]["tags"] == [] and got[1]["at"].year == 2023


BAD_ROWS = {
    "bad_integer": ({"id": "x"}, "id", "Cannot convert value to integer (bad value): x"),
    "fraction_integer": ({"id": 1.5}, "id", "Cannot convert value to integer"),
    "missing_required": ({"name": "a"}, "id", "Missing required field: id."),
    "unknown_field": ({"id": 1, "zzz": 1}, "zzz", "no such field: zzz."),
    "unknown_nested_field": ({"id": 1, "p": {"z": 1}}, "p.z", "no such field: p.z."),
    "array_for_scalar": ({"id": 1, "name": ["a"]}, "name", "Array specified for non-repeated"),
    "scalar_for_array": ({"id": 1, "tags": 1}, "tags", "Array specified for non-repeated"),
    "bad_bool": ({"id": 1, "ok": "maybe"}, "ok", "Cannot convert value to boolean"),
    "bad_date": ({"id": 1, "day": "2024-13-01"}, "day", "Cannot convert value to date"),
    "bad_bytes": ({"id": 1, "raw": "%%%"}, "raw", "Cannot convert value to bytes"),
    "bad_timestamp": ({"id": 1, "at": "yesterday"}, "at", "Cannot convert value to timestamp"),
}


@pytest.mark.parametrize(("row", "location", "message"), BAD_ROWS.values(), ids=BAD_ROWS.keys())
def test_a_bad_row_stops_the_request(
    client: bigquery.Client, table: str, row: dict, location: str, message: str
) -> None:
    errors = client.insert_rows_json(table, [{"id": 1}, row])
    assert errors[0] == {
        "index": 0,
        "errors": [{"reason": "stopped", "location": "", "debugInfo": "", "message": ""}],
    }
    [bad] = errors[1]["errors"]
    assert errors[1]["index"] == 1 and bad["reason"] == "invalid"
    assert bad["location"] == location and message in bad["message"]
    assert count(client, table) == 0  # nothing written, not even the good row


def test_skip_invalid_rows_writes_the_good_ones(client: bigquery.Client, table: str) -> None:
    errors = client.insert_rows_json(
        table, [{"id": "x"}, {"id": 2}, {"name": "no id"}], skip_invalid_rows=True
    )
    assert [e["index"] for e in errors] == [0, 2]
    assert count(client, table) == 1


def test_ignore_unknown_values(client: bigquery.Client, table: str) -> None:
    assert client.insert_rows_json(table, [{"id": 1, "zzz": 1}], ignore_unknown_values=True) == []
    assert count(client, table) == 1


def test_insert_ids_are_deduplicated(client: bigquery.Client, table: str) -> None:
    assert client.insert_rows_json(table, [{"id": 1}, {"id": 1}], row_ids=["a", "a"]) == []
    assert client.insert_rows_json(table, [{"id": 1}], row_ids=["a"]) == []
    assert client.insert_rows_json(table, [{"id": 2}], row_ids=["b"]) == []
    assert count(client, table) == 2


def test_a_failed_request_does_not_burn_its_insert_ids(client: bigquery.Client, table: str) -> None:
    assert client.insert_rows_json(table, [{"id": 1}, {"id": "x"}], row_ids=["c", "d"])
    assert client.insert_rows_json(table, [{"id": 1}], row_ids=["c"]) == []
    assert count(client, table) == 1


REFUSED = {
    "missing_table": ("streaming_ds.nope", [{"id": 1}], exceptions.NotFound, "Not found: Table"),
    "read_only_public_data": (
        "bigquery-public-data.ml_datasets.penguins",
        [{"species": "x"}],
        exceptions.Forbidden,
        "read-only",
    ),
}


@pytest.mark.parametrize(
    ("table_id", "rows", "error", "message"), REFUSED.values(), ids=REFUSED.keys()
)
def test_refused_targets(
    client: bigquery.Client, table_id: str, rows: list, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        client.insert_rows_json(table_id, rows)


BAD_BODIES = {
    "no_rows": ({"rows": []}, "rows must be a non-empty list"),
    "row_without_json": ({"rows": [{"insertId": "a"}]}, "rows[0].json must be a JSON object"),
    "numeric_insert_id": ({"rows": [{"json": {"id": 1}, "insertId": 5}]}, "rows[0].insertId"),
    "unknown_request_field": ({"rows": [{"json": {"id": 1}}], "bogus": 1}, "unknown field 'bogus'"),
    "template_suffix": (
        {"rows": [{"json": {"id": 1}}], "templateSuffix": "_x"},
        "not supported by the local BigQuery: insertAll templateSuffix",
    ),
}


@pytest.mark.parametrize(("body", "message"), BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_bad_request_bodies_write_nothing(
    client: bigquery.Client, table: str, body: dict, message: str
) -> None:
    dataset, name = table.split(".")
    path = f"/projects/local-project/datasets/{dataset}/tables/{name}/insertAll"
    with pytest.raises(exceptions.BadRequest, match=re.escape(message)):
        client._connection.api_request(method="POST", path=path, data=body)
    assert count(client, table) == 0
