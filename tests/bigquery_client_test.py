"""google-cloud-bigquery against the local BigQuery: queries, parameters, loads, extracts, copies,
paging, DDL/DML, errors, dtypes and restart persistence."""

from __future__ import annotations

import datetime
import decimal
import io
import json
import uuid
from collections.abc import Iterator

import pandas as pd
import pyarrow.parquet as pq
import pytest
from google.api_core import exceptions
from google.cloud import bigquery

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud

PENGUINS = "bigquery-public-data.ml_datasets.penguins"


@pytest.fixture
def client(cloud_context: CloudContext) -> bigquery.Client:
    return cloud_context.bigquery_client()


@pytest.fixture
def dataset(client: bigquery.Client) -> Iterator[str]:
    name = f"ds_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    yield f"{client.project}.{name}"
    client.delete_dataset(name, delete_contents=True, not_found_ok=True)


def frame(client: bigquery.Client, sql: str, **config: object) -> pd.DataFrame:
    job_config = bigquery.QueryJobConfig(**config) if config else None
    return client.query(sql, job_config=job_config).to_dataframe(create_bqstorage_client=False)


def test_penguins_seed_matches_public_table(client: bigquery.Client) -> None:
    table = client.get_table(PENGUINS)
    assert [f.name for f in table.schema] == [
        "species",
        "island",
        "culmen_length_mm",
        "culmen_depth_mm",
        "flipper_length_mm",
        "body_mass_g",
        "sex",
    ]
    assert table.num_rows == 344
    counts = frame(client, f"SELECT species, COUNT(*) AS n FROM `{PENGUINS}` GROUP BY species")
    assert dict(zip(counts.species, counts.n, strict=True)) == {
        "Adelie Penguin (Pygoscelis adeliae)": 152,
        "Gentoo penguin (Pygoscelis papua)": 124,
        "Chinstrap penguin (Pygoscelis antarctica)": 68,
    }
    sexes = frame(client, f"SELECT DISTINCT sex FROM `{PENGUINS}` WHERE sex IS NOT NULL")
    assert sorted(sexes.sex) == ["FEMALE", "MALE"]


def test_public_dataset_is_read_only(client: bigquery.Client) -> None:
    with pytest.raises(exceptions.Forbidden):
        client.delete_table(PENGUINS)


def test_query_and_wait_fast_path(client: bigquery.Client) -> None:
    rows = client.query_and_wait(f"SELECT COUNT(*) AS n FROM `{PENGUINS}` WHERE island = 'Dream'")
    assert [row.n for row in rows] == [124]


def test_every_type_has_bigquery_dtype(client: bigquery.Client) -> None:
    df = frame(
        client,
        """SELECT 1 AS i, 1.5 AS f, NUMERIC '1.25' AS n, BIGNUMERIC '2.5' AS bn, TRUE AS b,
        'x' AS s, b'\\x00\\x01' AS by, DATE '2024-02-29' AS d,
        DATETIME '2024-01-02 03:04:05.123456' AS dt, TIME '10:11:12.5' AS t,
        TIMESTAMP '2024-01-02 03:04:05.25+00' AS ts, JSON '{"a": [1, 2]}' AS j,
        [1, 2, 3] AS arr, STRUCT(1 AS a, 'z' AS b) AS st""",
    )
    dtypes = {name: str(dtype) for name, dtype in df.dtypes.items()}
    assert dtypes["i"] == "Int64"
    assert dtypes["f"] == "float64"
    assert dtypes["b"] == "boolean"
    assert dtypes["d"] == "dbdate"
    assert dtypes["dt"] == "datetime64[us]"
    assert dtypes["t"] == "dbtime"
    assert dtypes["ts"] == "datetime64[us, UTC]"
    row = df.iloc[0]
    assert row.n == decimal.Decimal("1.25") and row.bn == decimal.Decimal("2.5")
    assert row.by == b"\x00\x01"
    assert row.ts == pd.Timestamp("2024-01-02 03:04:05.25", tz="UTC")
    assert row["dt"] == pd.Timestamp("2024-01-02 03:04:05.123456")
    assert row["t"] == datetime.time(10, 11, 12, 500000)
    assert json.loads(row.j) == {"a": [1, 2]}
    assert list(row.arr) == [1, 2, 3]
    assert row.st == {"a": 1, "b": "z"}
    schema = {
        f.name: (f.field_type, f.mode) for f in client.query("SELECT [1] AS a").result().schema
    }
    assert schema == {"a": ("INTEGER", "REPEATED")}


def test_named_and_positional_parameters(client: bigquery.Client) -> None:
    named = frame(
        client,
        f"SELECT COUNT(*) AS n FROM `{PENGUINS}` WHERE island = @island AND body_mass_g > @mass "
        "AND species IN UNNEST(@species)",
        query_parameters=[
            bigquery.ScalarQueryParameter("island", "STRING", "Biscoe"),
            bigquery.ScalarQueryParameter("mass", "FLOAT64", 4000.0),
            bigquery.ArrayQueryParameter(
                "species", "STRING", ["Gentoo penguin (Pygoscelis papua)"]
            ),
        ],
    )
    everything = frame(
        client,
        f"SELECT COUNT(*) AS n FROM `{PENGUINS}` WHERE island = 'Biscoe' AND body_mass_g > 4000 "
        "AND species LIKE 'Gentoo%'",
    )
    assert named.n[0] == everything.n[0] > 0
    positional = frame(
        client,
        "SELECT ? + 1 AS a, ? AS d, ? AS ts",
        query_parameters=[
            bigquery.ScalarQueryParameter(None, "INT64", 41),
            bigquery.ScalarQueryParameter(None, "DATE", datetime.date(2024, 5, 6)),
            bigquery.ScalarQueryParameter(
                None, "TIMESTAMP", datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
            ),
        ],
    )
    assert positional.a[0] == 42
    assert positional.d[0] == datetime.date(2024, 5, 6)
    assert positional.ts[0] == pd.Timestamp("2024-01-01", tz="UTC")
    struct = frame(
        client,
        "SELECT @p.x AS x",
        query_parameters=[
            bigquery.StructQueryParameter("p", bigquery.ScalarQueryParameter("x", "INT64", 7))
        ],
    )
    assert struct.x[0] == 7


def test_ddl_and_dml(client: bigquery.Client, dataset: str) -> None:
    client.query(f"CREATE TABLE `{dataset}.t` (id INT64, v STRING)").result()
    insert = client.query(f"INSERT INTO `{dataset}.t` VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    insert.result()
    assert insert.num_dml_affected_rows == 3 and insert.statement_type == "INSERT"
    update = client.query(f"UPDATE `{dataset}.t` SET v = 'z' WHERE id >= 2")
    update.result()
    assert update.num_dml_affected_rows == 2
    client.query(f"CREATE TABLE `{dataset}.s` AS SELECT 3 AS id, 'm' AS v UNION ALL SELECT 4, 'n'")
    merge = client.query(
        f"MERGE `{dataset}.t` T USING `{dataset}.s` S ON T.id = S.id "
        "WHEN MATCHED THEN UPDATE SET v = S.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (id, v)"
    )
    merge.result()
    assert merge.num_dml_affected_rows == 2
    client.query(f"DELETE FROM `{dataset}.t` WHERE id = 1").result()
    rows = frame(client, f"SELECT id, v FROM `{dataset}.t` ORDER BY id")
    assert rows.values.tolist() == [[2, "z"], [3, "m"], [4, "n"]]
    with pytest.raises(exceptions.Conflict):
        client.query(f"CREATE TABLE `{dataset}.t` (x INT64)").result()
    client.query(f"CREATE OR REPLACE TABLE `{dataset}.t` AS SELECT 1 AS only").result()
    assert [f.name for f in client.get_table(f"{dataset}.t").schema] == ["only"]
    client.query(f"DROP TABLE `{dataset}.t`").result()
    with pytest.raises(exceptions.NotFound):
        client.get_table(f"{dataset}.t")


def test_create_table_with_column_list_as_query(client: bigquery.Client, dataset: str) -> None:
    # https://cloud.google.com/bigquery/docs/reference/standard-sql/data-definition-language
    # #create_table_statement: the column list's names (and modes), the query's columns by
    # position.
    job = client.query(
        f"CREATE TABLE `{dataset}.listed` (x STRING NOT NULL, n INT64) AS SELECT 'a' AS p, 1 AS q"
    )
    job.result()
    assert job.statement_type == "CREATE_TABLE_AS_SELECT"
    schema = client.get_table(f"{dataset}.listed").schema
    assert [(f.name, f.field_type, f.mode) for f in schema] == [
        ("x", "STRING", "REQUIRED"),
        ("n", "INTEGER", "NULLABLE"),
    ]
    assert frame(client, f"SELECT * FROM `{dataset}.listed`").values.tolist() == [["a", 1]]
    with pytest.raises(exceptions.BadRequest):  # a NULL for the NOT NULL column
        client.query(f"CREATE TABLE `{dataset}.nulls` (x STRING NOT NULL) AS SELECT NULL").result()
    with pytest.raises(exceptions.NotFound):  # and the failed statement made no table
        client.get_table(f"{dataset}.nulls")


def test_destination_table_and_write_dispositions(client: bigquery.Client, dataset: str) -> None:
    destination = f"{dataset}.dest"
    run = lambda disposition: client.query(  # noqa: E731
        "SELECT 1 AS x",
        job_config=bigquery.QueryJobConfig(destination=destination, write_disposition=disposition),
    ).result()
    run("WRITE_EMPTY")
    run("WRITE_APPEND")
    assert client.get_table(destination).num_rows == 2
    with pytest.raises(exceptions.Conflict):
        run("WRITE_EMPTY")
    run("WRITE_TRUNCATE")
    assert client.get_table(destination).num_rows == 1
    with pytest.raises(exceptions.BadRequest, match="writeDisposition"):
        client.query(
            "SELECT 1",
            job_config=bigquery.QueryJobConfig(destination=destination, write_disposition="NOPE"),
        )


def test_default_dataset(client: bigquery.Client, dataset: str) -> None:
    client.query(f"CREATE TABLE `{dataset}.u` AS SELECT 5 AS x").result()
    df = frame(client, "SELECT x FROM u", default_dataset=dataset)
    assert df.x.tolist() == [5]


def test_list_rows_paging(client: bigquery.Client, dataset: str) -> None:
    client.query(
        f"CREATE TABLE `{dataset}.p` AS SELECT x FROM UNNEST(GENERATE_ARRAY(1, 2345)) AS x"
    ).result()
    rows = client.list_rows(f"{dataset}.p", page_size=1000)
    pages = [[row.x for row in page] for page in rows.pages]
    assert [len(page) for page in pages] == [1000, 1000, 345]
    assert [x for page in pages for x in page] == list(range(1, 2346))
    tail = client.list_rows(f"{dataset}.p", start_index=2340, max_results=100)
    assert [row.x for row in tail] == [2341, 2342, 2343, 2344, 2345]
    result = client.query(f"SELECT x FROM `{dataset}.p` ORDER BY x").result(page_size=500)
    assert sum(1 for _ in result) == 2345


def test_empty_result_page_omits_rows(client: bigquery.Client) -> None:
    df = frame(client, f"SELECT * FROM `{PENGUINS}` WHERE FALSE")
    assert len(df) == 0 and df.columns[0] == "species"


def test_errors(client: bigquery.Client, dataset: str) -> None:
    table_id = dataset.replace(".", ":", 1) + ".nope"
    with pytest.raises(exceptions.NotFound, match=f"Table {table_id} was not found in location US"):
        client.query(f"SELECT * FROM `{dataset}.nope`").result()
    with pytest.raises(exceptions.NotFound, match="Dataset local-project:nope_ds was not found"):
        client.query("SELECT * FROM nope_ds.t").result()
    with pytest.raises(exceptions.BadRequest, match="Unrecognized name: missing"):
        client.query(f"SELECT missing FROM `{PENGUINS}`").result()
    with pytest.raises(exceptions.BadRequest, match="Syntax error"):
        client.query("SELEC 1").result()
    with pytest.raises(exceptions.BadRequest):
        client.query("SELECT 1 + 'a'").result()
    with pytest.raises(exceptions.BadRequest, match="not supported by the local BigQuery"):
        client.query(f"SELECT SOUNDEX(species) FROM `{PENGUINS}`").result()
    with pytest.raises(exceptions.BadRequest, match="Legacy SQL"):
        client.query("SELECT 1", job_config=bigquery.QueryJobConfig(use_legacy_sql=True)).result()
    with pytest.raises(exceptions.NotFound):
        client.create_table(
            bigquery.Table(
                f"{client.project}.no_such_ds.t", schema=[bigquery.SchemaField("x", "INT64")]
            )
        )
    with pytest.raises(exceptions.Conflict):
        client.create_dataset(dataset.split(".")[1])
    with pytest.raises(exceptions.BadRequest, match="unknown type"):
        client.create_table(
            bigquery.Table(f"{dataset}.bad", schema=[bigquery.SchemaField("x", "INTEGRAL")])
        )


def test_sql_cannot_read_local_files(client: bigquery.Client) -> None:
    for sql in (
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/hostname')",
    ):
        # Refused before DuckDB sees it: read_csv/read_text are not GoogleSQL functions.
        with pytest.raises(exceptions.BadRequest, match="Function not found: read_"):
            client.query(sql).result()


def test_table_crud(client: bigquery.Client, dataset: str) -> None:
    schema = [
        bigquery.SchemaField("id", "INT64", mode="REQUIRED"),
        bigquery.SchemaField("tags", "STRING", mode="REPEATED"),
        bigquery.SchemaField(
            "rec", "RECORD", fields=[bigquery.SchemaField("a", "FLOAT64", description="aa")]
        ),
    ]
    table = client.create_table(bigquery.Table(f"{dataset}.crud", schema=schema))
    assert [(f.name, f.field_type, f.mode) for f in table.schema] == [
        ("id", "INTEGER", "REQUIRED"),
        ("tags", "STRING", "REPEATED"),
        ("rec", "RECORD", "NULLABLE"),
    ]
    assert table.schema[2].fields[0].description == "aa"
    table.description = "hello"
    table.schema = [*table.schema, bigquery.SchemaField("extra", "STRING")]
    table = client.update_table(table, ["description", "schema"])
    assert table.description == "hello" and table.schema[-1].name == "extra"
    assert [t.table_id for t in client.list_tables(dataset)] == ["crud"]
    client.delete_table(table)
    assert list(client.list_tables(dataset)) == []
    with pytest.raises(exceptions.BadRequest, match=r"still in use|deleteContents"):
        client.create_table(bigquery.Table(f"{dataset}.again", schema=schema))
        client.delete_dataset(dataset)


def test_load_from_dataframe(client: bigquery.Client, dataset: str) -> None:
    source = pd.DataFrame(
        {
            "i": pd.array([1, None, 3], dtype="Int64"),
            "f": [0.5, 1.5, float("nan")],
            "s": ["a", "b", None],
            "ts": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03"], utc=True),
        }
    )
    job = client.load_table_from_dataframe(source, f"{dataset}.from_df")
    job.result()
    assert job.output_rows == 3
    back = client.list_rows(f"{dataset}.from_df").to_dataframe(create_bqstorage_client=False)
    assert back.i.tolist()[0] == 1 and pd.isna(back.i[1])
    assert back.ts.dtype == "datetime64[us, UTC]"
    assert back.s.tolist()[:2] == ["a", "b"]


def test_load_resumable_upload(client: bigquery.Client, dataset: str) -> None:
    # > 5 MB goes through the client's resumable upload instead of multipart.
    lines = "".join(f"{i},name_{i:08d}_{'x' * 40}\n" for i in range(120_000)).encode()
    config = bigquery.LoadJobConfig(
        schema=[bigquery.SchemaField("id", "INT64"), bigquery.SchemaField("name", "STRING")],
        source_format="CSV",
    )
    job = client.load_table_from_file(io.BytesIO(lines), f"{dataset}.big", job_config=config)
    job.result()
    assert job.output_rows == 120_000
    assert client.get_table(f"{dataset}.big").num_rows == 120_000


def test_load_from_uri_with_wildcard(
    client: bigquery.Client, dataset: str, local_cloud: LocalCloud
) -> None:
    storage = local_cloud.services[0]
    bucket = f"load-{uuid.uuid4().hex[:8]}"
    storage.ensure_bucket(bucket)
    storage.write_object(bucket, "csv/part-1.csv", b"id,name\n1,a\n2,b\n")
    storage.write_object(bucket, "csv/part-2.csv", b"id,name\n3,c\n")
    storage.write_object(bucket, "other.csv", b"id,name\n9,z\n")
    storage.write_object(bucket, "rows.json", b'{"id": 1, "tags": ["x"]}\n{"id": 2, "tags": []}\n')
    csv_config = bigquery.LoadJobConfig(source_format="CSV", skip_leading_rows=1, autodetect=True)
    client.load_table_from_uri(
        f"gs://{bucket}/csv/*.csv", f"{dataset}.csv", job_config=csv_config
    ).result()
    df = frame(client, f"SELECT id, name FROM `{dataset}.csv` ORDER BY id")
    assert df.values.tolist() == [[1, "a"], [2, "b"], [3, "c"]]
    json_config = bigquery.LoadJobConfig(
        source_format="NEWLINE_DELIMITED_JSON",
        schema=[
            bigquery.SchemaField("id", "INT64"),
            bigquery.SchemaField("tags", "STRING", mode="REPEATED"),
        ],
    )
    client.load_table_from_uri(f"gs://{bucket}/rows.json", f"{dataset}.js", job_config=json_config)
    rows = list(client.list_rows(f"{dataset}.js"))
    assert [(row.id, row.tags) for row in rows] == [(1, ["x"]), (2, [])]
    with pytest.raises(exceptions.NotFound):
        client.load_table_from_uri(f"gs://{bucket}/nothing*.csv", f"{dataset}.x").result()


def test_extract_and_copy(client: bigquery.Client, dataset: str, local_cloud: LocalCloud) -> None:
    storage = local_cloud.services[0]
    bucket = f"extract-{uuid.uuid4().hex[:8]}"
    storage.ensure_bucket(bucket)
    client.extract_table(
        PENGUINS,
        f"gs://{bucket}/penguins/*.parquet",
        job_config=bigquery.ExtractJobConfig(destination_format="PARQUET"),
    ).result()
    shard = storage.object_path(bucket, "penguins/000000000000.parquet")
    table = pq.read_table(shard)
    assert table.num_rows == 344 and "culmen_length_mm" in table.column_names
    client.extract_table(PENGUINS, f"gs://{bucket}/p.csv").result()
    assert storage.read_object(bucket, "p.csv").decode().splitlines()[0].startswith("species,")
    client.extract_table(
        PENGUINS,
        f"gs://{bucket}/p.json.gz",
        job_config=bigquery.ExtractJobConfig(
            destination_format="NEWLINE_DELIMITED_JSON", compression="GZIP"
        ),
    ).result()
    assert storage.read_object(bucket, "p.json.gz")[:2] == b"\x1f\x8b"
    copy = client.copy_table(PENGUINS, f"{dataset}.penguins_copy")
    copy.result()
    assert client.get_table(f"{dataset}.penguins_copy").num_rows == 344
    with pytest.raises(exceptions.NotFound):
        client.extract_table(PENGUINS, "gs://no-such-bucket-here/x.csv").result()


def test_query_and_wait_labels_the_job(client: bigquery.Client) -> None:
    # jobs.query's QueryRequest.labels are "the labels associated with this query ... applied
    # to the job" (REST reference, jobs.query); the client sends them there from job_config.
    labels = {"team": "ml", "run": "nightly"}
    rows = client.query_and_wait("SELECT 1 AS x", job_config=bigquery.QueryJobConfig(labels=labels))
    assert [tuple(row) for row in rows] == [(1,)]
    assert client.get_job(rows.job_id).labels == labels


def test_jobs_get_list_cancel(client: bigquery.Client) -> None:
    job = client.query("SELECT 1 AS x", job_id=f"j_{uuid.uuid4().hex}")
    job.result()
    again = client.get_job(job.job_id)
    assert again.state == "DONE" and again.statement_type == "SELECT"
    assert job.job_id in [j.job_id for j in client.list_jobs(max_results=50)]
    assert client.cancel_job(job.job_id).state == "DONE"
    with pytest.raises(exceptions.Conflict):
        client.query("SELECT 1", job_id=job.job_id)
    client.delete_job_metadata(job.job_id)
    with pytest.raises(exceptions.NotFound):
        client.get_job(job.job_id)


def test_restart_persistence(tmp_path: object) -> None:
    home = str(tmp_path)
    with LocalCloud(home=home) as cloud:
        client = cloud.context().bigquery_client()
        client.create_dataset("keep")
        job = client.query("CREATE TABLE keep.t AS SELECT 42 AS answer")
        job.result()
    with LocalCloud(home=home) as cloud:
        client = cloud.context().bigquery_client()
        rows = client.query_and_wait("SELECT answer FROM keep.t")
        assert [row.answer for row in rows] == [42]
        assert client.get_job(job.job_id).state == "DONE"


def test_dry_run_validates_without_running_or_storing(client: bigquery.Client) -> None:
    jobs_before = len(list(client.list_jobs()))
    ok = client.query(
        "SELECT species, COUNT(*) AS n FROM `bigquery-public-data.ml_datasets.penguins` "
        "GROUP BY species",
        job_config=bigquery.QueryJobConfig(dry_run=True, use_query_cache=False),
    )
    assert ok.state == "DONE" and ok.dry_run
    assert len(list(client.list_jobs())) == jobs_before  # a dry run creates no job
    with pytest.raises(exceptions.NotFound, match="nope"):
        client.query(
            "SELECT * FROM `local-project.nope.missing`",
            job_config=bigquery.QueryJobConfig(dry_run=True),
        )
    with pytest.raises(exceptions.BadRequest, match="Unrecognized name"):
        client.query(
            "SELECT no_such_column FROM `bigquery-public-data.ml_datasets.penguins`",
            job_config=bigquery.QueryJobConfig(dry_run=True),
        )
