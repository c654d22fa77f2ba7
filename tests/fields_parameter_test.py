"""Google's `fields` system parameter (a partial response) on each service of the local cloud:
through the real clients where they send it, and as plain HTTP GETs with a selector.

Google's description of the selector (cited in vertexkit/local/partial_response_test.py): Cloud
Storage JSON API overview, "Partial response" (https://cloud.google.com/storage/docs/json_api);
Drive API, "Return specific fields" (https://developers.google.com/drive/api/guides/fields-parameter).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from google.cloud import bigquery, storage

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.projects import project_number

TABULAR = "gs://google-cloud-aiplatform/schema/dataset/metadata/tabular_1.0.0.yaml"
PENGUINS = "bq://bigquery-public-data.ml_datasets.penguins"


def get(cloud: LocalCloud, path: str, **query: str) -> requests.Response:
    return requests.get(f"{cloud.url}{path}", params=query, timeout=60)


def refused_selection(answer: requests.Response, selector: str) -> dict[str, Any]:
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["message"] == f"Invalid field selection {selector}"
    return error


# -- Cloud Storage ---------------------------------------------------------------------------
@pytest.fixture
def bucket(cloud_context: CloudContext) -> Iterator[storage.Bucket]:
    created = cloud_context.storage_client().create_bucket(f"fields-{uuid.uuid4().hex[:12]}")
    for name in ("a.txt", "b.txt", "c.txt", "d.txt", "e.txt"):
        created.blob(name).upload_from_string(name.encode())
    yield created
    created.delete(force=True)


def test_list_blobs_with_fields_answers_names_only_page_after_page(
    cloud_context: CloudContext, bucket: storage.Bucket
) -> None:
    client = cloud_context.storage_client()
    blobs = list(client.list_blobs(bucket, fields="items(name),nextPageToken", page_size=2))
    assert [b.name for b in blobs] == ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"]
    # the rest was not answered: the client knows only what it was given
    assert {b.size for b in blobs} == {None} and {b.generation for b in blobs} == {None}
    full = next(iter(client.list_blobs(bucket, max_results=1)))
    assert full.size == 5 and full.generation


def test_objects_list_and_get_answer_only_the_selected_fields(
    local_cloud: LocalCloud, bucket: storage.Bucket
) -> None:
    objects = f"/storage/v1/b/{bucket.name}/o"
    page = get(local_cloud, objects, maxResults="2", fields="items(name),nextPageToken").json()
    assert set(page) == {"items", "nextPageToken"}
    assert page["items"] == [{"name": "a.txt"}, {"name": "b.txt"}]
    one = get(local_cloud, f"{objects}/a.txt", fields="name,size,metadata").json()
    assert one == {"name": "a.txt", "size": "5"}  # no metadata: none was set
    bucket_only = get(local_cloud, f"/storage/v1/b/{bucket.name}", fields="name").json()
    assert bucket_only == {"name": bucket.name}


def test_exists_sends_fields_name_and_still_answers(bucket: storage.Bucket) -> None:
    # Blob.exists and Bucket.exists ask `fields=name` (google-cloud-storage's own requests)
    assert bucket.blob("a.txt").exists() and not bucket.blob("zz.txt").exists()
    assert bucket.exists()
    blob = bucket.get_blob("a.txt")
    assert blob is not None and blob.size == 5  # a get without fields is whole


def test_a_download_is_never_selected_in(local_cloud: LocalCloud, bucket: storage.Bucket) -> None:
    bucket.blob("doc.json").upload_from_string(b'{"name": "x", "other": 1}', "application/json")
    media = get(local_cloud, f"/storage/v1/b/{bucket.name}/o/doc.json", alt="media", fields="name")
    assert media.status_code == 200 and media.json() == {"name": "x", "other": 1}
    download = get(local_cloud, f"/download/storage/v1/b/{bucket.name}/o/doc.json",
                   alt="media", fields="(")  # fmt: skip
    assert download.status_code == 200 and download.content == b'{"name": "x", "other": 1}'


def test_a_malformed_selector_is_refused_in_storage_s_error_shape_and_changes_nothing(
    local_cloud: LocalCloud, bucket: storage.Bucket
) -> None:
    error = refused_selection(get(local_cloud, f"/storage/v1/b/{bucket.name}/o", fields="a("), "a(")
    assert "status" not in error and error["errors"][0]["reason"] == "invalidParameter"
    patched = requests.patch(
        f"{local_cloud.url}/storage/v1/b/{bucket.name}/o/a.txt",
        params={"fields": "name,"},
        json={"metadata": {"k": "v"}},
        timeout=60,
    )
    refused_selection(patched, "name,")
    assert bucket.get_blob("a.txt").metadata is None  # type: ignore[union-attr]


# -- BigQuery --------------------------------------------------------------------------------
@pytest.fixture
def table(cloud_context: CloudContext) -> Iterator[bigquery.Table]:
    client = cloud_context.bigquery_client()
    dataset = client.create_dataset(f"fields_{uuid.uuid4().hex[:10]}")
    schema = [bigquery.SchemaField("x", "INT64"), bigquery.SchemaField("s", "STRING")]
    for name in ("t1", "t2", "t3"):
        client.create_table(bigquery.Table(dataset.table(name), schema=schema))
    yield client.get_table(dataset.table("t1"))
    client.delete_dataset(dataset, delete_contents=True)


def test_tables_get_with_fields_schema_answers_the_schema_only(
    local_cloud: LocalCloud, table: bigquery.Table
) -> None:
    path = f"/bigquery/v2/projects/{table.project}/datasets/{table.dataset_id}/tables/t1"
    answer = get(local_cloud, path, fields="schema").json()
    assert answer == {"schema": {"fields": [
        {"name": "x", "type": "INTEGER", "mode": "NULLABLE"},
        {"name": "s", "type": "STRING", "mode": "NULLABLE"},
    ]}}  # fmt: skip
    names = get(local_cloud, path, fields="schema/fields/name").json()
    assert names == {"schema": {"fields": [{"name": "x"}, {"name": "s"}]}}


def test_tables_list_with_fields_pages_through_ids(
    local_cloud: LocalCloud, table: bigquery.Table
) -> None:
    path = f"/bigquery/v2/projects/{table.project}/datasets/{table.dataset_id}/tables"
    page = get(local_cloud, path, maxResults="2", fields="nextPageToken,tables(id)").json()
    assert set(page) == {"nextPageToken", "tables"}
    assert page["tables"] == [
        {"id": f"{table.project}:{table.dataset_id}.t1"},
        {"id": f"{table.project}:{table.dataset_id}.t2"},
    ]
    rest = get(
        local_cloud, path, pageToken=page["nextPageToken"], fields="nextPageToken,tables(id)"
    )
    assert rest.json() == {"tables": [{"id": f"{table.project}:{table.dataset_id}.t3"}]}


def test_the_client_s_query_results_ask_fields_and_get_only_those(
    cloud_context: CloudContext, local_cloud: LocalCloud
) -> None:
    client = cloud_context.bigquery_client()
    job = client.query("SELECT 1 AS one UNION ALL SELECT 2 ORDER BY one")
    # google-cloud-bigquery reads rows with fields=jobReference,totalRows,pageToken,rows
    assert [row.one for row in job.result()] == [1, 2]
    assert job.exists()  # a jobs.get with fields=id
    path = f"/bigquery/v2/projects/{job.project}/queries/{job.job_id}"
    answer = get(local_cloud, path, location=job.location,
                 fields="jobReference,totalRows,pageToken,rows").json()  # fmt: skip
    assert set(answer) == {"jobReference", "totalRows", "rows"}
    assert answer["rows"] == [{"f": [{"v": "1"}]}, {"f": [{"v": "2"}]}]


def test_a_malformed_selector_is_a_bigquery_400_and_no_dataset_is_made(
    local_cloud: LocalCloud, cloud_context: CloudContext
) -> None:
    name = f"never_{uuid.uuid4().hex[:10]}"
    answer = requests.post(
        f"{local_cloud.url}/bigquery/v2/projects/{cloud_context.project}/datasets",
        params={"fields": "id)"},
        json={"datasetReference": {"datasetId": name}},
        timeout=60,
    )
    error = refused_selection(answer, "id)")
    assert error["status"] == "INVALID_ARGUMENT"
    assert name not in [d.dataset_id for d in cloud_context.bigquery_client().list_datasets()]


# -- Vertex AI -------------------------------------------------------------------------------
def custom_job(display_name: str) -> dict[str, Any]:
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/app:1",
                          "command": ["python", "-c", "pass"]},
    }  # fmt: skip
    return {"displayName": display_name, "jobSpec": {"workerPoolSpecs": [pool]}}


def test_a_custom_job_get_and_list_answer_only_the_selected_fields(
    local_cloud: LocalCloud, cloud_context: CloudContext
) -> None:
    jobs = f"/v1/{cloud_context.parent}/customJobs"
    created = requests.post(
        f"{local_cloud.url}{jobs}", params={"fields": "name,state"}, timeout=60,
        json=custom_job("fields-job"),
    )  # fmt: skip
    assert created.status_code == 200, created.text
    job = created.json()
    assert set(job) == {"name", "state"}
    number = project_number(cloud_context.project)
    assert job["name"].startswith(f"projects/{number}/locations/")  # named as Vertex names it
    answer = get(local_cloud, f"/v1/{job['name']}", fields="name,state").json()
    assert set(answer) == {"name", "state"} and answer["name"] == job["name"]
    listed = get(local_cloud, jobs, pageSize="1", fields="customJobs(name,state),nextPageToken")
    page = listed.json()
    assert set(page) <= {"customJobs", "nextPageToken"}
    assert all(set(entry) == {"name", "state"} for entry in page["customJobs"])
    spec = get(local_cloud, f"/v1/{job['name']}", fields="jobSpec/workerPoolSpecs/containerSpec")
    assert spec.json() == {"jobSpec": {"workerPoolSpecs": [
        {"containerSpec": custom_job("x")["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]}
    ]}}  # fmt: skip


def test_an_operation_s_response_is_named_with_the_project_number_when_selected(
    local_cloud: LocalCloud, cloud_context: CloudContext
) -> None:
    """`outward` tells an Any (walked) from a Struct (kept) by `@type`: a selection that
    leaves `@type` out must still name the resource inside the operation's `response`."""
    body = {"displayName": "fields-ds", "metadataSchemaUri": TABULAR,
            "metadata": {"inputConfig": {"bigquerySource": {"uri": PENGUINS}}}}  # fmt: skip
    created = requests.post(f"{local_cloud.url}/v1/{cloud_context.parent}/datasets", json=body,
                            timeout=60)  # fmt: skip
    assert created.status_code == 200, created.text
    operation = created.json()["name"]
    deadline = time.monotonic() + 60
    while True:
        answer = get(local_cloud, f"/v1/{operation}", fields="done,response/name").json()
        if answer.get("done") or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    number = project_number(cloud_context.project)
    assert set(answer) == {"done", "response"} and set(answer["response"]) == {"name"}
    assert answer["response"]["name"].startswith(f"projects/{number}/locations/")
    typed = get(local_cloud, f"/v1/{operation}", fields="response(@type,name)").json()
    assert typed["response"]["@type"].endswith("aiplatform.v1.Dataset")


def test_a_malformed_selector_is_a_vertex_400_and_no_job_is_made(
    local_cloud: LocalCloud, cloud_context: CloudContext
) -> None:
    jobs = f"{local_cloud.url}/v1/{cloud_context.parent}/customJobs"
    answer = requests.post(jobs, params={"fields": "name/"}, json=custom_job("never-made"),
                           timeout=60)  # fmt: skip
    error = refused_selection(answer, "name/")
    assert error["status"] == "INVALID_ARGUMENT" and "errors" not in error  # Vertex's shape
    listing = requests.get(jobs, timeout=60).json()
    assert "never-made" not in [job["displayName"] for job in listing.get("customJobs", [])]


def test_an_empty_selector_is_the_whole_answer(
    local_cloud: LocalCloud, cloud_context: CloudContext
) -> None:
    # A dataset, not a listing of jobs: nothing changes it between the two GETs (the other
    # tests' jobs in this shared cloud move on meanwhile).
    body = {"displayName": "fields-whole", "metadataSchemaUri": TABULAR,
            "metadata": {"inputConfig": {"bigquerySource": {"uri": PENGUINS}}}}  # fmt: skip
    created = requests.post(f"{local_cloud.url}/v1/{cloud_context.parent}/datasets", json=body,
                            timeout=60)  # fmt: skip
    assert created.status_code == 200, created.text
    operation = f"/v1/{created.json()['name']}"
    deadline = time.monotonic() + 60
    while not (answer := get(local_cloud, operation).json()).get("done"):
        assert time.monotonic() < deadline, answer
        time.sleep(0.1)
    dataset = f"/v1/{answer['response']['name']}"
    whole = get(local_cloud, dataset).json()
    assert get(local_cloud, dataset, fields="").json() == whole
    assert get(local_cloud, dataset, fields="*").json() == whole
    assert whole["displayName"] == "fields-whole" and "metadata" in whole
