"""Multi-statement scripts through google-cloud-bigquery against the local cloud: the parent
job and its child jobs as BigQuery reports them, a failing statement, temporary objects that
end with their script, and scripts refused before any statement runs.
https://cloud.google.com/bigquery/docs/multi-statement-queries
(The answers of single scripts are in tests/googlesql_conformance/scripting.yaml.)"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from google.api_core import exceptions
from google.cloud import bigquery

from vertexkit.context import CloudContext


@pytest.fixture
def client(cloud_context: CloudContext) -> bigquery.Client:
    return cloud_context.bigquery_client()


@pytest.fixture
def dataset(client: bigquery.Client) -> Iterator[str]:
    name = f"scripts_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    yield name
    client.delete_dataset(name, delete_contents=True)


def test_a_script_is_a_parent_job_with_a_child_per_statement(
    client: bigquery.Client, dataset: str
) -> None:
    script = (
        f"DECLARE n INT64 DEFAULT 2; CREATE TABLE {dataset}.t (x INT64); "
        f"INSERT INTO {dataset}.t VALUES (n), (n + 1); SELECT SUM(x) AS total FROM {dataset}.t"
    )
    job = client.query(script)
    assert [row.total for row in job.result()] == [5]
    assert job.statement_type == "SCRIPT"
    assert job.num_child_jobs == 3
    children = list(client.list_jobs(parent_job=job.job_id))
    assert sorted(child.statement_type for child in children) == [
        "CREATE_TABLE",
        "INSERT",
        "SELECT",
    ]
    assert {child.parent_job_id for child in children} == {job.job_id}
    assert all(child.state == "DONE" and child.error_result is None for child in children)
    top_level = {listed.job_id for listed in client.list_jobs(max_results=50)}
    assert job.job_id in top_level and not top_level & {child.job_id for child in children}
    last = next(child for child in children if child.statement_type == "SELECT")
    assert [row.total for row in client.get_job(last.job_id).result()] == [5]


def test_a_failing_statement_fails_the_script_and_keeps_what_ran_before(
    client: bigquery.Client, dataset: str
) -> None:
    client.query_and_wait(f"CREATE TABLE {dataset}.t (x INT64)")
    job = client.query(f"INSERT INTO {dataset}.t VALUES (1); SELECT 1 / 0 AS boom")
    with pytest.raises(exceptions.BadRequest, match="division by zero"):
        job.result()
    assert job.error_result is not None and "division by zero" in job.error_result["message"]
    children = list(client.list_jobs(parent_job=job.job_id))
    assert len(children) == 2
    failed = [child for child in children if child.error_result]
    assert [child.statement_type for child in children if not child.error_result] == ["INSERT"]
    assert len(failed) == 1 and "division by zero" in failed[0].error_result["message"]
    rows = client.query_and_wait(f"SELECT COUNT(*) AS n FROM {dataset}.t")
    assert [row.n for row in rows] == [1]  # each statement commits on its own, as on BigQuery


def test_temporary_tables_and_functions_end_with_their_script(client: bigquery.Client) -> None:
    client.query_and_wait(
        "CREATE TEMP TABLE scratch AS SELECT 1 AS a; "
        "CREATE TEMP FUNCTION plus_one(x INT64) AS (x + 1); SELECT plus_one(a) FROM scratch"
    )
    with pytest.raises(exceptions.BadRequest, match="must be qualified with a dataset"):
        client.query_and_wait("SELECT a FROM scratch")
    with pytest.raises(exceptions.BadRequest, match="Function not found: plus_one"):
        client.query_and_wait("SELECT plus_one(1)")


@pytest.mark.parametrize(
    ("statement", "refusal"),
    [
        ("WHILE TRUE DO SELECT 1; END WHILE", "not supported by the local BigQuery: WHILE"),
        ("BEGIN TRANSACTION", "not supported by the local BigQuery: transactions"),
        ("IF TRUE THEN SELECT 1;", "Expected END but got end of script"),
    ],
    ids=["loop", "transaction", "unclosed_if"],
)
def test_a_refused_script_runs_no_statement(
    client: bigquery.Client, dataset: str, statement: str, refusal: str
) -> None:
    """The whole script is read before its first statement runs: nothing is created."""
    script = f"CREATE TABLE {dataset}.made (x INT64); {statement}"
    with pytest.raises(exceptions.BadRequest, match=refusal):
        client.query_and_wait(script)
    assert [table.table_id for table in client.list_tables(dataset)] == []


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("SET missing = 1; SELECT 1", "Undeclared variable: missing"),
        ("DECLARE x INT64; DECLARE x INT64; SELECT 1", "Variable x is already declared"),
        ("DECLARE x; SELECT 1", "Syntax error"),
    ],
    ids=["set_undeclared", "declared_twice", "declare_without_type"],
)
def test_bad_variables_are_refused_naming_the_variable(
    client: bigquery.Client, script: str, message: str
) -> None:
    with pytest.raises(exceptions.BadRequest, match=message):
        client.query_and_wait(script)
