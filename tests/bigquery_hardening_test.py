"""The local BigQuery under pressure, with google-cloud-bigquery and plain REST against a real
local cloud: job timeouts and cancel, no call stalled by a long query, expiry of anonymous
results and jobs, SQL outside GoogleSQL refused, bad request bodies refused before anything
exists, and a damaged warehouse file refused at start."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from google.api_core import exceptions
from google.cloud import bigquery

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.bigquery.models import DATABASE_FILE, DamagedDatabaseError, Warehouse

# 10^12 rows that must really be summed: never finishes here, so every test that starts it
# ends it itself (job timeout or cancel); nothing depends on how fast the machine is.
ENDLESS = (
    "SELECT SUM(MOD(a * b, 7)) AS n FROM UNNEST(GENERATE_ARRAY(1, 1000000)) AS a, "
    "UNNEST(GENERATE_ARRAY(1, 1000000)) AS b"
)
HOUR = 3600.0
POLL_S = 0.02
POLL_LIMIT = 1500  # polls before a wait for a state change is a failure (30 s)


@pytest.fixture
def client(cloud_context: CloudContext) -> bigquery.Client:
    return cloud_context.bigquery_client()


@pytest.fixture
def dataset(client: bigquery.Client) -> Iterator[str]:
    """A dataset holding one table `t` (x INT64, labels team=a)."""
    name = f"hard_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    table = bigquery.Table(
        f"{client.project}.{name}.t", schema=[bigquery.SchemaField("x", "INT64")]
    )
    table.labels = {"team": "a"}
    client.create_table(table)
    yield name
    client.delete_dataset(name, delete_contents=True, not_found_ok=True)


def wait_until(condition: Callable[[], bool]) -> None:
    for _ in range(POLL_LIMIT):
        if condition():
            return
        time.sleep(POLL_S)
    raise AssertionError("the expected state was never reached")


def job_state(client: bigquery.Client, job_id: str) -> str | None:
    try:
        return str(client.get_job(job_id).state)
    except exceptions.NotFound:
        return None


# -- 1. job timeouts -------------------------------------------------------------------------
def test_job_timeout_interrupts_the_query(client: bigquery.Client) -> None:
    job = client.query(ENDLESS, job_config=bigquery.QueryJobConfig(job_timeout_ms=300))
    with pytest.raises(exceptions.GoogleAPICallError, match=r"Job timed out after 0\.3 sec"):
        job.result()
    job.reload()
    assert job.state == "DONE"
    assert job.error_result["reason"] == "timeout"
    with pytest.raises(exceptions.NotFound):  # the anonymous result was never written
        client.get_table(job.destination)


def test_jobs_query_timeout_answers_incomplete_and_the_job_runs_on(
    client: bigquery.Client, local_cloud: LocalCloud
) -> None:
    url = f"{local_cloud.url}/bigquery/v2/projects/{client.project}"
    body = {"query": ENDLESS, "useLegacySql": False, "timeoutMs": 0}
    answer = requests.post(f"{url}/queries", json=body, timeout=60).json()
    assert answer["jobComplete"] is False
    assert "rows" not in answer and "schema" not in answer
    job_id = answer["jobReference"]["jobId"]
    polled = requests.get(f"{url}/queries/{job_id}", params={"timeoutMs": 0}, timeout=60)
    assert polled.json()["jobComplete"] is False
    assert client.get_job(job_id).state == "RUNNING"  # timeoutMs did not stop it
    client.cancel_job(job_id)
    wait_until(lambda: job_state(client, job_id) == "DONE")
    assert client.get_job(job_id).error_result["reason"] == "stopped"


def test_stopping_the_cloud_ends_a_running_job_failed(tmp_path: Path) -> None:
    with LocalCloud(home=tmp_path) as cloud:
        url = f"{cloud.url}/bigquery/v2/projects/{cloud.project}/queries"
        body = {"query": ENDLESS, "useLegacySql": False, "timeoutMs": 0}
        job_id = requests.post(url, json=body, timeout=60).json()["jobReference"]["jobId"]
    with LocalCloud(home=tmp_path) as cloud:
        job = cloud.context().bigquery_client().get_job(job_id)
        assert job.state == "DONE"  # a restart never finds a job RUNNING
        assert "stopped while the job ran" in job.error_result["message"]


# -- 2. no global lock -------------------------------------------------------------------------
def test_other_calls_answer_while_a_long_query_runs(client: bigquery.Client, dataset: str) -> None:
    events: list[str] = []
    long_id = f"long_{uuid.uuid4().hex}"

    def long_query() -> None:
        config = bigquery.QueryJobConfig(job_timeout_ms=120_000)  # ends a regression
        with pytest.raises(exceptions.GoogleAPICallError, match="cancelled"):
            client.query(ENDLESS, job_id=long_id, job_config=config, job_retry=None).result()
        events.append("long query ended")

    runner = threading.Thread(target=long_query)
    runner.start()
    try:
        wait_until(lambda: job_state(client, long_id) == "RUNNING")
        assert [tuple(row) for row in client.query_and_wait("SELECT 1")] == [(1,)]
        events.append("SELECT 1 answered")
        client.create_dataset(f"{dataset}_beside")
        assert [t.table_id for t in client.list_tables(dataset)] == ["t"]
        events.append("metadata answered")
        assert job_state(client, long_id) == "RUNNING"
    finally:
        client.cancel_job(long_id)
        runner.join()
        client.delete_dataset(f"{dataset}_beside", not_found_ok=True)
    assert events == ["SELECT 1 answered", "metadata answered", "long query ended"]


def test_concurrent_inserts_into_one_table_all_land(client: bigquery.Client, dataset: str) -> None:
    failures: list[Exception] = []

    def insert(value: int) -> None:
        for _ in range(5):
            try:
                client.query(f"INSERT INTO {dataset}.t VALUES ({value})").result()
            except exceptions.GoogleAPICallError as error:
                failures.append(error)

    writers = [threading.Thread(target=insert, args=(value,)) for value in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert failures == []
    counts = client.query_and_wait(f"SELECT x, COUNT(*) AS n FROM {dataset}.t GROUP BY x")
    assert sorted(tuple(row) for row in counts) == [(0, 5), (1, 5), (2, 5), (3, 5)]


# -- 3. expiry ---------------------------------------------------------------------------------
def test_anonymous_results_expire_after_a_day_and_jobs_after_six_months(tmp_path: Path) -> None:
    offset = [0.0]
    with LocalCloud(home=tmp_path) as cloud:
        cloud.bigquery.warehouse.clock = lambda: time.time() + offset[0]
        client = cloud.context().bigquery_client()
        job = client.query("SELECT 1 AS x")
        assert [row.x for row in job.result()] == [1]
        offset[0] = 23 * HOUR
        list(client.list_jobs())  # any call may sweep
        assert client.get_table(job.destination).num_rows == 1
        offset[0] = 25 * HOUR
        list(client.list_jobs())
        with pytest.raises(exceptions.NotFound):
            client.get_table(job.destination)
        assert client.get_job(job.job_id).state == "DONE"  # job history outlives results
        offset[0] = 181 * 24 * HOUR
        list(client.list_jobs())
        with pytest.raises(exceptions.NotFound):
            client.get_job(job.job_id)


@pytest.mark.parametrize(
    "sql", ["SELECT 1 AS x", "SELECT 1 AS x LIMIT 0"], ids=["one_row", "no_rows"]
)
def test_results_of_an_expired_query_are_not_found(tmp_path: Path, sql: str) -> None:
    """getQueryResults answers from the job's record of its result table, yet must still
    notice the table is gone (with and without a page to read)."""
    offset = [0.0]
    with LocalCloud(home=tmp_path) as cloud:
        cloud.bigquery.warehouse.clock = lambda: time.time() + offset[0]
        client = cloud.context().bigquery_client()
        job = client.query(sql)
        job.result()
        offset[0] = 25 * HOUR
        list(client.list_jobs())
        with pytest.raises(exceptions.NotFound, match="query results expired"):
            client._get_query_results(job.job_id, retry=None, project=job.project)


def test_query_results_match_the_result_table(client: bigquery.Client) -> None:
    """The anonymous result table is written without catalog lookups: its schema, row count
    and rows read back through tables.get and tabledata.list are those of getQueryResults."""
    job = client.query("SELECT n, CAST(n AS STRING) AS s FROM UNNEST([3, 1, 2]) AS n ORDER BY n")
    rows = [tuple(row.values()) for row in job.result()]
    table = client.get_table(job.destination)
    assert rows == [(1, "1"), (2, "2"), (3, "3")]
    assert [(f.name, f.field_type, f.mode) for f in table.schema] == [
        (f.name, f.field_type, f.mode) for f in job.result().schema
    ]
    assert table.num_rows == 3 and table.created is not None
    assert [tuple(row.values()) for row in client.list_rows(job.destination)] == rows


def test_queries_recreate_a_deleted_anonymous_dataset(client: bigquery.Client) -> None:
    first = client.query("SELECT 1 AS x")
    first.result()
    client.delete_dataset(first.destination.dataset_id, delete_contents=True)
    second = client.query("SELECT 2 AS x")
    assert [row.x for row in second.result()] == [2]


def test_expired_results_are_swept_at_start(tmp_path: Path) -> None:
    with LocalCloud(home=tmp_path) as cloud:
        job = cloud.context().bigquery_client().query("SELECT 1 AS x")
        job.result()
        destination = job.destination
    later = Warehouse(tmp_path / "bigquery", clock=lambda: time.time() + 25 * HOUR)
    try:
        tables = later.list_tables(destination.project, destination.dataset_id)
        assert destination.table_id not in [name for name, _ in tables]
    finally:
        later.close()


# -- 4. GoogleSQL only -------------------------------------------------------------------------
def test_duckdb_functions_cannot_reach_the_home(
    client: bigquery.Client, local_cloud: LocalCloud
) -> None:
    warehouse_file = local_cloud.home / "bigquery" / DATABASE_FILE
    for sql, refusal in (
        (f"SELECT * FROM read_blob('{warehouse_file}')", "Function not found: read_blob"),
        ("SELECT current_setting('allowed_directories')", "Function not found: current_setting"),
        ("SELECT * FROM pragma_version()", "Function not found: pragma_version"),
        ("PRAGMA version", "not supported by the local BigQuery"),
    ):
        with pytest.raises(exceptions.BadRequest, match=refusal):
            client.query(sql).result()


@pytest.mark.parametrize(
    "sql", ["SELECT REGEXP_REPLACE('a', 'b')", "SELECT REPLACE('a', 'b')", "SELECT SUBSTR('abc')"]
)
def test_a_call_short_of_a_required_argument_is_bigquerys_no_matching_signature(
    client: bigquery.Client, sql: str
) -> None:
    """BigQuery's function reference gives REGEXP_REPLACE and REPLACE three arguments and SUBSTR
    two or three, and BigQuery answers a shorter call with an invalidQuery "No matching signature
    for function ..."; sqlglot 30.31 would run `REGEXP_REPLACE('a', 'b')` as 'a'."""
    with pytest.raises(exceptions.BadRequest, match="No matching signature for function"):
        client.query(sql).result()


# -- 5. bad request bodies -----------------------------------------------------------------------
@dataclass(frozen=True)
class Bad:
    """One refused request: `{ds}` in the path or body is the test's dataset."""

    method: str
    path: str
    field: str  # the message must name it
    body: Any = None
    params: dict[str, str] | None = None


def query_job(**query: Any) -> dict:
    return {"configuration": {"query": {"query": "SELECT 1", "useLegacySql": False, **query}}}


def job_with(**configuration: Any) -> dict:
    return {"configuration": {**query_job()["configuration"], **configuration}}


SIXTY_FIVE_LABELS = {f"k{i}": "v" for i in range(65)}
OK_QUERY = {"query": "SELECT 1", "useLegacySql": False}
BAD = {
    "job_unknown_configuration_field": Bad(
        "POST", "/jobs", "Unknown name \"foo\" at 'job.configuration'", job_with(foo=1)
    ),
    "job_unknown_query_field": Bad(
        "POST", "/jobs", "Unknown name \"bar\" at 'job.configuration.query'", query_job(bar=1)
    ),
    "job_unknown_load_field": Bad(
        "POST",
        "/jobs",
        "Unknown name \"sourceUri\" at 'job.configuration.load'",
        {"configuration": {"load": {"sourceUri": "gs://b/x.csv"}}},
    ),
    "job_unknown_top_field": Bad(
        "POST", "/jobs", "Unknown name \"foo\" at 'job'", {**query_job(), "foo": 1}
    ),
    "job_configuration_string": Bad(
        "POST", "/jobs", "job.configuration", {"configuration": "oops"}
    ),
    "job_query_config_string": Bad(
        "POST", "/jobs", "job.configuration.query", {"configuration": {"query": "SELECT 1"}}
    ),
    "job_timeout_negative": Bad("POST", "/jobs", "jobTimeoutMs", job_with(jobTimeoutMs="-5")),
    "job_timeout_text": Bad("POST", "/jobs", "jobTimeoutMs", job_with(jobTimeoutMs="soon")),
    "job_label_upper_case": Bad(
        "POST", "/jobs", "configuration.labels.Team", job_with(labels={"Team": "a"})
    ),
    "job_id_with_space": Bad(
        "POST", "/jobs", "jobReference.jobId", {**query_job(), "jobReference": {"jobId": "a b"}}
    ),
    "job_destination_string": Bad(
        "POST", "/jobs", "destinationTable", query_job(destinationTable="oops")
    ),
    "job_destination_bad_table_id": Bad(
        "POST",
        "/jobs",
        "destinationTable.tableId",
        query_job(destinationTable={"datasetId": "{ds}", "tableId": "a/b"}),
    ),
    "job_legacy_sql_text": Bad("POST", "/jobs", "useLegacySql", query_job(useLegacySql="no")),
    "job_query_number": Bad("POST", "/jobs", "configuration.query.query", query_job(query=5)),
    "job_default_dataset_bad_id": Bad(
        "POST", "/jobs", "defaultDataset.datasetId", query_job(defaultDataset={"datasetId": "a-b"})
    ),
    "job_copy_sources_string": Bad(
        "POST",
        "/jobs",
        "sourceTables",
        {"configuration": {"copy": {"sourceTables": "x", "destinationTable": "y"}}},
    ),
    "job_extract_uris_string": Bad(
        "POST",
        "/jobs",
        "destinationUris",
        {"configuration": {"extract": {"destinationUris": "gs://b/x"}}},
    ),
    "query_unknown_field": Bad("POST", "/queries", 'Unknown name "foo"', {**OK_QUERY, "foo": 1}),
    "query_max_results_negative": Bad(
        "POST", "/queries", "maxResults", {**OK_QUERY, "maxResults": -5}
    ),
    "query_timeout_negative": Bad("POST", "/queries", "timeoutMs", {**OK_QUERY, "timeoutMs": -1}),
    "query_job_timeout_text": Bad(
        "POST", "/queries", "jobTimeoutMs", {**OK_QUERY, "jobTimeoutMs": "soon"}
    ),
    "query_too_many_labels": Bad(
        "POST", "/queries", "labels", {**OK_QUERY, "labels": SIXTY_FIVE_LABELS}
    ),
    "query_default_dataset_string": Bad(
        "POST", "/queries", "defaultDataset", {**OK_QUERY, "defaultDataset": "oops"}
    ),
    "dataset_reference_string": Bad(
        "POST", "/datasets", "dataset.datasetReference", {"datasetReference": "oops"}
    ),
    "dataset_reference_without_id": Bad(
        "POST", "/datasets", "datasetReference.datasetId", {"datasetReference": {}}
    ),
    "dataset_id_with_hyphen": Bad(
        "POST",
        "/datasets",
        "datasetReference.datasetId",
        {"datasetReference": {"datasetId": "a-b"}},
    ),
    "dataset_id_too_long": Bad(
        "POST",
        "/datasets",
        "datasetReference.datasetId",
        {"datasetReference": {"datasetId": "d" * 1025}},
    ),
    "dataset_label_upper_case": Bad(
        "POST",
        "/datasets",
        "labels.Env",
        {"datasetReference": {"datasetId": "{ds}_new"}, "labels": {"Env": "x"}},
    ),
    "dataset_label_starts_with_digit": Bad(
        "POST",
        "/datasets",
        "labels.1x",
        {"datasetReference": {"datasetId": "{ds}_new"}, "labels": {"1x": "y"}},
    ),
    "dataset_label_value_too_long": Bad(
        "POST",
        "/datasets",
        "labels.env",
        {"datasetReference": {"datasetId": "{ds}_new"}, "labels": {"env": "v" * 64}},
    ),
    "dataset_label_value_number": Bad(
        "POST",
        "/datasets",
        "labels.env",
        {"datasetReference": {"datasetId": "{ds}_new"}, "labels": {"env": 5}},
    ),
    "dataset_too_many_labels": Bad(
        "POST",
        "/datasets",
        "labels",
        {"datasetReference": {"datasetId": "{ds}_new"}, "labels": SIXTY_FIVE_LABELS},
    ),
    "dataset_unknown_field": Bad(
        "POST",
        "/datasets",
        "Unknown name \"foo\" at 'dataset'",
        {"datasetReference": {"datasetId": "{ds}_new"}, "foo": 1},
    ),
    "dataset_body_list": Bad("POST", "/datasets", "'dataset'", []),
    "dataset_patch_bad_label": Bad(
        "PATCH", "/datasets/{ds}", "labels.Team", {"labels": {"Team": "b"}}
    ),
    "dataset_patch_unknown_field": Bad(
        "PATCH", "/datasets/{ds}", 'Unknown name "foo"', {"foo": 1, "labels": {"team": "b"}}
    ),
    "table_reference_string": Bad(
        "POST", "/datasets/{ds}/tables", "table.tableReference", {"tableReference": "oops"}
    ),
    "table_id_with_slash": Bad(
        "POST",
        "/datasets/{ds}/tables",
        "tableReference.tableId",
        {"tableReference": {"datasetId": "{ds}", "tableId": "a/b"}},
    ),
    "table_id_too_long": Bad(
        "POST",
        "/datasets/{ds}/tables",
        "tableReference.tableId",
        {"tableReference": {"datasetId": "{ds}", "tableId": "t" * 1025}},
    ),
    "table_label_upper_case": Bad(
        "POST",
        "/datasets/{ds}/tables",
        "labels.Bad",
        {
            "tableReference": {"datasetId": "{ds}", "tableId": "n"},
            "schema": {"fields": [{"name": "x", "type": "INT64"}]},
            "labels": {"Bad": "x"},
        },
    ),
    "table_unknown_field": Bad(
        "POST",
        "/datasets/{ds}/tables",
        "Unknown name \"foo\" at 'table'",
        {"tableReference": {"datasetId": "{ds}", "tableId": "n"}, "foo": 1},
    ),
    "table_schema_fields_string": Bad(
        "POST",
        "/datasets/{ds}/tables",
        "schema.fields",
        {"tableReference": {"datasetId": "{ds}", "tableId": "n"}, "schema": {"fields": "x"}},
    ),
    "table_patch_bad_label": Bad(
        "PATCH", "/datasets/{ds}/tables/t", "labels.Team", {"labels": {"Team": "b"}}
    ),
    "list_datasets_max_results_negative": Bad(
        "GET", "/datasets", "maxResults", params={"maxResults": "-5"}
    ),
    "list_tables_max_results_negative": Bad(
        "GET", "/datasets/{ds}/tables", "maxResults", params={"maxResults": "-5"}
    ),
    "table_data_max_results_negative": Bad(
        "GET", "/datasets/{ds}/tables/t/data", "maxResults", params={"maxResults": "-5"}
    ),
    "list_jobs_max_results_text": Bad("GET", "/jobs", "maxResults", params={"maxResults": "abc"}),
    "list_datasets_page_token_text": Bad(
        "GET", "/datasets", "pageToken", params={"pageToken": "abc"}
    ),
}


def _fill(value: Any, dataset: str) -> Any:
    if isinstance(value, str):
        return value.replace("{ds}", dataset)
    if isinstance(value, dict):
        return {key: _fill(item, dataset) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, dataset) for item in value]
    return value


def everything(client: bigquery.Client, dataset: str) -> dict[str, Any]:
    """What a refused request must leave as it was."""
    return {
        "datasets": sorted(d.dataset_id for d in client.list_datasets(include_all=True)),
        "tables": sorted(t.table_id for t in client.list_tables(dataset)),
        "jobs": sorted(j.job_id for j in client.list_jobs()),
        "dataset labels": client.get_dataset(dataset).labels,
        "table labels": client.get_table(f"{dataset}.t").labels,
    }


@pytest.mark.parametrize("bad", BAD.values(), ids=BAD.keys())
def test_bad_request_is_refused_before_anything_exists(
    bad: Bad, client: bigquery.Client, dataset: str, local_cloud: LocalCloud
) -> None:
    before = everything(client, dataset)
    url = f"{local_cloud.url}/bigquery/v2/projects/{client.project}{_fill(bad.path, dataset)}"
    answer = requests.request(
        bad.method, url, json=_fill(bad.body, dataset), params=bad.params, timeout=60
    )
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert bad.field in error["message"]
    assert everything(client, dataset) == before


# -- 6. a damaged warehouse file ----------------------------------------------------------------
@pytest.mark.parametrize("content", [b"", b"not a duckdb file" * 512], ids=["empty", "garbage"])
def test_damaged_warehouse_stops_the_start(tmp_path: Path, content: bytes) -> None:
    database = tmp_path / "bigquery" / DATABASE_FILE
    database.parent.mkdir(parents=True)
    database.write_bytes(content)
    cloud = LocalCloud(home=tmp_path)
    try:
        with pytest.raises(DamagedDatabaseError, match=str(database)) as refused:
            cloud.start()
    finally:
        cloud.stop()
    backup = refused.value.backup
    assert backup is not None and str(backup) in str(refused.value)
    assert backup.name.startswith(f"{DATABASE_FILE}.damaged-")
    assert backup.read_bytes() == content
    assert database.read_bytes() == content  # left for the user to restore, never emptied


def _home_with_a_table(home: Path) -> Path:
    """A home whose warehouse holds a dataset and a table, written by the local cloud."""
    with LocalCloud(home=home) as cloud:
        client = cloud.context().bigquery_client()
        client.create_dataset("kept")
        client.query("CREATE TABLE kept.rows AS SELECT x FROM UNNEST([1, 2, 3]) AS x").result()
    return home / "bigquery" / DATABASE_FILE


@pytest.mark.parametrize("keep", [0.0, 0.5], ids=["zero", "half"])
def test_a_cut_warehouse_stops_local_up(tmp_path: Path, keep: float) -> None:
    """Truncated to zero or to half its length, the file is refused at start: `local up` exits
    non-zero naming the file, and keeps one copy however often it is tried (the second try finds
    the same damage and names the same copy). An empty file is found before any export line; a
    cut that keeps DuckDB's header is found by DuckDB, which loads once the port answers (the
    exports may have printed; the command still ends with the error)."""
    database = _home_with_a_table(tmp_path / "home")
    with database.open("r+b") as file:
        file.truncate(int(database.stat().st_size * keep))
    command = [sys.executable, "-m", "vertexkit.cli", "local", "up",
               "--home", str(tmp_path / "home"), "--port", "0"]  # fmt: skip
    for _ in range(2):
        refused = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        assert refused.returncode != 0
        assert keep or "export " not in refused.stdout
        assert str(database) in refused.stderr and "is damaged (it is " in refused.stderr
    copies = list(database.parent.glob(f"{DATABASE_FILE}.damaged-*"))
    assert len(copies) == 1
    assert copies[0].read_bytes() == database.read_bytes()  # the cut file, left as it was
