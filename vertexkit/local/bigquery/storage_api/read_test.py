"""The Storage Read API through google-cloud-bigquery-storage's BigQueryReadClient and
google-cloud-bigquery's to_dataframe()/to_arrow(). Expected values come from Google's pages
"Use the BigQuery Storage Read API to read table data" (sessions, streams, options) and the
proto comments of `google/cloud/bigquery/storage/v1/storage.proto` and `stream.proto`."""

from __future__ import annotations

import datetime
import decimal
import json

import pyarrow as pa
import pytest
from google.api_core import exceptions
from google.cloud import bigquery
from google.cloud.bigquery_storage_v1 import BigQueryReadClient, types

PROJECT = "local-project"
ROWS = """SELECT x AS id, CONCAT('n', CAST(x AS STRING)) AS name, x * 0.5 AS half,
    CAST(x AS NUMERIC) AS amount, TIMESTAMP_SECONDS(x) AS at, DATE '2024-01-01' AS day
    FROM UNNEST(GENERATE_ARRAY(1, 10)) AS x"""


@pytest.fixture
def table(bq: bigquery.Client, dataset: str) -> str:
    bq.query(f"CREATE TABLE {dataset}.t AS {ROWS}").result()
    return f"projects/{PROJECT}/datasets/{dataset}/tables/t"


def session(client: BigQueryReadClient, table: str, data_format: int = types.DataFormat.ARROW,
            streams: int = 1, **read_options: object) -> types.ReadSession:  # fmt: skip
    requested = types.ReadSession(table=table, data_format=data_format, read_options=read_options)
    return client.create_read_session(
        parent=f"projects/{PROJECT}", read_session=requested, max_stream_count=streams
    )


def all_rows(client: BigQueryReadClient, read: types.ReadSession) -> list[dict]:
    """Every stream's rows as Python values (an Arrow session's rows are Arrow scalars)."""
    return [
        {key: value.as_py() if hasattr(value, "as_py") else value for key, value in row.items()}
        for stream in read.streams
        for row in client.read_rows(stream.name).rows(read)
    ]


def test_an_arrow_session_has_the_arrow_types_of_google_s_table(read_client, table) -> None:
    read = session(read_client, table)
    schema = pa.ipc.read_schema(pa.py_buffer(read.arrow_schema.serialized_schema))
    # "Apache Arrow format" type table: INT64 int64, FLOAT64 float64, NUMERIC decimal128(38, 9),
    # TIMESTAMP timestamp[us, UTC], DATE date32
    assert [(f.name, f.type) for f in schema] == [
        ("id", pa.int64()), ("name", pa.string()), ("half", pa.float64()),
        ("amount", pa.decimal128(38, 9)), ("at", pa.timestamp("us", tz="UTC")),
        ("day", pa.date32()),
    ]  # fmt: skip
    assert read.name.startswith(f"projects/{PROJECT}/locations/") and read.estimated_row_count == 10
    frame = read_client.read_rows(read.streams[0].name).to_arrow(read)
    assert frame.column("id").to_pylist() == list(range(1, 11))
    assert frame.column("amount")[2].as_py() == decimal.Decimal("3.000000000")


def test_an_avro_session_reads_the_same_rows(read_client, table) -> None:
    read = session(read_client, table, types.DataFormat.AVRO)
    schema = json.loads(read.avro_schema.schema)
    # Avro type table: a NULLABLE INT64 is ["null", "long"]; TIMESTAMP long timestamp-micros
    fields = {field["name"]: field["type"] for field in schema["fields"]}
    assert fields["id"] == ["null", "long"]
    assert fields["at"] == ["null", {"type": "long", "logicalType": "timestamp-micros"}]
    rows = all_rows(read_client, read)
    assert rows[0]["id"] == 1 and rows[0]["name"] == "n1" and rows[0]["half"] == 0.5
    assert rows[0]["at"] == datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=datetime.UTC)
    assert rows[0]["day"] == datetime.date(2024, 1, 1)
    assert rows[0]["amount"] == decimal.Decimal("1")


def test_several_streams_cover_every_row_once(read_client, table) -> None:
    read = session(read_client, table, streams=3)
    # max_stream_count: "The number of streams may be lower than the requested number"
    assert 1 < len(read.streams) <= 3
    ids = sorted(row["id"] for row in all_rows(read_client, read))
    assert ids == list(range(1, 11))


def test_selected_fields_come_in_the_table_s_order(read_client, table) -> None:
    # selected_fields: "The order of the fields in the read session schema is derived from the
    # table schema and does not correspond to the order in which the fields are specified"
    read = session(read_client, table, selected_fields=["half", "id"])
    assert list(all_rows(read_client, read)[0]) == ["id", "half"]


def test_a_row_restriction_filters_as_a_where_clause(read_client, table) -> None:
    # row_restriction: "SQL text filtering statement, similar to a WHERE clause", e.g.
    # "int_field > 5"
    read = session(read_client, table, row_restriction="id > 5 AND name != 'n7'")
    assert [row["id"] for row in all_rows(read_client, read)] == [6, 8, 9, 10]
    assert read.estimated_row_count == 4


def test_a_snapshot_time_after_the_last_change_reads_the_table(read_client, table) -> None:
    # table_modifiers.snapshot_time: "The snapshot time of the table. If not set, interpreted
    # as now"; the local warehouse keeps no history before the last change, and says so.
    requested = types.ReadSession(table=table, data_format=types.DataFormat.ARROW)
    requested.table_modifiers.snapshot_time = datetime.datetime.now(datetime.UTC)
    read = read_client.create_read_session(parent=f"projects/{PROJECT}", read_session=requested)
    assert len(all_rows(read_client, read)) == 10
    requested.table_modifiers.snapshot_time = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
    with pytest.raises(exceptions.BadRequest, match="snapshot_time"):
        read_client.create_read_session(parent=f"projects/{PROJECT}", read_session=requested)


def test_a_session_is_a_snapshot_of_its_creation(bq, read_client, table, dataset) -> None:
    read = session(read_client, table)
    bq.query(f"INSERT INTO {dataset}.t (id) VALUES (99)").result()
    assert len(all_rows(read_client, read)) == 10  # the rows as they were


def test_a_query_s_results_table_is_read(bq, read_client, table, dataset) -> None:
    job = bq.query(f"SELECT id, name FROM {dataset}.t WHERE id <= 3 ORDER BY id")
    job.result()
    destination = job.destination
    path = f"projects/{destination.project}/datasets/{destination.dataset_id}/tables/" \
        f"{destination.table_id}"  # fmt: skip
    assert [row["id"] for row in all_rows(read_client, session(read_client, path))] == [1, 2, 3]
    frame = bq.query(f"SELECT * FROM {dataset}.t").to_dataframe(bqstorage_client=read_client)
    assert sorted(frame["id"]) == list(range(1, 11))


def test_list_rows_to_dataframe_and_to_arrow_take_the_read_api(bq, read_client, table) -> None:
    name = table.split("/datasets/")[1].replace("/tables/", ".")
    frame = bq.list_rows(name).to_dataframe(bqstorage_client=read_client)
    assert list(frame["name"][:2]) == ["n1", "n2"] and len(frame) == 10
    arrow = bq.list_rows(name).to_arrow(bqstorage_client=read_client)
    assert arrow.num_rows == 10


def test_split_read_stream_cuts_a_stream_in_two(read_client, table) -> None:
    read = session(read_client, table)
    split = read_client.split_read_stream(request={"name": read.streams[0].name, "fraction": 0.5})
    # "primary_stream ... contains the beginning portion of |original_stream|"
    head = [r["id"].as_py() for r in read_client.read_rows(split.primary_stream.name).rows(read)]
    tail = [r["id"].as_py() for r in read_client.read_rows(split.remainder_stream.name).rows(read)]
    assert head == [1, 2, 3, 4, 5] and tail == [6, 7, 8, 9, 10]


def test_an_lz4_compressed_arrow_session_reads_back(read_client, table) -> None:
    options = {"arrow_serialization_options": {"buffer_compression": "LZ4_FRAME"}}
    read = session(read_client, table, **options)
    assert all_rows(read_client, read)[9]["id"] == 10


def test_an_empty_table_has_no_streams(bq, read_client, dataset) -> None:
    bq.query(f"CREATE TABLE {dataset}.empty (x INT64)").result()
    read = session(read_client, f"projects/{PROJECT}/datasets/{dataset}/tables/empty")
    assert list(read.streams) == []


@pytest.mark.parametrize(
    ("table_path", "options", "error", "named"),
    [
        ("datasets/{d}/tables/missing", {}, exceptions.NotFound, "missing"),
        (
            "datasets/{d}/tables/t",
            {"selected_fields": ["nope"]},
            exceptions.BadRequest,
            "selected_fields",
        ),
        (
            "datasets/{d}/tables/t",
            {"row_restriction": "nope > 1"},
            exceptions.BadRequest,
            "row_restriction",
        ),
        (
            "datasets/{d}/tables/t",
            {"row_restriction": "id >"},
            exceptions.BadRequest,
            "row_restriction",
        ),
    ],
    ids=["missing-table", "unknown-field", "unknown-column", "syntax"],
)
def test_a_bad_session_request_is_refused_as_google_refuses_it(
    read_client, table, dataset, table_path, options, error, named
) -> None:
    path = f"projects/{PROJECT}/" + table_path.format(d=dataset)
    with pytest.raises(error, match=named):
        session(read_client, path, **options)


def test_an_unknown_stream_is_not_found(read_client) -> None:
    name = f"projects/{PROJECT}/locations/us/sessions/none/streams/none"
    with pytest.raises(exceptions.NotFound):
        list(read_client.read_rows(name))
