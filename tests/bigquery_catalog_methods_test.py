"""The BigQuery methods around the catalog through google-cloud-bigquery: models (none exist
locally), row access policies (refused: not enforced), table IAM policies, projects.list,
projects.getServiceAccount and datasets.undelete.

Expected values come from the REST reference (https://cloud.google.com/bigquery/docs/reference/
rest/v2/...) of each method, named beside each check."""

from __future__ import annotations

import uuid

import httpx
import pytest
from google.api_core import exceptions
from google.cloud import bigquery

from vertexkit.local import LocalCloud


@pytest.fixture(scope="module")
def client(local_cloud: LocalCloud) -> bigquery.Client:
    return local_cloud.context().bigquery_client()


@pytest.fixture(scope="module")
def table(client: bigquery.Client) -> str:
    dataset = f"cat_{uuid.uuid4().hex[:8]}"
    client.create_dataset(dataset)
    client.query_and_wait(f"CREATE TABLE {dataset}.t (id INT64, region STRING)")
    return f"{client.project}.{dataset}.t"


def call(client: bigquery.Client, method: str, path: str, data: dict | None = None) -> dict:
    return client._connection.api_request(method=method, path=path, data=data)


def test_models_list_empty_and_get_is_googles_not_found(
    client: bigquery.Client, table: str
) -> None:
    project, dataset, _ = table.split(".")
    assert list(client.list_models(dataset)) == []
    # models.get of a missing model: "Not found: Model project:dataset.model"
    with pytest.raises(exceptions.NotFound, match=f"Not found: Model {project}:{dataset}.m"):
        client.get_model(f"{project}.{dataset}.m")
    with pytest.raises(exceptions.NotFound):
        client.delete_model(f"{project}.{dataset}.m")
    with pytest.raises(exceptions.NotFound, match="Dataset"):
        list(client.list_models("no_such_dataset"))


def test_create_model_is_refused_by_name(client: bigquery.Client, table: str) -> None:
    dataset = table.split(".")[1]
    with pytest.raises(exceptions.BadRequest, match=r"BigQuery ML \(CREATE MODEL\)"):
        client.query_and_wait(
            f"CREATE MODEL {dataset}.m OPTIONS(model_type='linear_reg') AS "
            f"SELECT id AS label FROM {dataset}.t"
        )


def test_row_access_policies_none_and_insert_refused(client: bigquery.Client, table: str) -> None:
    project, dataset, name = table.split(".")
    base = f"/projects/{project}/datasets/{dataset}/tables/{name}/rowAccessPolicies"
    assert call(client, "GET", base).get("rowAccessPolicies", []) == []  # an empty list
    with pytest.raises(exceptions.NotFound):
        call(client, "GET", base + "/p1")
    policy = {
        "rowAccessPolicyReference": {
            "projectId": project, "datasetId": dataset, "tableId": name, "policyId": "p1",
        },
        "filterPredicate": "region = 'EU'",
        "grantees": ["user:a@example.com"],
    }  # fmt: skip
    with pytest.raises(exceptions.MethodNotImplemented, match="not enforced"):
        call(client, "POST", base, policy)
    with pytest.raises(exceptions.BadRequest, match="policyIds"):
        call(client, "POST", base + ":batchDelete", {})


def test_table_iam_policy_round_trip(client: bigquery.Client, table: str) -> None:
    empty = client.get_iam_policy(table)
    assert empty.version == 1 and empty.etag  # Policy: version and etag
    assert list(empty.bindings) == []
    empty["roles/bigquery.dataViewer"] = {"user:a@example.com"}
    stored = client.set_iam_policy(table, empty)
    assert stored["roles/bigquery.dataViewer"] == {"user:a@example.com"}
    assert stored.etag != empty.etag  # the etag changes with the policy
    again = client.get_iam_policy(table)
    assert again["roles/bigquery.dataViewer"] == {"user:a@example.com"}
    with pytest.raises(exceptions.Conflict):  # a write from the stale etag is refused
        client.set_iam_policy(table, empty)
    project, dataset, name = table.split(".")
    conditional = {
        "role": "roles/bigquery.dataViewer",
        "members": ["user:a@example.com"],
        "condition": {"title": "t", "expression": "request.time < timestamp('2030-01-01')"},
    }
    with pytest.raises(exceptions.BadRequest, match="condition"):  # not evaluated locally
        call(
            client,
            "POST",
            f"/projects/{project}/datasets/{dataset}/tables/{name}:setIamPolicy",
            {"policy": {"version": 3, "bindings": [conditional]}},
        )
    assert client.get_iam_policy(table).etag == again.etag  # nothing was stored


def test_table_test_iam_permissions_answers_the_owners(client: bigquery.Client, table: str) -> None:
    asked = ["bigquery.tables.get", "bigquery.tables.getData"]
    # testIamPermissions answers the subset the caller holds: the sole owner holds them all
    assert client.test_iam_permissions(table, asked) == {"permissions": asked}
    with pytest.raises(exceptions.NotFound):
        client.test_iam_permissions(f"{table}_missing", asked)


def test_projects_list_is_the_local_project(
    client: bigquery.Client, local_cloud: LocalCloud
) -> None:
    # the project number Resource Manager answers (projects.get)
    number = httpx.get(f"{local_cloud.url}/v1/projects/{client.project}").json()["projectNumber"]
    projects = list(client.list_projects())
    assert [(p.project_id, p.numeric_id, p.friendly_name) for p in projects] == [
        (client.project, number, client.project)  # numericId: a uint64 string
    ]


def test_service_account_is_named_after_the_project_number(
    client: bigquery.Client, local_cloud: LocalCloud
) -> None:
    number = httpx.get(f"{local_cloud.url}/v1/projects/{client.project}").json()["projectNumber"]
    # BigQuery's encryption service account: bq-PROJECT_NUMBER@bigquery-encryption...
    email = f"bq-{number}@bigquery-encryption.iam.gserviceaccount.com"
    assert client.get_service_account_email() == email


def test_undelete_is_refused_with_its_reason(client: bigquery.Client, table: str) -> None:
    project, dataset, _ = table.split(".")
    gone = f"gone_{uuid.uuid4().hex[:8]}"
    client.create_dataset(gone)
    client.delete_dataset(gone)
    with pytest.raises(exceptions.MethodNotImplemented, match="time-travel"):
        call(client, "POST", f"/projects/{project}/datasets/{gone}:undelete", {})
    with pytest.raises(exceptions.Conflict):  # a dataset that exists is not deleted
        call(client, "POST", f"/projects/{project}/datasets/{dataset}:undelete", {})
