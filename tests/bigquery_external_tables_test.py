# ruff: noqa: E501  (rows and schemas on one line, as the recorded traffic shows them)
"""External tables (`externalDataConfiguration`) over files in the local Cloud Storage, through
google-cloud-bigquery: created with no schema (autodetect) or a declared one, queried, read
again when their files change, refused where the local BigQuery cannot read them.

Expected shapes come from Google's recorded traffic (GoogleCloudPlatform/k8s-config-connector,
`testdata/basic/bigquery/v1beta1/bigquerytable/bigquerytable-externaldata-csv/_http.log`: a
CSV with `skipLeadingRows: 1` and `autodetect: true` over
gs://cloud-samples-data/bigquery/us-states/us-states-by-date.csv comes back `type: EXTERNAL`
with the schema name STRING, post_abbr STRING, date DATE and every numRows/num*Bytes "0").
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from google.api_core import exceptions
from google.cloud import bigquery, storage

from vertexkit.context import CloudContext

# The recorded test's file has these columns; its first rows (us-states-by-date.csv).
STATES = "name,post_abbr,date\nAlabama,AL,1819-12-14\nAlaska,AK,1959-01-03\nArizona,AZ,1912-02-14\n"


@pytest.fixture
def client(cloud_context: CloudContext) -> bigquery.Client:
    return cloud_context.bigquery_client()


@pytest.fixture
def dataset(client: bigquery.Client) -> Iterator[str]:
    name = f"ext_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    yield f"{client.project}.{name}"
    client.delete_dataset(name, delete_contents=True, not_found_ok=True)


@pytest.fixture
def bucket(cloud_context: CloudContext) -> storage.Bucket:
    return cloud_context.storage_client().create_bucket(f"ext-{uuid.uuid4().hex[:10]}")


def external(source_format: str, uris: list[str], **options: object) -> bigquery.ExternalConfig:
    config = bigquery.ExternalConfig(source_format)
    config.source_uris = uris
    for key, value in options.items():
        setattr(config, key, value)
    return config


def rows(client: bigquery.Client, sql: str) -> list[tuple]:
    return [tuple(row.values()) for row in client.query(sql).result()]


def test_a_csv_table_with_no_schema_is_autodetected_and_queryable(
    client: bigquery.Client, dataset: str, bucket: storage.Bucket
) -> None:
    bucket.blob("us-states/us-states-by-date.csv").upload_from_string(STATES, "text/csv")
    config = external("CSV", [f"gs://{bucket.name}/us-states/us-states-by-date.csv"], autodetect=True)
    config.options.skip_leading_rows = 1
    table = bigquery.Table(f"{dataset}.states")
    table.external_data_configuration = config
    created = client.create_table(table)
    assert created.table_type == "EXTERNAL"
    assert [(f.name, f.field_type, f.mode) for f in created.schema] == [
        ("name", "STRING", "NULLABLE"), ("post_abbr", "STRING", "NULLABLE"), ("date", "DATE", "NULLABLE"),
    ]  # fmt: skip
    assert (created.num_rows, created.num_bytes) == (0, 0)
    got = client.get_table(f"{dataset}.states").external_data_configuration
    assert got.source_uris == config.source_uris and got.autodetect is True
    assert rows(client, f"SELECT post_abbr FROM `{dataset}.states` WHERE date > '1900-01-01' ORDER BY 1") == [
        ("AK",), ("AZ",),
    ]  # fmt: skip
    # BigQuery reads an external table's files at query time: a new file content is seen.
    bucket.blob("us-states/us-states-by-date.csv").upload_from_string(
        STATES + "Arkansas,AR,1836-06-15\n", "text/csv"
    )
    assert rows(client, f"SELECT count(*) FROM `{dataset}.states`") == [(4,)]
    with pytest.raises(exceptions.BadRequest, match="external table"):
        client.query(f"DELETE FROM `{dataset}.states` WHERE TRUE").result()


def test_parquet_and_avro_tables_take_their_files_schema(
    client: bigquery.Client, dataset: str, bucket: storage.Bucket
) -> None:
    data = pa.table({"id": [1, 2, 3], "score": [0.5, 1.5, 2.5], "tag": ["a", "b", "c"]})
    sink = io.BytesIO()
    pq.write_table(data, sink)
    bucket.blob("p/part-0.parquet").upload_from_string(sink.getvalue())
    avro = io.BytesIO()
    schema = {"type": "record", "name": "row", "fields": [
        {"name": "id", "type": "long"}, {"name": "score", "type": "double"},
        {"name": "tag", "type": ["null", "string"]}]}  # fmt: skip
    fastavro.writer(avro, schema, [{"id": 1, "score": 0.5, "tag": "a"}, {"id": 2, "score": 1.5, "tag": None}])
    bucket.blob("a/part-0.avro").upload_from_string(avro.getvalue())
    for table_id, fmt, uri, total in (
        ("parquet", "PARQUET", f"gs://{bucket.name}/p/*.parquet", 4.5),
        ("avro", "AVRO", f"gs://{bucket.name}/a/part-0.avro", 2.0),
    ):
        table = bigquery.Table(f"{dataset}.{table_id}")
        table.external_data_configuration = external(fmt, [uri])
        created = client.create_table(table)
        # Parquet INT64 / Avro long -> INTEGER, DOUBLE / double -> FLOAT, string -> STRING
        # (BigQuery's Parquet and Avro conversions, the load-data reference pages).
        assert [(f.name, f.field_type) for f in created.schema] == [
            ("id", "INTEGER"), ("score", "FLOAT"), ("tag", "STRING"),
        ]  # fmt: skip
        assert rows(client, f"SELECT sum(score) FROM `{dataset}.{table_id}`") == [(total,)]


def test_what_cannot_be_read_is_refused_and_nothing_is_created(
    client: bigquery.Client, dataset: str, bucket: storage.Bucket
) -> None:
    bucket.blob("x.csv").upload_from_string("a,b\n1,2\n", "text/csv")
    uri = f"gs://{bucket.name}/x.csv"
    refusals = [
        (external("GOOGLE_SHEETS", ["https://docs.google.com/spreadsheets/d/x"]), "sourceFormat"),
        (external("CSV", [uri]), "needs a schema or autodetect"),
        (external("CSV", [f"gs://{bucket.name}/missing.csv"], autodetect=True), "sourceUris"),
    ]
    for config, message in refusals:
        table = bigquery.Table(f"{dataset}.refused")
        table.external_data_configuration = config
        with pytest.raises(exceptions.BadRequest, match=message):
            client.create_table(table)
    assert list(client.list_tables(dataset)) == []
