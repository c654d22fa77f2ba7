"""GEOGRAPHY honoured as GEOGRAPHY through google-cloud-bigquery and -bigquery-storage: typed
GEOGRAPHY in every schema the API answers, WKT text in and out as BigQuery writes it.

References: TableFieldSchema.type (GEOGRAPHY), the geography functions page
(https://cloud.google.com/bigquery/docs/reference/standard-sql/geography_functions: WKT written
`POINT(1 2)`, polygons normalized counter-clockwise, as in its ST_GEOGFROM example), and the
Storage Read API's Arrow/Avro mapping (GEOGRAPHY is a string of WKT with the extension name
`google:sqlType:geography`, Avro `{"type": "string", "sqlType": "GEOGRAPHY"}`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import grpc
import pytest
from google.api_core import exceptions
from google.cloud import bigquery
from google.cloud.bigquery_storage_v1 import BigQueryReadClient, types
from google.cloud.bigquery_storage_v1.services.big_query_read.transports import (
    BigQueryReadGrpcTransport,
)

from vertexkit.context import CloudContext

POLYGON_IN = "POLYGON((0 0, 0 2, 2 2, 2 0, 0 0))"  # clockwise, as in the ST_GEOGFROM example
POLYGON_OUT = "POLYGON((2 0, 2 2, 0 2, 0 0, 2 0))"  # BigQuery's answer there


@pytest.fixture
def client(cloud_context: CloudContext) -> bigquery.Client:
    return cloud_context.bigquery_client()


@pytest.fixture
def dataset(client: bigquery.Client) -> Iterator[str]:
    name = f"geo_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    yield f"{client.project}.{name}"
    client.delete_dataset(name, delete_contents=True)


def _geography_table(client: bigquery.Client, dataset: str) -> bigquery.Table:
    schema = [bigquery.SchemaField("id", "INT64"), bigquery.SchemaField("g", "GEOGRAPHY")]
    table = client.create_table(bigquery.Table(f"{dataset}.places", schema=schema))
    client.query_and_wait(
        f"INSERT `{dataset}.places` (id, g) VALUES (1, ST_GEOGPOINT(1, 2)), "
        f"(2, ST_GEOGFROMTEXT('{POLYGON_IN}')), (3, NULL)"
    )
    return table


def test_a_geography_column_is_typed_geography_in_every_schema(
    client: bigquery.Client, dataset: str
) -> None:
    table = _geography_table(client, dataset)
    assert client.get_table(table).schema[1].field_type == "GEOGRAPHY"  # tables.get
    result = client.query_and_wait(f"SELECT g FROM `{dataset}.places` ORDER BY id")
    assert result.schema[0].field_type == "GEOGRAPHY"  # a query's result
    assert [row.g for row in result] == ["POINT(1 2)", POLYGON_OUT, None]
    rows = client.list_rows(table, selected_fields=[table.schema[1]])  # tabledata.list
    assert sorted(str(row.g) for row in rows) == sorted(["POINT(1 2)", POLYGON_OUT, "None"])
    computed = client.query_and_wait("SELECT ST_GEOGPOINT(-122.35, 47.62) AS p")
    assert computed.schema[0].field_type == "GEOGRAPHY"
    assert [row.p for row in computed] == ["POINT(-122.35 47.62)"]


def test_ddl_makes_a_geography_column(client: bigquery.Client, dataset: str) -> None:
    client.query_and_wait(f"CREATE TABLE `{dataset}.ddl` (g GEOGRAPHY, name STRING)")
    assert client.get_table(f"{dataset}.ddl").schema[0].field_type == "GEOGRAPHY"
    client.query_and_wait(f"CREATE TABLE `{dataset}.ctas` AS SELECT ST_GEOGPOINT(3, 4) AS g")
    assert client.get_table(f"{dataset}.ctas").schema[0].field_type == "GEOGRAPHY"
    got = client.query_and_wait(f"SELECT ST_ASTEXT(g) AS t, ST_X(g) AS x FROM `{dataset}.ctas`")
    assert [tuple(row.values()) for row in got] == [("POINT(3 4)", 3.0)]


def test_the_storage_read_api_answers_wkt_strings(
    client: bigquery.Client, dataset: str, cloud_context: CloudContext
) -> None:
    table = _geography_table(client, dataset)
    channel = grpc.insecure_channel(cloud_context.bigquery_storage_endpoint)
    reader = BigQueryReadClient(transport=BigQueryReadGrpcTransport(channel=channel))
    frame = client.list_rows(table).to_arrow(bqstorage_client=reader)
    field = frame.schema.field("g")
    assert field.type == "string"
    assert field.metadata[b"ARROW:extension:name"] == b"google:sqlType:geography"
    assert sorted(v for v in frame.column("g").to_pylist() if v) == sorted(
        ["POINT(1 2)", POLYGON_OUT]
    )
    session = reader.create_read_session(
        parent=f"projects/{client.project}",
        read_session=types.ReadSession(
            table=f"projects/{table.project}/datasets/{table.dataset_id}/tables/places",
            data_format=types.DataFormat.AVRO,
        ),
        max_stream_count=1,
    )
    assert '"sqlType": "GEOGRAPHY"' in session.avro_schema.schema.replace('":"', '": "')


def test_casts_and_unserved_functions_are_refused_by_name(client: bigquery.Client) -> None:
    with pytest.raises(exceptions.BadRequest, match="CAST to GEOGRAPHY"):
        client.query_and_wait("SELECT CAST('POINT(1 2)' AS GEOGRAPHY) AS g")
    with pytest.raises(exceptions.BadRequest, match="CAST of a GEOGRAPHY to STRING"):
        client.query_and_wait("SELECT CAST(ST_GEOGPOINT(1, 2) AS STRING) AS s")
    with pytest.raises(exceptions.BadRequest, match="local BigQuery: ST_BUFFER"):
        client.query_and_wait("SELECT ST_BUFFER(ST_GEOGPOINT(1, 2), 10) AS b")
    with pytest.raises(exceptions.BadRequest, match="GEOGRAPHY inside an ARRAY"):
        client.query_and_wait("SELECT [ST_GEOGPOINT(1, 2)] AS a")


def test_streamed_and_loaded_values_are_parsed_as_st_geogfromtext_parses(
    client: bigquery.Client, dataset: str
) -> None:
    # tabledata.insertAll and load jobs take GEOGRAPHY as WKT or GeoJSON text (reference
    # "Loading GeoJSON/WKT data"); a clockwise ring comes back as in the ST_GEOGFROM example.
    schema = [bigquery.SchemaField("id", "INT64"), bigquery.SchemaField("g", "GEOGRAPHY")]
    table = client.create_table(bigquery.Table(f"{dataset}.streamed", schema=schema))
    geojson = '{"type": "Point", "coordinates": [3, 4]}'
    assert (
        client.insert_rows_json(table, [{"id": 1, "g": POLYGON_IN}, {"id": 2, "g": geojson}]) == []
    )
    errors = client.insert_rows_json(table, [{"id": 3, "g": "POINT(0 91)"}])
    assert errors and errors[0]["errors"][0]["reason"] == "invalid"
    config = bigquery.LoadJobConfig(schema=schema, source_format="NEWLINE_DELIMITED_JSON")
    client.load_table_from_json(
        [{"id": 4, "g": POLYGON_IN}], f"{dataset}.loaded", job_config=config
    ).result()
    got = client.query_and_wait(
        f"SELECT id, ST_ASTEXT(g) AS t FROM (SELECT * FROM `{dataset}.streamed` UNION ALL "
        f"SELECT * FROM `{dataset}.loaded`) ORDER BY id"
    )
    assert [tuple(row.values()) for row in got] == [
        (1, POLYGON_OUT),
        (2, "POINT(3 4)"),
        (4, POLYGON_OUT),
    ]
    assert client.get_table(f"{dataset}.loaded").schema[1].field_type == "GEOGRAPHY"


def test_geography_columns_are_neither_groupable_orderable_nor_comparable(
    client: bigquery.Client, dataset: str
) -> None:
    # The 'Data type properties' table of the data types page: BigQuery refuses these while it
    # analyses the query, so an empty table is refused too (WHERE FALSE reads no row).
    _geography_table(client, dataset)
    places = f"`{dataset}.places`"
    refused = {
        f"SELECT id FROM {places} WHERE FALSE GROUP BY g, id": "Grouping by expressions",
        f"SELECT id FROM {places} ORDER BY g": "ORDER BY does not support",
        f"SELECT DISTINCT * FROM {places}": "cannot be used in SELECT DISTINCT",
        f"SELECT a.id FROM {places} a JOIN {places} b ON a.g = b.g": "Equality is not defined",
        f"SELECT a.id FROM {places} a JOIN {places} b USING (g)": "in USING has types",
        f"SELECT * FROM {places} EXCEPT DISTINCT SELECT * FROM {places}": "set operation",
        f"SELECT id FROM {places} WHERE g IN (SELECT g FROM {places})": "uncomparable types",
    }
    for query, message in refused.items():
        with pytest.raises(exceptions.BadRequest, match=message):
            client.query_and_wait(query)
    allowed = client.query_and_wait(
        f"SELECT ST_ASTEXT(g) AS t, COUNT(*) AS n FROM {places} WHERE g IS NOT NULL "
        f"GROUP BY t ORDER BY ST_ASTEXT(g)"
    )
    assert [tuple(row.values()) for row in allowed] == [("POINT(1 2)", 1), (POLYGON_OUT, 1)]
    equal = client.query_and_wait(
        f"SELECT a.id FROM {places} a JOIN {places} b ON ST_EQUALS(a.g, b.g) ORDER BY a.id"
    )
    assert [row.id for row in equal] == [1, 2]
