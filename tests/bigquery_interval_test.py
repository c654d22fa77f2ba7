"""INTERVAL beyond single expressions (those are in googlesql_conformance/interval.yaml), through
google-cloud-bigquery and -bigquery-storage: INTERVAL columns in tables (CREATE TABLE ... AS,
tables.get, tabledata.list, streaming), INTERVAL query parameters, and the paths that cannot
carry an INTERVAL exactly, refused by name.

References: the data types page (Interval type: canonical format [sign]Y-M [sign]D [sign]H:M:S[.F],
https://cloud.google.com/bigquery/docs/reference/standard-sql/data-types#interval_type) and
TableFieldSchema.type (INTERVAL). Values are compared as the client parses BigQuery's text
(google.cloud.bigquery._helpers, a dateutil relativedelta).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import grpc
import pytest
from dateutil.relativedelta import relativedelta
from google.api_core import exceptions
from google.cloud import bigquery
from google.cloud.bigquery_storage_v1 import BigQueryReadClient
from google.cloud.bigquery_storage_v1.services.big_query_read.transports import (
    BigQueryReadGrpcTransport,
)

from vertexkit.context import CloudContext

REFUSED = "not supported by the local BigQuery"


@pytest.fixture
def client(cloud_context: CloudContext) -> bigquery.Client:
    return cloud_context.bigquery_client()


@pytest.fixture
def table(client: bigquery.Client) -> Iterator[str]:
    dataset = f"iv_{uuid.uuid4().hex[:8]}"
    client.create_dataset(dataset)
    name = f"{client.project}.{dataset}.spans"
    client.query_and_wait(
        f"CREATE TABLE `{name}` AS SELECT 1 AS id, "
        "INTERVAL '1-2 3 4:5:6.789' YEAR TO SECOND AS span UNION ALL "
        "SELECT 2, INTERVAL -5 DAY UNION ALL SELECT 3, NULL"
    )
    yield name
    client.delete_dataset(dataset, delete_contents=True)


def test_a_created_table_keeps_interval_columns(client: bigquery.Client, table: str) -> None:
    assert client.get_table(table).schema[1].field_type == "INTERVAL"  # tables.get
    listed = {row["id"]: row["span"] for row in client.list_rows(table)}  # tabledata.list
    assert listed == {
        1: relativedelta(years=1, months=2, days=3, hours=4, minutes=5, seconds=6,
                         microseconds=789000),
        2: relativedelta(days=-5),
        3: None,
    }  # fmt: skip


def test_a_query_reads_an_interval_column_by_its_catalog_type(
    client: bigquery.Client, table: str
) -> None:
    result = client.query_and_wait(
        f"SELECT CAST(span AS STRING) AS text, span * 2 AS twice, JUSTIFY_DAYS(span) AS justified "
        f"FROM `{table}` WHERE id = 2"
    )
    assert [f.field_type for f in result.schema] == ["STRING", "INTERVAL", "INTERVAL"]
    row = next(iter(result))
    assert row["text"] == "0-0 -5 0:0:0"
    assert row["twice"] == relativedelta(days=-10)
    assert row["justified"] == relativedelta(days=-5)


def test_an_interval_query_parameter_binds_exactly(client: bigquery.Client) -> None:
    config = bigquery.QueryJobConfig(
        query_parameters=[bigquery.ScalarQueryParameter("span", "INTERVAL", "1-2 3 4:5:6")]
    )
    result = client.query_and_wait(
        "SELECT CAST(@span AS STRING) AS text, @span = INTERVAL 14 MONTH + INTERVAL "
        "'3 4:5:6' DAY TO SECOND AS same",
        job_config=config,
    )
    assert list(next(iter(result)).values()) == ["1-2 3 4:5:6", True]


def test_an_unreadable_interval_parameter_is_rejected(client: bigquery.Client) -> None:
    config = bigquery.QueryJobConfig(
        query_parameters=[bigquery.ScalarQueryParameter("span", "INTERVAL", "three days")]
    )
    with pytest.raises(exceptions.BadRequest, match="Invalid INTERVAL parameter value"):
        client.query_and_wait("SELECT @span", job_config=config)


def test_streamed_intervals_are_read_as_bigquery_s_text(
    client: bigquery.Client, table: str
) -> None:
    errors = client.insert_rows_json(table, [{"id": 4, "span": "0-0 0 36:0:0"}])
    assert errors == []
    result = client.query_and_wait(f"SELECT CAST(span AS STRING) FROM `{table}` WHERE id = 4")
    assert next(iter(result))[0] == "0-0 0 36:0:0"


def test_an_interval_inside_an_array_in_a_result_is_refused(client: bigquery.Client) -> None:
    with pytest.raises(exceptions.BadRequest, match=f"{REFUSED}: INTERVAL inside an ARRAY"):
        client.query_and_wait("SELECT [INTERVAL 1 DAY] AS spans")


def test_the_storage_read_api_refuses_interval_columns(
    cloud_context: CloudContext, client: bigquery.Client, table: str
) -> None:
    channel = grpc.insecure_channel(cloud_context.bigquery_storage_endpoint)
    reader = BigQueryReadClient(transport=BigQueryReadGrpcTransport(channel=channel))
    with pytest.raises(exceptions.GoogleAPICallError, match=f"{REFUSED}: INTERVAL columns"):
        client.list_rows(table).to_arrow(bqstorage_client=reader)


def test_an_extract_job_refuses_interval_columns(
    cloud_context: CloudContext, client: bigquery.Client, table: str
) -> None:
    bucket = cloud_context.storage_client().create_bucket(f"iv-{uuid.uuid4().hex[:8]}")
    job = client.extract_table(table, f"gs://{bucket.name}/spans.csv")
    with pytest.raises(exceptions.GoogleAPICallError, match=f"{REFUSED}: INTERVAL columns"):
        job.result()
