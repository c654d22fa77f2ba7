"""INFORMATION_SCHEMA views and BigQuery's NEWLINE_DELIMITED_JSON export, through the real
clients against the session's local cloud."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from google.api_core import exceptions
from google.cloud import bigquery

from vertexkit.local import LocalCloud

PUBLIC = "`bigquery-public-data`.ml_datasets"


@pytest.fixture(scope="module")
def client(local_cloud: LocalCloud) -> bigquery.Client:
    return local_cloud.context().bigquery_client()


@pytest.fixture(scope="module")
def dataset(client: bigquery.Client) -> str:
    name = f"meta_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    client.query_and_wait(
        f"CREATE TABLE {name}.shapes (id INT64 NOT NULL, tags ARRAY<INT64>, "
        "point STRUCT<x FLOAT64, label STRING>, price NUMERIC, at TIMESTAMP)"
    )
    client.query_and_wait(f"CREATE VIEW {name}.ids AS SELECT id FROM {name}.shapes")
    client.query_and_wait(
        f"INSERT INTO {name}.shapes (id, tags, point, price, at) VALUES "
        "(9007199254740993, [1, 2], STRUCT(1.5, 'a'), NUMERIC '2.5', "
        "TIMESTAMP '2024-01-02 03:04:05+00')"
    )
    return name


@pytest.fixture
def scratch_dataset(client: bigquery.Client) -> str:
    """A dataset of the test's own, for a test that creates tables: the shared `dataset`
    holds exactly the tables the catalog tests list, whatever order the tests run in."""
    name = f"scratch_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    return name


def rows(client: bigquery.Client, sql: str) -> list[tuple]:
    return [tuple(row.values()) for row in client.query_and_wait(sql)]


def test_tables_lists_tables_and_views(client: bigquery.Client, dataset: str) -> None:
    got = rows(
        client,
        "SELECT table_catalog, table_schema, table_name, table_type, is_insertable_into "
        f"FROM {dataset}.INFORMATION_SCHEMA.TABLES ORDER BY table_name",
    )
    assert got == [
        ("local-project", dataset, "ids", "VIEW", "NO"),
        ("local-project", dataset, "shapes", "BASE TABLE", "YES"),
    ]
    [(created,)] = rows(
        client,
        f"SELECT creation_time FROM {dataset}.INFORMATION_SCHEMA.TABLES "
        "WHERE table_name = 'shapes'",
    )
    assert created is not None and created.tzinfo is not None


def test_columns_give_googlesql_types_in_order(client: bigquery.Client, dataset: str) -> None:
    got = rows(
        client,
        "SELECT column_name, ordinal_position, is_nullable, data_type "
        f"FROM `local-project.{dataset}`.INFORMATION_SCHEMA.COLUMNS "
        "WHERE table_name = 'shapes' ORDER BY ordinal_position",
    )
    assert got == [
        ("id", 1, "NO", "INT64"),
        ("tags", 2, "YES", "ARRAY<INT64>"),
        ("point", 3, "YES", "STRUCT<x FLOAT64, label STRING>"),
        ("price", 4, "YES", "NUMERIC"),
        ("at", 5, "YES", "TIMESTAMP"),
    ]


def test_columns_of_the_public_dataset(client: bigquery.Client) -> None:
    got = rows(
        client,
        f"SELECT column_name, data_type FROM {PUBLIC}.INFORMATION_SCHEMA.COLUMNS "
        "WHERE table_name = 'penguins' AND ordinal_position <= 3 ORDER BY ordinal_position",
    )
    assert got == [
        ("species", "STRING"),
        ("island", "STRING"),
        ("culmen_length_mm", "FLOAT64"),
    ]


def test_schemata_for_a_project_and_a_region(client: bigquery.Client, dataset: str) -> None:
    public = rows(
        client, "SELECT schema_name FROM `bigquery-public-data`.INFORMATION_SCHEMA.SCHEMATA"
    )
    assert public == [("ml_datasets",)]
    mine = rows(
        client,
        "SELECT catalog_name, location FROM `region-us`.INFORMATION_SCHEMA.SCHEMATA "
        f"WHERE schema_name = '{dataset}'",
    )
    assert mine == [("local-project", "US")]


def test_a_join_with_a_view_counts_columns_per_table(client: bigquery.Client, dataset: str) -> None:
    got = rows(
        client,
        "SELECT t.table_name, COUNT(c.column_name) AS n "
        f"FROM {dataset}.INFORMATION_SCHEMA.TABLES t "
        f"JOIN {dataset}.INFORMATION_SCHEMA.COLUMNS c USING (table_name) "
        "GROUP BY t.table_name ORDER BY t.table_name",
    )
    assert got == [("ids", 1), ("shapes", 5)]


REFUSED = {
    "select_star": (
        f"SELECT * FROM {PUBLIC}.INFORMATION_SCHEMA.TABLES",
        exceptions.BadRequest,
        re.escape("not supported by the local BigQuery: SELECT * from INFORMATION_SCHEMA"),
    ),
    "other_view": (
        f"SELECT table_name FROM {PUBLIC}.INFORMATION_SCHEMA.PARTITIONS",
        exceptions.BadRequest,
        "not supported by the local BigQuery: INFORMATION_SCHEMA.PARTITIONS",
    ),
    "unqualified": (
        "SELECT table_name FROM INFORMATION_SCHEMA.TABLES",
        exceptions.BadRequest,
        "must be qualified with a dataset or a region",
    ),
    "missing_dataset": (
        "SELECT table_name FROM no_such_ds.INFORMATION_SCHEMA.TABLES",
        exceptions.NotFound,
        "Dataset local-project:no_such_ds was not found",
    ),
}


@pytest.mark.parametrize(("sql", "error", "message"), REFUSED.values(), ids=REFUSED.keys())
def test_information_schema_refusals(
    client: bigquery.Client, sql: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        client.query_and_wait(sql)


def test_json_export_writes_int64_as_strings(
    client: bigquery.Client, dataset: str, local_cloud: LocalCloud
) -> None:
    gcs = local_cloud.context().storage_client()
    bucket = f"meta-{uuid.uuid4().hex[:8]}"
    gcs.create_bucket(bucket)
    config = bigquery.ExtractJobConfig(destination_format="NEWLINE_DELIMITED_JSON")
    client.extract_table(
        f"{dataset}.shapes", f"gs://{bucket}/shapes.json", job_config=config
    ).result()
    [line] = gcs.bucket(bucket).blob("shapes.json").download_as_text().splitlines()
    record = json.loads(line)
    # 9007199254740993 is not a float64: a JSON number would come back as ...992.
    assert record["id"] == "9007199254740993"
    assert record["tags"] == ["1", "2"]
    assert record["point"] == {"x": 1.5, "label": "a"}


PENGUINS = f"{PUBLIC}.penguins"
STRING_BYTES = "COALESCE(SUM(BYTE_LENGTH({c}) + 2), 0)"
FLOAT_BYTES = "COUNT({c}) * 8"


def dry_run_bytes(client: bigquery.Client, sql: str) -> int:
    config = bigquery.QueryJobConfig(dry_run=True, use_query_cache=False)
    return client.query(sql, job_config=config).total_bytes_processed


def billed(client: bigquery.Client, parts: list[str]) -> int:
    [(total,)] = rows(client, f"SELECT {' + '.join(parts)} FROM {PENGUINS}")
    return total


def test_dry_run_bytes_count_the_columns_read(client: bigquery.Client) -> None:
    species = STRING_BYTES.format(c="species")
    assert dry_run_bytes(client, f"SELECT species FROM {PENGUINS}") == billed(client, [species])
    mass = FLOAT_BYTES.format(c="body_mass_g")
    assert dry_run_bytes(
        client, f"SELECT species, AVG(body_mass_g) FROM {PENGUINS} GROUP BY species"
    ) == billed(client, [species, mass])
    every = [STRING_BYTES.format(c=c) for c in ("species", "island", "sex")] + [
        FLOAT_BYTES.format(c=c)
        for c in ("culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g")
    ]
    assert dry_run_bytes(client, f"SELECT * FROM {PENGUINS}") == billed(client, every)
    assert dry_run_bytes(client, "SELECT 1") == 0


def test_dry_run_bytes_of_nested_columns(client: bigquery.Client, dataset: str) -> None:
    # id 8; tags 2 x 8; point 8 + (2 + 1); price 16; at 8 (see the `dataset` fixture's row)
    assert dry_run_bytes(client, f"SELECT * FROM {dataset}.shapes") == 8 + 16 + 11 + 16 + 8


def test_json_functions_take_a_column_type_from_the_catalog(
    client: bigquery.Client, scratch_dataset: str
) -> None:
    dataset = scratch_dataset
    client.query_and_wait(
        f'CREATE TABLE {dataset}.docs AS SELECT \'{{"a": {{"b": 1}}}}\' AS s, '
        'JSON \'{"a": {"b": 2}}\' AS j, 5 AS n'
    )
    result = client.query_and_wait(
        f"SELECT JSON_QUERY(s, '$.a') AS q, JSON_QUERY(d.j, '$.a') AS jq FROM {dataset}.docs d"
    )
    assert [f.field_type for f in result.schema] == ["STRING", "JSON"]
    assert [tuple(r.values()) for r in result] == [('{"b":1}', {"b": 2})]
    with pytest.raises(
        exceptions.BadRequest, match="No matching signature for function JSON_QUERY"
    ):
        client.query_and_wait(f"SELECT JSON_QUERY(n, '$.a') FROM {dataset}.docs")
    with pytest.raises(
        exceptions.BadRequest, match="not supported by the local BigQuery: JSON_QUE"
    ):
        client.query_and_wait(f"SELECT JSON_QUERY(s, '$.a') FROM (SELECT s FROM {dataset}.docs)")


def test_numeric_columns_divide_and_average_as_numeric(
    client: bigquery.Client, scratch_dataset: str
) -> None:
    dataset = scratch_dataset
    client.query_and_wait(
        f"CREATE TABLE {dataset}.money AS SELECT * FROM UNNEST("
        "[NUMERIC '1', NUMERIC '2', NUMERIC '2']) AS amount"
    )
    result = client.query_and_wait(
        f"SELECT AVG(amount) AS mean, SUM(amount) / 7 AS seventh FROM {dataset}.money"
    )
    assert [f.field_type for f in result.schema] == ["NUMERIC", "NUMERIC"]
    assert [tuple(map(str, r.values())) for r in result] == [("1.666666667", "0.714285714")]
