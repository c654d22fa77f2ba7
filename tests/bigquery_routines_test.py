"""Persistent SQL UDFs (routines) through google-cloud-bigquery against the local cloud: made by
client.create_routine or by CREATE FUNCTION in a query, called from later queries, listed, read,
replaced and dropped; what cannot run locally is refused by name.

Expected shapes come from the REST reference of Routine
(https://cloud.google.com/bigquery/docs/reference/rest/v2/routines) and the DDL reference
(https://cloud.google.com/bigquery/docs/reference/standard-sql/data-definition-language)."""

from __future__ import annotations

import uuid

import pytest
from google.api_core import exceptions
from google.cloud import bigquery
from google.cloud.bigquery.routine import Routine, RoutineArgument, RoutineReference

from vertexkit.local import LocalCloud

INT64 = bigquery.StandardSqlDataType(type_kind=bigquery.StandardSqlTypeNames.INT64)
STRING = bigquery.StandardSqlDataType(type_kind=bigquery.StandardSqlTypeNames.STRING)


@pytest.fixture(scope="module")
def client(local_cloud: LocalCloud) -> bigquery.Client:
    return local_cloud.context().bigquery_client()


@pytest.fixture
def dataset(client: bigquery.Client) -> str:
    name = f"udf_{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    return name


def scalar(client: bigquery.Client, sql: str) -> object:
    return next(iter(client.query_and_wait(sql)))[0]


def add_one(client: bigquery.Client, dataset: str, routine_id: str = "add_one") -> Routine:
    routine = Routine(
        f"{client.project}.{dataset}.{routine_id}",
        type_="SCALAR_FUNCTION",
        language="SQL",
        body="x + 1",
        arguments=[RoutineArgument(name="x", data_type=INT64)],
        return_type=INT64,
        description="adds one",
    )
    return client.create_routine(routine)


def test_created_routine_has_googles_shape_and_is_callable(
    client: bigquery.Client, dataset: str
) -> None:
    made = add_one(client, dataset)
    got = client.get_routine(f"{client.project}.{dataset}.add_one")
    # Routine's fields per the REST reference: reference, type, language, arguments with
    # dataType.typeKind, returnType, definitionBody, creationTime, lastModifiedTime, etag
    assert got.reference == RoutineReference.from_string(f"{client.project}.{dataset}.add_one")
    assert got.type_ == "SCALAR_FUNCTION"
    assert got.language == "SQL"
    assert [(a.name, a.data_type.type_kind) for a in got.arguments] == [("x", "INT64")]
    assert got.return_type.type_kind == "INT64"
    assert got.body == "x + 1"
    assert got.description == "adds one"
    assert got.created is not None and got.modified is not None and got.etag
    assert got.etag == made.etag
    # x + 1 of 41 is 42; both the dataset- and project-qualified names reach it (DDL reference)
    assert scalar(client, f"SELECT {dataset}.add_one(41)") == 42
    assert scalar(client, f"SELECT `{client.project}.{dataset}.add_one`(1)") == 2
    assert scalar(client, f"SELECT `{client.project}`.{dataset}.add_one(-1)") == 0


def test_arguments_are_coerced_to_their_declared_type(
    client: bigquery.Client, dataset: str
) -> None:
    client.query_and_wait(
        f"CREATE FUNCTION {dataset}.half(x FLOAT64) AS (x / 2)"  # FLOAT64 division: 3 / 2 = 1.5
    )
    assert scalar(client, f"SELECT {dataset}.half(3)") == 1.5


def test_create_function_ddl_makes_the_same_routine(client: bigquery.Client, dataset: str) -> None:
    job = client.query(
        f"CREATE OR REPLACE FUNCTION {dataset}.greet(name STRING) RETURNS STRING "
        "OPTIONS(description='says hello') AS (CONCAT('hello ', name))"
    )
    job.result()
    # JobStatistics2: statementType CREATE_FUNCTION, ddlOperationPerformed CREATE, ddlTargetRoutine
    assert job.statement_type == "CREATE_FUNCTION"
    assert job.ddl_operation_performed == "CREATE"
    assert job.ddl_target_routine.routine_id == "greet"
    routine = client.get_routine(f"{client.project}.{dataset}.greet")
    assert routine.type_ == "SCALAR_FUNCTION"
    assert [(a.name, a.data_type.type_kind) for a in routine.arguments] == [("name", "STRING")]
    assert routine.return_type.type_kind == "STRING"
    assert routine.description == "says hello"
    assert scalar(client, f"SELECT {dataset}.greet('bq')") == "hello bq"
    again = client.query(f"CREATE OR REPLACE FUNCTION {dataset}.greet(name STRING) AS (name)")
    again.result()
    assert again.ddl_operation_performed == "REPLACE"  # ddlOperationPerformed's documented values
    assert scalar(client, f"SELECT {dataset}.greet('bq')") == "bq"


def test_create_function_twice_is_a_conflict_unless_if_not_exists(
    client: bigquery.Client, dataset: str
) -> None:
    client.query_and_wait(f"CREATE FUNCTION {dataset}.f(x INT64) AS (x)")
    with pytest.raises(exceptions.Conflict, match="Already Exists"):
        client.query_and_wait(f"CREATE FUNCTION {dataset}.f(x INT64) AS (x)")
    job = client.query(f"CREATE FUNCTION IF NOT EXISTS {dataset}.f(x INT64) AS (x)")
    job.result()
    assert job.ddl_operation_performed == "SKIP"


def test_list_routines_gives_the_default_list_fields(client: bigquery.Client, dataset: str) -> None:
    add_one(client, dataset, "b_fn")
    add_one(client, dataset, "a_fn")
    listed = list(client.list_routines(dataset))
    assert [r.routine_id for r in listed] == ["a_fn", "b_fn"]
    # readMask unset: only etag, reference, routineType, times and language (REST reference)
    assert listed[0].type_ == "SCALAR_FUNCTION" and listed[0].language == "SQL"
    assert listed[0].body is None and listed[0].arguments == []


def test_update_replaces_the_routine_and_keeps_creation_time(
    client: bigquery.Client, dataset: str
) -> None:
    made = add_one(client, dataset)
    made.body = "x + 2"
    # routines.update replaces the whole resource (REST reference), so the fields sent are all
    # of it, as in Google's update_routine sample
    updated = client.update_routine(made, ["body", "arguments", "return_type", "type_"])
    assert updated.body == "x + 2"
    assert updated.created == made.created
    assert updated.etag != made.etag
    assert scalar(client, f"SELECT {dataset}.add_one(40)") == 42


def test_delete_and_drop_function(client: bigquery.Client, dataset: str) -> None:
    add_one(client, dataset)
    client.delete_routine(f"{client.project}.{dataset}.add_one")
    with pytest.raises(exceptions.NotFound, match="Not found: Routine"):
        client.get_routine(f"{client.project}.{dataset}.add_one")
    # a call of a function that does not exist: BigQuery's "Function not found"
    with pytest.raises(exceptions.BadRequest, match=f"Function not found: {dataset}.add_one"):
        client.query_and_wait(f"SELECT {dataset}.add_one(1)")
    client.query_and_wait(f"CREATE FUNCTION {dataset}.g(x INT64) AS (x)")
    job = client.query(f"DROP FUNCTION {dataset}.g")
    job.result()
    assert job.statement_type == "DROP_FUNCTION"
    assert list(client.list_routines(dataset)) == []
    with pytest.raises(exceptions.NotFound):
        client.query_and_wait(f"DROP FUNCTION {dataset}.g")
    client.query_and_wait(f"DROP FUNCTION IF EXISTS {dataset}.g")


def test_routines_go_with_their_dataset(client: bigquery.Client, dataset: str) -> None:
    add_one(client, dataset)
    with pytest.raises(exceptions.BadRequest, match="still in use"):
        client.delete_dataset(dataset)  # datasets.delete: non-empty needs deleteContents
    client.delete_dataset(dataset, delete_contents=True)
    client.create_dataset(dataset)
    assert list(client.list_routines(dataset)) == []


def test_bad_routines_are_refused_before_anything_is_stored(
    client: bigquery.Client, dataset: str
) -> None:
    base = f"{client.project}.{dataset}"
    js = Routine(f"{base}.js", type_="SCALAR_FUNCTION", language="JAVASCRIPT", body="return 1")
    js.return_type = INT64
    with pytest.raises(exceptions.MethodNotImplemented, match="JAVASCRIPT"):
        client.create_routine(js)
    proc = Routine(f"{base}.proc", type_="PROCEDURE", language="SQL", body="SELECT 1")
    with pytest.raises(exceptions.MethodNotImplemented, match="PROCEDURE"):
        client.create_routine(proc)
    bad_body = Routine(f"{base}.bad", type_="SCALAR_FUNCTION", body="no_such_column + 1")
    with pytest.raises(exceptions.BadRequest):
        client.create_routine(bad_body)
    with pytest.raises(exceptions.BadRequest, match="aggregate UDFs"):
        client.query_and_wait(f"CREATE AGGREGATE FUNCTION {dataset}.t(x INT64) AS (SUM(x))")
    with pytest.raises(exceptions.BadRequest, match="JavaScript"):
        client.query_and_wait(
            f"CREATE FUNCTION {dataset}.j(x INT64) RETURNS INT64 LANGUAGE js AS 'return x'"
        )
    assert list(client.list_routines(dataset)) == []


def test_routine_iam_policy_round_trip(client: bigquery.Client, dataset: str) -> None:
    add_one(client, dataset)
    path = f"/projects/{client.project}/datasets/{dataset}/routines/add_one"
    call = client._connection.api_request
    empty = call(method="POST", path=path + ":getIamPolicy", data={})
    assert empty["version"] == 1 and empty["etag"]  # Policy: version and etag always given
    binding = {"role": "roles/bigquery.dataViewer", "members": ["user:a@example.com"]}
    policy = {"bindings": [binding], "etag": empty["etag"]}
    stored = call(method="POST", path=path + ":setIamPolicy", data={"policy": policy})
    assert stored["bindings"] == [binding]
    with pytest.raises(exceptions.Conflict):  # the etag read first is stale now
        call(method="POST", path=path + ":setIamPolicy", data={"policy": policy})
    held = call(
        method="POST",
        path=path + ":testIamPermissions",
        data={"permissions": ["bigquery.routines.get"]},
    )
    assert held == {"permissions": ["bigquery.routines.get"]}


def test_update_from_a_stale_etag_is_refused(client: bigquery.Client, dataset: str) -> None:
    made = add_one(client, dataset)
    fields = ["body", "arguments", "return_type", "type_"]
    made.body = "x + 2"
    client.update_routine(made, fields)  # sends If-Match: the etag it read, still current
    made.body = "x + 3"
    # If-Match with the etag the routine had before: 412 Precondition Failed
    with pytest.raises(exceptions.PreconditionFailed):
        client.update_routine(made, fields)
    assert scalar(client, f"SELECT {dataset}.add_one(0)") == 2


def test_a_routine_over_table_columns(client: bigquery.Client, dataset: str) -> None:
    client.query_and_wait(f"CREATE TABLE {dataset}.n AS SELECT x FROM UNNEST([1, 2, 3, 4]) AS x")
    client.query_and_wait(f"CREATE FUNCTION {dataset}.is_even(v INT64) AS (MOD(v, 2) = 0)")
    got = client.query_and_wait(f"SELECT x FROM {dataset}.n WHERE {dataset}.is_even(x) ORDER BY x")
    assert [row.x for row in got] == [2, 4]  # MOD(x, 2) = 0 for x in 1..4


def test_names_differing_only_in_case_are_refused(client: bigquery.Client, dataset: str) -> None:
    add_one(client, dataset, "fn")
    with pytest.raises(exceptions.MethodNotImplemented, match="case"):
        add_one(client, dataset, "FN")
    assert scalar(client, f"SELECT {dataset}.fn(1)") == 2


def test_dry_run_of_create_function_makes_nothing(client: bigquery.Client, dataset: str) -> None:
    config = bigquery.QueryJobConfig(dry_run=True, use_query_cache=False)
    job = client.query(f"CREATE FUNCTION {dataset}.dry(x INT64) AS (x)", job_config=config)
    assert job.statement_type == "CREATE_FUNCTION"  # a dry run answers the statement's type
    assert list(client.list_routines(dataset)) == []
    with pytest.raises(exceptions.BadRequest, match="Unrecognized name"):
        client.query(f"CREATE FUNCTION {dataset}.dry(x INT64) AS (y)", job_config=config)
