"""Table functions (routineType TABLE_VALUED_FUNCTION) through google-cloud-bigquery against the
local cloud: made by CREATE TABLE FUNCTION or client.create_routine, called in FROM, read,
listed, dropped, kept across a restart; a call that does not match is refused naming it.

Expected values come from BigQuery's "Table functions" page
(https://cloud.google.com/bigquery/docs/table-functions, "TF page" below) and the CREATE TABLE
FUNCTION statement of the DDL reference
(https://cloud.google.com/bigquery/docs/reference/standard-sql/data-definition-language
#create_table_function_statement, "DDL reference" below)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from google.api_core import exceptions
from google.cloud import bigquery
from google.cloud.bigquery.routine import Routine, RoutineArgument

from vertexkit.local import LocalCloud

INT64 = bigquery.StandardSqlDataType(type_kind=bigquery.StandardSqlTypeNames.INT64)
STRING = bigquery.StandardSqlDataType(type_kind=bigquery.StandardSqlTypeNames.STRING)
# the TF page's example rows, a small stand-in for bigquery-public-data.usa_names
NAMES = (
    "SELECT 1950 AS year, 'James' AS name, 86447 AS number UNION ALL SELECT 1950, 'Robert', 83717"
    " UNION ALL SELECT 1950, 'Linda', 80498 UNION ALL SELECT 1951, 'James', 10"
)


@pytest.fixture(scope="module")
def client(local_cloud: LocalCloud) -> bigquery.Client:
    return local_cloud.context().bigquery_client()


@pytest.fixture
def dataset(client: bigquery.Client) -> str:
    name = f"tvf_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    client.query_and_wait(f"CREATE TABLE {name}.usa_names AS {NAMES}")
    return name


def names_by_year(client: bigquery.Client, dataset: str) -> bigquery.QueryJob:
    """The TF page's mydataset.names_by_year, over the dataset's usa_names."""
    job = client.query(
        f"CREATE OR REPLACE TABLE FUNCTION {dataset}.names_by_year(y INT64) AS ("
        f" SELECT year, name, SUM(number) AS total FROM {dataset}.usa_names"
        " WHERE year = y GROUP BY year, name)"
    )
    job.result()
    return job


def test_create_table_function_and_call_it_in_from(client: bigquery.Client, dataset: str) -> None:
    job = names_by_year(client, dataset)
    # JobStatistics2.statementType CREATE_TABLE_FUNCTION, a target routine (REST reference)
    assert job.statement_type == "CREATE_TABLE_FUNCTION"
    assert job.ddl_target_routine.routine_id == "names_by_year"
    rows = client.query_and_wait(
        f"SELECT * FROM {dataset}.names_by_year(1950) ORDER BY total DESC LIMIT 5"
    )
    # TF page: the 1950 rows, largest total first (James 86447, Robert 83717, Linda 80498)
    assert [tuple(row.values()) for row in rows] == [
        (1950, "James", 86447), (1950, "Robert", 83717), (1950, "Linda", 80498),
    ]  # fmt: skip
    project_qualified = client.query_and_wait(
        f"SELECT name FROM `{client.project}.{dataset}.names_by_year`(1951)"
    )
    assert [row.name for row in project_qualified] == ["James"]
    also = client.query_and_wait(f"SELECT name FROM {client.project}.{dataset}.names_by_year(1951)")
    assert [row.name for row in also] == ["James"]


def test_a_table_function_joined_and_in_a_subquery(client: bigquery.Client, dataset: str) -> None:
    names_by_year(client, dataset)
    client.query_and_wait(
        f"CREATE TABLE {dataset}.words AS SELECT * FROM UNNEST(['James', 'Linda', 'thee']) AS word"
    )
    # TF page: a table function's output joined with another table, ON n.name = s.word
    joined = client.query_and_wait(
        f"SELECT s.word, n.total FROM {dataset}.words AS s "
        f"JOIN {dataset}.names_by_year(1950) AS n ON n.name = s.word ORDER BY s.word"
    )
    assert [(row.word, row.total) for row in joined] == [("James", 86447), ("Linda", 80498)]
    # TF page: a table function in a subquery, ARRAY(SELECT name ... ORDER BY total DESC LIMIT 5)
    top = client.query_and_wait(
        f"SELECT ARRAY(SELECT name FROM {dataset}.names_by_year(1950) "
        "ORDER BY total DESC LIMIT 5) AS top"
    )
    assert next(iter(top)).top == ["James", "Robert", "Linda"]


def test_get_routine_infers_return_table_type(client: bigquery.Client, dataset: str) -> None:
    names_by_year(client, dataset)
    got = client.get_routine(f"{client.project}.{dataset}.names_by_year")
    assert got.type_ == "TABLE_VALUED_FUNCTION"
    assert [(a.name, a.data_type.type_kind) for a in got.arguments] == [("y", "INT64")]
    # DDL reference: without RETURNS TABLE, BigQuery infers the result schema from the query
    columns = [(c.name, c.type.type_kind) for c in got.return_table_type.columns]
    assert columns == [("year", "INT64"), ("name", "STRING"), ("total", "INT64")]
    assert "SUM(number)" in got.body
    listed = list(client.list_routines(dataset))
    assert [(r.routine_id, r.type_) for r in listed] == [("names_by_year", "TABLE_VALUED_FUNCTION")]


def test_returns_table_casts_to_the_declared_columns(client: bigquery.Client, dataset: str) -> None:
    client.query_and_wait(
        f"CREATE TABLE FUNCTION {dataset}.scaled(x INT64) RETURNS TABLE<v FLOAT64, label STRING>"
        " AS SELECT x * 2 AS v, 'two' AS label"
    )
    got = client.get_routine(f"{client.project}.{dataset}.scaled")
    columns = [(c.name, c.type.type_kind) for c in got.return_table_type.columns]
    assert columns == [("v", "FLOAT64"), ("label", "STRING")]  # RETURNS TABLE as declared
    job = client.query(f"SELECT * FROM {dataset}.scaled(3)")
    rows = list(job.result())
    assert [field.field_type for field in job.result().schema] == ["FLOAT", "STRING"]
    assert [tuple(row.values()) for row in rows] == [(6.0, "two")]
    # DDL reference: RETURNS TABLE names the query's columns; other names are refused
    with pytest.raises(exceptions.BadRequest, match="RETURNS TABLE"):
        client.query_and_wait(
            f"CREATE TABLE FUNCTION {dataset}.bad(x INT64) RETURNS TABLE<w INT64> AS SELECT x AS v"
        )


def test_create_routine_table_valued_function(client: bigquery.Client, dataset: str) -> None:
    routine = Routine(
        f"{client.project}.{dataset}.above",
        type_="TABLE_VALUED_FUNCTION",
        language="SQL",
        body=f"SELECT name, number FROM {dataset}.usa_names WHERE number > threshold",
        arguments=[RoutineArgument(name="threshold", data_type=INT64)],
    )
    routine.return_table_type = bigquery.StandardSqlTableType(
        columns=[
            bigquery.StandardSqlField(name="name", type=STRING),
            bigquery.StandardSqlField(name="number", type=INT64),
        ]
    )
    made = client.create_routine(routine)
    assert made.type_ == "TABLE_VALUED_FUNCTION"
    assert [c.name for c in made.return_table_type.columns] == ["name", "number"]
    rows = client.query_and_wait(f"SELECT name FROM {dataset}.above(83000) ORDER BY name")
    assert [row.name for row in rows] == ["James", "Robert"]  # 86447 and 83717 exceed 83000
    client.delete_routine(made.reference)
    with pytest.raises(exceptions.NotFound):
        client.get_routine(made.reference)
    with pytest.raises(exceptions.BadRequest, match=f"{dataset}.above"):
        client.query_and_wait(f"SELECT * FROM {dataset}.above(1)")


def test_wrong_arguments_name_the_function(client: bigquery.Client, dataset: str) -> None:
    names_by_year(client, dataset)
    with pytest.raises(exceptions.BadRequest, match=f"{dataset}.names_by_year") as wrong_type:
        client.query_and_wait(f"SELECT * FROM {dataset}.names_by_year('1950')")
    assert "No matching signature" in wrong_type.value.message
    with pytest.raises(exceptions.BadRequest, match=f"{dataset}.names_by_year"):
        client.query_and_wait(f"SELECT * FROM {dataset}.names_by_year(1950, 1)")
    with pytest.raises(exceptions.BadRequest, match=f"{dataset}.names_by_year"):
        client.query_and_wait(f"SELECT * FROM {dataset}.names_by_year()")
    with pytest.raises(exceptions.BadRequest, match=f"{dataset}.names_by_year"):
        client.query_and_wait(f"SELECT {dataset}.names_by_year(1950)")  # not in FROM


def test_parameters_and_expressions_are_checked_against_the_signature(
    client: bigquery.Client, dataset: str
) -> None:
    # Not only literals: a query parameter or an expression whose type does not coerce to the
    # argument's is BigQuery's "No matching signature". What coerces is the conversion rules
    # page's (https://cloud.google.com/bigquery/docs/reference/standard-sql/conversion_rules):
    # INT64 to NUMERIC and FLOAT64, a STRING parameter to DATE; STRING never to INT64.
    names_by_year(client, dataset)
    call = f"SELECT name FROM {dataset}.names_by_year(@y) ORDER BY name"

    def with_y(kind: str, value: object) -> bigquery.QueryJobConfig:
        return bigquery.QueryJobConfig(
            query_parameters=[bigquery.ScalarQueryParameter("y", kind, value)]
        )

    with pytest.raises(exceptions.BadRequest, match="No matching signature") as wrong:
        client.query_and_wait(call, job_config=with_y("STRING", "1950"))
    assert "argument types: STRING" in wrong.value.message
    assert f"{dataset}.names_by_year(INT64)" in wrong.value.message
    rows = client.query_and_wait(call, job_config=with_y("INT64", 1951))
    assert [row.name for row in rows] == ["James"]
    for argument in ("CONCAT('19', '50')", "CAST(1950 AS FLOAT64)", "CURRENT_DATE()"):
        with pytest.raises(exceptions.BadRequest, match="No matching signature"):
            client.query_and_wait(f"SELECT * FROM {dataset}.names_by_year({argument})")
    rows = client.query_and_wait(f"SELECT name FROM {dataset}.names_by_year(1900 + 51)")
    assert [row.name for row in rows] == ["James"]
    client.query_and_wait(
        f"CREATE TABLE FUNCTION {dataset}.since(d DATE, n NUMERIC) AS "
        f"(SELECT name FROM {dataset}.usa_names WHERE year >= EXTRACT(YEAR FROM d) AND number > n)"
    )
    since = bigquery.QueryJobConfig(
        query_parameters=[
            bigquery.ScalarQueryParameter("d", "STRING", "1951-01-01"),  # STRING parameter: DATE
            bigquery.ScalarQueryParameter("n", "INT64", 5),  # INT64: NUMERIC
        ]
    )
    rows = client.query_and_wait(f"SELECT name FROM {dataset}.since(@d, @n)", job_config=since)
    assert [row.name for row in rows] == ["James"]
    with pytest.raises(exceptions.BadRequest, match="argument types: STRING, INT64"):
        # a STRING expression is not a literal or a parameter: it does not coerce to DATE
        client.query_and_wait(f"SELECT * FROM {dataset}.since(CONCAT('1951', '-01-01'), 5)")


def test_drop_table_function(client: bigquery.Client, dataset: str) -> None:
    names_by_year(client, dataset)
    # DROP FUNCTION names scalar functions only: it does not find a table function
    with pytest.raises(exceptions.NotFound):
        client.query_and_wait(f"DROP FUNCTION {dataset}.names_by_year")
    job = client.query(f"DROP TABLE FUNCTION {dataset}.names_by_year")
    job.result()
    assert job.statement_type == "DROP_TABLE_FUNCTION"
    assert list(client.list_routines(dataset)) == []
    with pytest.raises(exceptions.NotFound, match="names_by_year"):
        client.query_and_wait(f"DROP TABLE FUNCTION {dataset}.names_by_year")
    skipped = client.query(f"DROP TABLE FUNCTION IF EXISTS {dataset}.names_by_year")
    skipped.result()
    assert skipped.ddl_operation_performed == "SKIP"


def test_create_twice_conflicts_unless_if_not_exists(client: bigquery.Client, dataset: str) -> None:
    client.query_and_wait(f"CREATE TABLE FUNCTION {dataset}.one(x INT64) AS SELECT x")
    with pytest.raises(exceptions.Conflict, match="Already Exists"):
        client.query_and_wait(f"CREATE TABLE FUNCTION {dataset}.one(x INT64) AS SELECT x")
    job = client.query(f"CREATE TABLE FUNCTION IF NOT EXISTS {dataset}.one(x INT64) AS SELECT 2")
    job.result()
    assert job.ddl_operation_performed == "SKIP"
    assert next(iter(client.query_and_wait(f"SELECT * FROM {dataset}.one(7)")))[0] == 7


def test_table_parameters_are_refused_by_name(client: bigquery.Client, dataset: str) -> None:
    with pytest.raises(exceptions.BadRequest, match="TABLE<"):
        client.query_and_wait(
            f"CREATE TABLE FUNCTION {dataset}.sales(orders TABLE<sales INT64>, x INT64)"
            " AS SELECT SUM(sales) AS s FROM orders"
        )
    assert list(client.list_routines(dataset)) == []


def test_a_table_function_survives_a_restart(tmp_path: Path) -> None:
    home = str(tmp_path)
    with LocalCloud(home=home) as cloud:
        client = cloud.context().bigquery_client()
        client.create_dataset("keep")
        client.query_and_wait("CREATE TABLE FUNCTION keep.twice(x INT64) AS SELECT x * 2 AS v")
    with LocalCloud(home=home) as cloud:
        client = cloud.context().bigquery_client()
        assert [row.v for row in client.query_and_wait("SELECT v FROM keep.twice(21)")] == [42]
        got = client.get_routine(f"{client.project}.keep.twice")
        assert got.type_ == "TABLE_VALUED_FUNCTION"
