"""Resource shapes and answers of the local BigQuery checked against Google's: the REST
reference (`bigquery.v2.json`, googleapiclient's discovery cache), BigQuery's documentation and
real traffic recorded in GoogleCloudPlatform/k8s-config-connector
(`pkg/test/resourcefixture/testdata/basic/bigquery/**/_http.log`). Each expected value names
its source."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from google.api_core import exceptions
from google.cloud import bigquery

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud


@pytest.fixture
def client(cloud_context: CloudContext) -> bigquery.Client:
    return cloud_context.bigquery_client()


@pytest.fixture
def dataset(client: bigquery.Client) -> Iterator[str]:
    name = f"ds_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    yield f"{client.project}.{name}"
    client.delete_dataset(name, delete_contents=True, not_found_ok=True)


def _new_dataset(client: bigquery.Client, location: str | None = None) -> bigquery.Dataset:
    spec = bigquery.Dataset(f"{client.project}.ds_{uuid.uuid4().hex[:8]}")
    if location:
        spec.location = location
    return client.create_dataset(spec)


# -- 1. datasets ---------------------------------------------------------------------------------
def test_dataset_default_fields(client: bigquery.Client) -> None:
    created = _new_dataset(client)
    fetched = client.get_dataset(created.reference)._properties
    # Recorded answer (basicbigquerydataset/_http.log, POST .../datasets): the default access
    # entries, in this order, "type": "DEFAULT", selfLink; the creator's own userByEmail OWNER
    # entry is left out locally (there is no caller identity).
    assert fetched["access"] == [
        {"role": "WRITER", "specialGroup": "projectWriters"},
        {"role": "OWNER", "specialGroup": "projectOwners"},
        {"role": "READER", "specialGroup": "projectReaders"},
    ]
    assert fetched["type"] == "DEFAULT"
    assert fetched["selfLink"] == (
        f"https://bigquery.googleapis.com/bigquery/v2/projects/{client.project}/datasets/"
        f"{created.dataset_id}"
    )
    assert fetched["location"] == "US"  # recorded answer: "location": "US" by default
    # Reference Dataset.maxTimeTravelHours: "The default value is 168 hours"; int64 as string
    assert fetched["maxTimeTravelHours"] == "168"
    for key in ("etag", "creationTime", "lastModifiedTime"):
        assert isinstance(fetched[key], str) and fetched[key]
    assert created._properties["access"] == fetched["access"]


def test_dataset_location_as_given_also_in_list(client: bigquery.Client) -> None:
    created = _new_dataset(client, "EU")
    assert client.get_dataset(created.reference).location == "EU"
    # Reference DatasetList.datasets[].location: "The geographic location where the dataset
    # resides."
    listed = {d.dataset_id: d for d in client.list_datasets()}
    assert listed[created.dataset_id]._properties["location"] == "EU"


# -- 7. the anonymous results dataset -------------------------------------------------------------
def test_failing_first_query_leaves_no_dataset(local_cloud: LocalCloud) -> None:
    context = local_cloud.context()
    base = context.bigquery_client()
    client = bigquery.Client(  # a project of its own: its first query is the one that fails
        project=f"p-{uuid.uuid4().hex[:8]}",
        location="US",
        credentials=base._credentials,
        client_options={"api_endpoint": context.bigquery_endpoint},
    )
    with pytest.raises(exceptions.BadRequest):
        client.query("SELECT no_such_column FROM UNNEST([1]) AS x", api_method="QUERY").result()
    # datasets.list `all`: "Whether to list all datasets, including hidden ones"; the failed
    # query made none.
    assert [d.dataset_id for d in client.list_datasets(include_all=True)] == []
    assert next(iter(client.query("SELECT 1", api_method="QUERY").result()))[0] == 1
    # BigQuery's anonymous result datasets are hidden ("_"-prefixed) and the local one is
    # internal: not listed even with all=true.
    assert [d.dataset_id for d in client.list_datasets(include_all=True)] == []


# -- 6. arithmetic over UNNEST of an array of structs ---------------------------------------------
def _one(client: bigquery.Client, sql: str) -> object:
    return next(iter(client.query(sql).result()))[0]


@pytest.mark.parametrize(
    "array",
    [
        "[STRUCT(1 AS a, 3 AS b), STRUCT(2 AS a, 3 AS b)]",
        # An array's elements are coerced to their supertype (BigQuery docs, "Conversion rules",
        # supertypes): STRUCT(2, 3) takes the field names a, b by position.
        "[STRUCT(1 AS a, 3 AS b), STRUCT(2, 3)]",
        # Typed constructors name fields by position (docs, "Data types", constructing a STRUCT:
        # `STRUCT<x int64>(5)`).
        "[STRUCT<a INT64, b INT64>(1, 3), STRUCT(2, 3)]",
        "ARRAY<STRUCT<a INT64, b INT64>>[STRUCT(1, 3), STRUCT(2, 3)]",
    ],
)
def test_sum_of_products_over_unnest_of_structs(client: bigquery.Client, array: str) -> None:
    # BigQuery: 1 * 3 + 2 * 3 = 9 (the local answer was 3: the unnamed element's a and b NULL)
    assert _one(client, f"SELECT SUM(s.a * s.b) FROM UNNEST({array}) AS s") == 9


def test_struct_arity_mismatch_in_array_is_refused(client: bigquery.Client) -> None:
    # BigQuery: structs of different arity have no supertype, so the array literal is an error
    with pytest.raises(exceptions.BadRequest, match="cannot be coerced"):
        _one(client, "SELECT [STRUCT(1 AS a, 3 AS b), STRUCT(2)]")


# -- 2. tables -------------------------------------------------------------------------------------
SIZE_FIELDS = (
    "numBytes",
    "numLongTermBytes",
    "numRows",
    "numTotalLogicalBytes",
    "numActiveLogicalBytes",
    "numLongTermLogicalBytes",
)


def test_table_location_is_its_datasets_and_sizes_are_strings(client: bigquery.Client) -> None:
    created = _new_dataset(client, "EU")
    table_id = f"{created.project}.{created.dataset_id}.t"
    client.create_table(bigquery.Table(table_id, schema=[bigquery.SchemaField("x", "INT64")]))
    client.query(f"INSERT INTO `{table_id}` (x) VALUES (1), (2)").result()
    body = client.get_table(table_id)._properties
    # Reference Table.location: "This value is inherited from the dataset."
    assert body["location"] == "EU"
    # Reference Table: each size is int64/uint64 JSON, i.e. a string
    assert all(isinstance(body[key], str) for key in SIZE_FIELDS)
    assert body["numRows"] == "2"
    assert body["numBytes"] == "16"  # 2 INT64 values of 8 bytes (docs, "Data size calculation")


def test_partitioning_and_clustering_answered_back(client: bigquery.Client, dataset: str) -> None:
    spec = bigquery.Table(
        f"{dataset}.parts",
        schema=[bigquery.SchemaField("d", "DATE"), bigquery.SchemaField("x", "INT64")],
    )
    spec.time_partitioning = bigquery.TimePartitioning(field="d")
    spec.clustering_fields = ["x"]
    spec.require_partition_filter = True
    client.create_table(spec)
    body = client.get_table(spec.reference)._properties
    # Reference Table.timePartitioning / clustering / requirePartitionFilter: kept as given
    assert body["timePartitioning"] == {"type": "DAY", "field": "d"}
    assert body["clustering"] == {"fields": ["x"]}
    assert body["requirePartitionFilter"] is True


def test_ddl_partition_by_cluster_by_kept(client: bigquery.Client, dataset: str) -> None:
    client.query(
        f"CREATE TABLE `{dataset}.ddl` (ts TIMESTAMP, n INT64) PARTITION BY DATE(ts) "
        "CLUSTER BY n OPTIONS (require_partition_filter = TRUE)"
    ).result()
    table = client.get_table(f"{dataset}.ddl")
    # docs, CREATE TABLE: PARTITION BY DATE(timestamp_column) partitions by day on that column
    assert table._properties["timePartitioning"] == {"type": "DAY", "field": "ts"}
    assert table.clustering_fields == ["n"]
    assert table.require_partition_filter is True
    client.query(
        f"CREATE TABLE `{dataset}.ranged` PARTITION BY RANGE_BUCKET(n, GENERATE_ARRAY(0, 100, 10))"
        " AS SELECT 5 AS n"
    ).result()
    # Reference RangePartitioning: range.start/end/interval are int64 strings
    assert client.get_table(f"{dataset}.ranged")._properties["rangePartitioning"] == {
        "field": "n",
        "range": {"start": "0", "end": "100", "interval": "10"},
    }


def test_require_partition_filter_honoured(client: bigquery.Client, dataset: str) -> None:
    client.query(
        f"CREATE TABLE `{dataset}.guarded` (d DATE, n INT64) PARTITION BY d "
        "OPTIONS (require_partition_filter = TRUE)"
    ).result()
    client.query(f"INSERT INTO `{dataset}.guarded` VALUES (DATE '2024-01-01', 1)").result()
    # BigQuery's error without a partition filter (docs, "Set partition filter requirements")
    with pytest.raises(exceptions.BadRequest, match="without a filter over column"):
        client.query(f"SELECT n FROM `{dataset}.guarded`").result()
    rows = client.query(f"SELECT n FROM `{dataset}.guarded` WHERE d = '2024-01-01'").result()
    assert [row.n for row in rows] == [1]


def test_partitioning_on_missing_column_refused(client: bigquery.Client, dataset: str) -> None:
    spec = bigquery.Table(f"{dataset}.bad", schema=[bigquery.SchemaField("x", "INT64")])
    spec.time_partitioning = bigquery.TimePartitioning(field="x")
    with pytest.raises(exceptions.BadRequest, match="TIMESTAMP, DATE or DATETIME"):
        client.create_table(spec)


# -- 5. dry runs -----------------------------------------------------------------------------------
def test_dry_run_reports_bytes_schema_and_tables(client: bigquery.Client, dataset: str) -> None:
    client.query(
        f"CREATE TABLE `{dataset}.sized` AS SELECT 1 AS x, 'ab' AS s UNION ALL SELECT 2, 'cde'"
    ).result()
    job = client.query(
        f"SELECT x FROM `{dataset}.sized`", job_config=bigquery.QueryJobConfig(dry_run=True)
    )
    stats = job._properties["statistics"]
    # docs, "Data size calculation": INT64 is 8 bytes; only the columns read are counted.
    # Reference JobStatistics2.totalBytesProcessed: int64, a JSON string.
    assert stats["query"]["totalBytesProcessed"] == "16"
    assert stats["totalBytesProcessed"] == "16"
    assert job.total_bytes_processed == 16
    assert stats["query"]["statementType"] == "SELECT"
    project, name = dataset.split(".")
    assert stats["query"]["referencedTables"] == [
        {"projectId": project, "datasetId": name, "tableId": "sized"}
    ]
    # Reference JobStatistics2.schema: "Present only for successful dry run"
    assert [(f.name, f.field_type) for f in job.schema] == [("x", "INTEGER")]
    strings = client.query(
        f"SELECT s FROM `{dataset}.sized`", job_config=bigquery.QueryJobConfig(dry_run=True)
    )
    # STRING: 2 bytes + its UTF-8 bytes: (2 + 2) + (2 + 3)
    assert strings.total_bytes_processed == 9


# -- 4. tables.update of a view -------------------------------------------------------------------
def test_view_update_with_schema_descriptions(client: bigquery.Client, dataset: str) -> None:
    view = bigquery.Table(f"{dataset}.v")
    view.view_query = "SELECT 1 AS a, 'x' AS b"
    client.create_table(view)
    body = client.get_table(view.reference).to_api_repr()
    body["schema"]["fields"][0]["description"] = "the answer"
    project, name = dataset.split(".")
    path = f"/projects/{project}/datasets/{name}/tables/v"
    # tables.update (PUT) "replaces the entire Table resource" (reference); a view's schema
    # naming its query's columns may add descriptions (was a 500 here)
    answer = client._connection.api_request("PUT", path, data=body)
    assert answer["schema"]["fields"][0]["description"] == "the answer"
    assert client.get_table(view.reference).schema[0].description == "the answer"
    body["schema"]["fields"].append({"name": "c", "type": "STRING", "mode": "NULLABLE"})
    with pytest.raises(exceptions.BadRequest, match="not a column of the view"):
        client._connection.api_request("PUT", path, data=body)
    body["schema"]["fields"].pop()
    body["view"] = {"query": "SELECT 2 AS a, 'y' AS b", "useLegacySql": False}
    client._connection.api_request("PUT", path, data=body)  # a new query redefines the view
    assert [tuple(r) for r in client.query(f"SELECT * FROM `{dataset}.v`").result()] == [(2, "y")]


# -- 8. GEOGRAPHY ---------------------------------------------------------------------------------
def test_geography_is_typed_geography_never_string(client: bigquery.Client, dataset: str) -> None:
    # BigQuery answers a GEOGRAPHY column's schema as type GEOGRAPHY (reference
    # TableFieldSchema.type), never STRING; tests/bigquery_geography_test.py has the values.
    spec = bigquery.Table(f"{dataset}.geo", schema=[bigquery.SchemaField("g", "GEOGRAPHY")])
    assert client.create_table(spec).schema[0].field_type == "GEOGRAPHY"
    client.query(f"CREATE TABLE `{dataset}.geo2` (g GEOGRAPHY)").result()
    assert client.get_table(f"{dataset}.geo2").schema[0].field_type == "GEOGRAPHY"
    with pytest.raises(exceptions.BadRequest, match="GEOGRAPHY"):
        client.query("SELECT CAST('POINT(1 2)' AS GEOGRAPHY) AS g").result()


# -- 3. external tables ----------------------------------------------------------------------------
@pytest.mark.parametrize("source_format", ["CSV", "PARQUET", "NEWLINE_DELIMITED_JSON"])
def test_an_external_table_over_missing_files_fails_its_query_by_name(
    client: bigquery.Client, dataset: str, source_format: str
) -> None:
    # BigQuery makes a table over the files (reference ExternalDataConfiguration) with a
    # declared schema before they exist; a query then fails naming the files, never an empty
    # answer (tests/bigquery_external_tables_test.py has the tables that read their files).
    config = bigquery.ExternalConfig(source_format)
    config.source_uris = ["gs://some-bucket/data.csv"]
    spec = bigquery.Table(f"{dataset}.ext", schema=[bigquery.SchemaField("x", "INT64")])
    spec.external_data_configuration = config
    assert client.create_table(spec).table_type == "EXTERNAL"
    with pytest.raises(exceptions.NotFound, match=r"gs://some-bucket/data\.csv"):
        client.query(f"SELECT x FROM `{dataset}.ext`").result()
