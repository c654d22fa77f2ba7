"""What the SDKs call around their resources, answered as Google answers it: what is not
served is a 501 (never a 404, which reads as "not found"), bucket IAM, Resource Manager's
project number."""

from __future__ import annotations

import json
import urllib.request

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, aiplatform_v1, resourcemanager_v3, storage

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.projects import project_number


def iam_bucket(client: storage.Client) -> storage.Bucket:
    """The bucket these tests share, created by whichever runs first: under `pytest -n`
    any of them may be the first on its worker."""
    bucket = client.bucket("vertexkit-iam")
    if not bucket.exists():
        return client.create_bucket("vertexkit-iam")
    bucket.reload()
    return bucket


def test_a_vertex_service_not_served_is_501(cloud_context: CloudContext) -> None:
    client = cloud_context._gapic(aiplatform_v1.FeaturestoreServiceClient)
    with pytest.raises(exceptions.MethodNotImplemented, match="not served by the local cloud"):
        client.list_featurestores(parent=cloud_context.parent)


def test_an_unknown_job_in_a_served_collection_is_404(cloud_context: CloudContext) -> None:
    cloud_context.init_aiplatform()
    with pytest.raises(exceptions.NotFound):
        aiplatform.CustomJob.get(f"{cloud_context.parent}/customJobs/424242")


def test_a_bigquery_path_outside_the_v2_api_is_501(cloud_context: CloudContext) -> None:
    # Every bigquery.v2 method is answered (docs/api-coverage.md); a path the v2 discovery
    # document does not have (a Reservation API collection) still gets the generic 501.
    client = cloud_context.bigquery_client()
    with pytest.raises(exceptions.MethodNotImplemented, match="not served by the local cloud"):
        client._connection.api_request("GET", "/projects/local-project/capacityCommitments")


def test_a_storage_method_not_served_is_501(cloud_context: CloudContext) -> None:
    client = cloud_context.storage_client()
    bucket = iam_bucket(client)
    # Anywhere Cache (storage.v1 anywhereCaches) is an edge cache: out of the local scope.
    with pytest.raises(exceptions.MethodNotImplemented, match="not served by the local cloud"):
        client._connection.api_request(method="GET", path=f"/b/{bucket.name}/anywhereCaches")


def test_bucket_iam_policy_and_permissions(cloud_context: CloudContext) -> None:
    bucket = iam_bucket(cloud_context.storage_client())
    policy = bucket.get_iam_policy()
    assert "projectOwner:local-project" in policy["roles/storage.legacyBucketOwner"]
    # What the SDK's pipeline-bucket set-up does to a new bucket: add the service account.
    account = "serviceAccount:123-compute@developer.gserviceaccount.com"
    policy.setdefault("roles/storage.objectViewer", set()).add(account)
    bucket.set_iam_policy(policy)
    assert account in bucket.get_iam_policy()["roles/storage.objectViewer"]
    asked = ["storage.objects.get", "storage.objects.create", "storage.buckets.get"]
    assert sorted(bucket.test_iam_permissions(asked)) == sorted(asked)
    bucket.reload()
    assert "_iamBindings" not in bucket._properties


def test_bucket_iam_of_a_missing_bucket_is_404(cloud_context: CloudContext) -> None:
    bucket = cloud_context.storage_client().bucket("vertexkit-no-such-bucket")
    with pytest.raises(exceptions.NotFound):
        bucket.get_iam_policy()


def test_projects_get_v3_through_the_rest_client(local_cloud: LocalCloud) -> None:
    client = resourcemanager_v3.ProjectsClient(
        credentials=AnonymousCredentials(),
        transport="rest",
        client_options={"api_endpoint": local_cloud.url},
    )
    project = client.get_project(name="projects/local-project")
    number = project.name.split("/", 1)[1]
    assert project.project_id == "local-project" and number == project_number("local-project")
    assert client.get_project(name=project.name).project_id == "local-project"
    # The SDK's bucket-ownership check compares these two numbers.
    bucket = iam_bucket(local_cloud.context().storage_client())
    assert str(bucket.project_number) == number


def test_projects_get_v1(local_cloud: LocalCloud) -> None:
    with urllib.request.urlopen(f"{local_cloud.url}/v1/projects/local-project") as response:
        project = json.load(response)
    assert project["projectNumber"] == project_number("local-project")
    assert project["lifecycleState"] == "ACTIVE"


def test_projects_get_of_an_unknown_number_is_403(local_cloud: LocalCloud) -> None:
    client = resourcemanager_v3.ProjectsClient(
        credentials=AnonymousCredentials(),
        transport="rest",
        client_options={"api_endpoint": local_cloud.url},
    )
    with pytest.raises(exceptions.Forbidden):
        client.get_project(name="projects/123")
