"""Object IAM through google-cloud-storage: served on its own path (`o/{object}/iam`, storage.v1
discovery), never read as the download of an object named `<object>/iam`."""

from __future__ import annotations

import uuid

import pytest
from google.api_core import exceptions
from google.cloud import storage

from vertexkit.local.server import LocalCloud


@pytest.fixture
def blob(local_cloud: LocalCloud) -> storage.Blob:
    client = storage.Client(project=local_cloud.project)
    bucket = client.create_bucket(f"object-iam-{uuid.uuid4().hex[:8]}")
    blob = bucket.blob("dir/model.joblib")
    blob.upload_from_string(b"x")
    return blob


def test_an_object_s_permissions_are_tested_and_its_policy_refused_with_a_reason(
    blob: storage.Blob,
) -> None:
    asked = ["storage.objects.get", "storage.objects.delete"]
    assert blob.test_iam_permissions(asked) == asked
    with pytest.raises(exceptions.GoogleAPICallError, match="no object-level IAM policy") as err:
        blob.get_iam_policy()
    assert err.value.code == 501
    missing = blob.bucket.blob("absent")
    with pytest.raises(exceptions.NotFound):
        missing.test_iam_permissions(asked)


def test_an_object_really_named_iam_is_still_read(blob: storage.Blob) -> None:
    named_iam = blob.bucket.blob("dir/iam")
    named_iam.upload_from_string(b"y")
    assert named_iam.download_as_bytes() == b"y"
    named_iam.reload()
    assert named_iam.size == 1
