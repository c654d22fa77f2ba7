"""Every resource's operations sub-collection and IAM policy, through the `aiplatform_v1`
clients' own mixin methods (google.longrunning.Operations, google.iam.v1.IAMPolicy)."""

from __future__ import annotations

import re
import tempfile
import uuid
from pathlib import Path

import httpx
import joblib
import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1
from google.iam.v1 import iam_policy_pb2, policy_pb2
from google.longrunning import operations_pb2
from sklearn.dummy import DummyClassifier

from vertexkit.context import CloudContext
from vertexkit.local.projects import project_number
from vertexkit.local.server import LocalCloud

SKLEARN_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-3:latest"


@pytest.fixture
def tensorboards(cloud_context: CloudContext) -> aiplatform_v1.TensorboardServiceClient:
    return cloud_context._gapic(aiplatform_v1.TensorboardServiceClient)


@pytest.fixture
def model(local_cloud: LocalCloud, cloud_context: CloudContext) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "model.joblib"
        joblib.dump(DummyClassifier().fit([[0], [1]], [0, 1]), path)
        local_cloud.storage.write_object("core-test", "iam/model.joblib", path)
    client = cloud_context._gapic(aiplatform_v1.ModelServiceClient)
    uploaded = client.upload_model(
        parent=cloud_context.parent,
        model={"display_name": "iam", "artifact_uri": "gs://core-test/iam",
               "container_spec": {"image_uri": SKLEARN_IMAGE}},
    )  # fmt: skip
    return uploaded.result().model


def test_a_resource_s_operations_are_listed_got_waited_cancelled_and_deleted(
    cloud_context: CloudContext, tensorboards: aiplatform_v1.TensorboardServiceClient
) -> None:
    created = tensorboards.create_tensorboard(
        parent=cloud_context.parent, tensorboard={"display_name": "ops"}
    )
    tensorboard = created.result().name
    operation = created.operation.name
    listed = tensorboards.list_operations(operations_pb2.ListOperationsRequest(name=tensorboard))
    assert [op.name for op in listed.operations] == [operation]
    done_only = operations_pb2.ListOperationsRequest(name=tensorboard, filter="done=false")
    assert not tensorboards.list_operations(done_only).operations
    waited = tensorboards.wait_operation(operations_pb2.WaitOperationRequest(name=operation))
    assert waited.done and waited.response.type_url.endswith("aiplatform.v1.Tensorboard")
    tensorboards.cancel_operation(operations_pb2.CancelOperationRequest(name=operation))
    tensorboards.delete_operation(operations_pb2.DeleteOperationRequest(name=operation))
    with pytest.raises(exceptions.NotFound):
        tensorboards.get_operation(operations_pb2.GetOperationRequest(name=operation))


def test_operations_of_a_nested_resource_and_a_bad_filter(
    local_cloud: LocalCloud, cloud_context: CloudContext
) -> None:
    run = f"{cloud_context.parent}/tensorboards/1/experiments/e/runs/r/timeSeries/s"
    # google.longrunning ListOperationsResponse: an empty list is the empty message.
    assert httpx.get(f"{local_cloud.url}/v1/{run}/operations").json() == {}
    bad = httpx.get(f"{local_cloud.url}/v1/{run}/operations", params={"filter": "name=x"})
    assert bad.status_code == 400 and "filter" in bad.json()["error"]["message"]
    missing = httpx.get(f"{local_cloud.url}/v1/{run}/operations/42")
    assert missing.status_code == 404


def test_a_model_s_iam_policy_round_trips_with_its_etag(
    cloud_context: CloudContext, model: str
) -> None:
    client = cloud_context._gapic(aiplatform_v1.ModelServiceClient)
    empty = client.get_iam_policy(iam_policy_pb2.GetIamPolicyRequest(resource=model))
    assert empty.etag == b"\x00 \x01" and not empty.bindings  # "ACAB", Google's empty policy
    binding = policy_pb2.Binding(role="roles/aiplatform.user", members=["user:ada@example.com"])
    policy = policy_pb2.Policy(bindings=[binding], etag=empty.etag)
    request = iam_policy_pb2.SetIamPolicyRequest(resource=model, policy=policy)
    stored = client.set_iam_policy(request)
    assert list(stored.bindings) == [binding] and stored.etag != empty.etag
    assert client.get_iam_policy(iam_policy_pb2.GetIamPolicyRequest(resource=model)) == stored
    with pytest.raises(exceptions.Conflict):  # iam.v1: a stale etag is ABORTED
        client.set_iam_policy(request)
    asked = ["aiplatform.models.get", "aiplatform.models.delete"]
    held = client.test_iam_permissions(
        iam_policy_pb2.TestIamPermissionsRequest(resource=model, permissions=asked)
    )
    assert list(held.permissions) == asked


def test_a_bad_policy_is_refused_naming_the_field(cloud_context: CloudContext, model: str) -> None:
    client = cloud_context._gapic(aiplatform_v1.ModelServiceClient)
    bad = policy_pb2.Policy(bindings=[policy_pb2.Binding(role="roles/x", members=["ada"])])
    with pytest.raises(exceptions.BadRequest, match=r"policy.bindings\[0\].members"):
        client.set_iam_policy(iam_policy_pb2.SetIamPolicyRequest(resource=model, policy=bad))
    with pytest.raises(exceptions.NotFound):
        client.get_iam_policy(iam_policy_pb2.GetIamPolicyRequest(resource=model + "0"))


def test_names_carry_the_project_number_and_a_create_answers_a_pending_operation(
    local_cloud: LocalCloud, cloud_context: CloudContext
) -> None:
    """As recorded Vertex traffic shows (GoogleCloudPlatform/k8s-config-connector,
    `testdata/basic/vertexai/v1alpha1/vertexaitensorboard/_http.log`): a create sent with
    `projects/${projectId}` answers an operation with no `done`, named
    `projects/${projectNumber}/locations/us-central1/tensorboards/${id}/operations/${id}`;
    its poll says `done: true` with the Tensorboard named by number, which a GET by number or
    by ID finds; a delete's operation is named under the location."""
    number = project_number(cloud_context.project)
    base = f"{local_cloud.url}/v1"
    created = httpx.post(f"{base}/{cloud_context.parent}/tensorboards", json={"displayName": "n"})
    operation = created.json()
    assert "done" not in operation and "response" not in operation
    assert re.fullmatch(rf"projects/{number}/locations/us-central1/tensorboards/\d+/operations/\d+",
                        operation["name"])  # fmt: skip
    polled = httpx.get(f"{base}/{operation['name']}").json()
    assert polled["done"] is True
    name = polled["response"]["name"]
    assert name.startswith(f"projects/{number}/locations/us-central1/tensorboards/")
    by_id = name.replace(f"projects/{number}/", f"projects/{cloud_context.project}/")
    assert httpx.get(f"{base}/{name}").json()["name"] == name
    assert httpx.get(f"{base}/{by_id}").json()["name"] == name
    deleted = httpx.delete(f"{base}/{name}").json()
    assert re.fullmatch(rf"projects/{number}/locations/us-central1/operations/\d+", deleted["name"])
    missing = httpx.get(f"{base}/{name}")
    assert missing.status_code == 404
    assert f"projects/{number}/" in missing.json()["error"]["message"]


def test_a_metadata_store_s_life_as_recorded(
    local_cloud: LocalCloud, cloud_context: CloudContext
) -> None:
    """The sequence of k8s-config-connector's `vertexai/v1alpha1/metadatastore/
    metadatastorebasic/_http.log` (real Vertex): a GET of a store that does not exist is
    `{"error": {"code": 404, "message": ..., "status": "NOT_FOUND"}}` (no `errors`); the
    create answers a pending operation under the store, named by project number; the delete's
    operation is under the store too, done at once, its response google.protobuf.Empty."""
    number = project_number(cloud_context.project)
    base = f"{local_cloud.url}/v1/{cloud_context.parent}/metadataStores"
    store_id = f"store{uuid.uuid4().hex[:8]}"
    missing = httpx.get(f"{base}/{store_id}")
    assert missing.status_code == 404
    assert set(missing.json()["error"]) == {"code", "message", "status"}
    assert missing.json()["error"]["status"] == "NOT_FOUND"
    created = httpx.post(base, params={"metadataStoreId": store_id}, json={"description": "d"})
    store = f"projects/{number}/locations/us-central1/metadataStores/{store_id}"
    assert re.fullmatch(rf"{store}/operations/\d+", created.json()["name"])
    assert "done" not in created.json()
    deleted = httpx.delete(f"{base}/{store_id}").json()
    assert re.fullmatch(rf"{store}/operations/\d+", deleted["name"]) and deleted["done"] is True
    assert deleted["response"] == {"@type": "type.googleapis.com/google.protobuf.Empty"}


@pytest.mark.parametrize("collection", ["customJobs", "datasets", "tensorboards", "studies"])
def test_a_malformed_id_is_a_400_not_a_404(
    cloud_context: CloudContext, local_cloud: LocalCloud, collection: str
) -> None:
    """A name whose ID Vertex would have given out as a number is malformed: 400
    INVALID_ARGUMENT naming `name` (the API-contract issue's measurement of real Vertex), so a
    client's "get, create if 404" code does not create for a typo; a well-formed ID that names
    nothing is still a 404."""
    base = f"{local_cloud.url}/v1/{cloud_context.parent}/{collection}"
    malformed = httpx.get(f"{base}/not-a-number")
    assert malformed.status_code == 400
    assert malformed.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert malformed.json()["error"]["message"].startswith("name: ")
    assert httpx.get(f"{base}/123456789").status_code == 404


def test_through_the_gapic_client_a_create_is_pending_and_names_carry_the_number(
    cloud_context: CloudContext, tensorboards: aiplatform_v1.TensorboardServiceClient
) -> None:
    """The same through aiplatform_v1's own client (REST transport): the create's raw operation
    is not done (recorded Vertex traffic: `vertexaitensorboard/_http.log`), `result()` polls it
    to the Tensorboard named `projects/<number>/...`, which a get by the project ID finds; a
    malformed job ID is the client's BadRequest, a well-formed unknown one its NotFound."""
    number = project_number(cloud_context.project)
    created = tensorboards.create_tensorboard(
        parent=cloud_context.parent, tensorboard={"display_name": "gapic"}
    )
    assert created.operation.done is False
    name = created.result().name
    assert name.startswith(f"projects/{number}/locations/us-central1/tensorboards/")
    by_id = name.replace(f"projects/{number}/", f"projects/{cloud_context.project}/")
    assert tensorboards.get_tensorboard(name=by_id).name == name
    jobs = cloud_context.job_client()
    with pytest.raises(exceptions.BadRequest, match="name: "):
        jobs.get_custom_job(name=f"{cloud_context.parent}/customJobs/not-a-number")
    with pytest.raises(exceptions.NotFound):
        jobs.get_custom_job(name=f"{cloud_context.parent}/customJobs/123456789")
