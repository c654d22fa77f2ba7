"""What the local Cloud Storage answers, field by field, as Cloud Storage answers it.

Each expected value is Google's, named beside it:
- RECORDED: real traffic recorded by GoogleCloudPlatform/k8s-config-connector,
  pkg/test/resourcefixture/testdata/basic/storage/v1beta1/storageanywherecache/
  storageanywherecache-full/_http.log (a bucket created with no location, then read back) and
  .../v1beta1/storagebucket/_http.log (a 404 on a missing bucket);
- LOCATIONS: Cloud Storage's "Bucket locations" page (region, dual-region, multi-region);
- DISCOVERY: the Bucket schema of storage.v1.json (googleapiclient's discovery_cache).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from google.api_core import exceptions
from google.cloud import storage

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.projects import project_number

# RECORDED: the keys of a new bucket's resource (labels aside, which that bucket was given).
RECORDED_BUCKET_KEYS = {
    "etag", "generation", "iamConfiguration", "id", "kind", "location", "locationType",
    "metageneration", "name", "projectNumber", "rpo", "selfLink", "softDeletePolicy",
    "storageClass", "timeCreated", "updated",
}  # fmt: skip
RECORDED_IAM_CONFIGURATION = {
    "bucketPolicyOnly": {"enabled": False},
    "publicAccessPrevention": "inherited",
    "uniformBucketLevelAccess": {"enabled": False},
}
# RECORDED: the 404 of a missing bucket, whole: no "status" field in Cloud Storage's errors.
RECORDED_NO_SUCH_BUCKET = {
    "error": {
        "code": 404,
        "message": "The specified bucket does not exist.",
        "errors": [
            {
                "message": "The specified bucket does not exist.",
                "domain": "global",
                "reason": "notFound",
            }
        ],
    }
}


@pytest.fixture
def client(cloud_context: CloudContext) -> storage.Client:
    return cloud_context.storage_client()


@pytest.fixture
def bucket(client: storage.Client) -> Iterator[storage.Bucket]:
    created = client.create_bucket(f"shape-{uuid.uuid4().hex[:12]}")
    yield created
    created.delete(force=True)


def _error(code: int, message: str, reason: str) -> dict:
    return {
        "error": {
            "code": code,
            "message": message,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
        }
    }


# -- 1. the bucket resource --------------------------------------------------------------------
def test_a_new_bucket_has_the_fields_google_fills(bucket: storage.Bucket) -> None:
    got = bucket.client.get_bucket(bucket.name)._properties
    assert set(got) == RECORDED_BUCKET_KEYS
    assert got["kind"] == "storage#bucket" and got["name"] == got["id"] == bucket.name
    assert got["location"] == "US" and got["locationType"] == "multi-region"  # RECORDED
    assert got["rpo"] == "DEFAULT" and got["storageClass"] == "STANDARD"  # RECORDED
    assert got["metageneration"] == "1" and int(got["generation"]) > 0  # RECORDED
    assert got["softDeletePolicy"] == {  # RECORDED: 7 days, in force since the creation
        "retentionDurationSeconds": "604800",
        "effectiveTime": got["timeCreated"],
    }
    assert got["iamConfiguration"] == RECORDED_IAM_CONFIGURATION
    assert got["projectNumber"] == project_number(bucket.client.project)
    assert got["updated"] == got["timeCreated"]
    assert got["selfLink"].endswith(f"/storage/v1/b/{bucket.name}")


@pytest.mark.parametrize(
    ("given", "location", "kind"),
    [
        ("us-central1", "US-CENTRAL1", "region"),  # LOCATIONS: a region, "Iowa (US-CENTRAL1)"
        ("eu", "EU", "multi-region"),  # LOCATIONS: multi-regions ASIA, EU, US
        ("ASIA", "ASIA", "multi-region"),
        ("nam4", "NAM4", "dual-region"),  # LOCATIONS: predefined dual-regions, e.g. NAM4
        ("asia1", "ASIA1", "dual-region"),  # LOCATIONS: "Tokyo and Osaka (ASIA1)"
    ],
)
def test_a_buckets_location_and_its_type(
    client: storage.Client, given: str, location: str, kind: str
) -> None:
    created = client.create_bucket(f"where-{uuid.uuid4().hex[:12]}", location=given)
    try:
        assert (created.location, created.location_type) == (location, kind)
        layout = client.get_bucket(created.name)
        assert (layout.location, layout.location_type) == (location, kind)
    finally:
        created.delete()


def test_a_configurable_dual_region_is_a_dual_region(client: storage.Client) -> None:
    """LOCATIONS: a multi-region name with data locations (customPlacementConfig)."""
    created = client.create_bucket(
        f"dual-{uuid.uuid4().hex[:12]}", location="US", data_locations=["US-EAST1", "US-WEST1"]
    )
    try:
        assert created.location_type == "dual-region"
        assert created.data_locations == ["US-EAST1", "US-WEST1"]
    finally:
        created.delete()


def test_uniform_access_is_answered_in_both_of_its_names(bucket: storage.Bucket) -> None:
    """DISCOVERY, iamConfiguration.bucketPolicyOnly: "populated with identical information as
    the uniformBucketLevelAccess field"; setting one leaves publicAccessPrevention as it was."""
    bucket.iam_configuration.uniform_bucket_level_access_enabled = True
    bucket.patch()
    config = bucket.client.get_bucket(bucket.name)._properties["iamConfiguration"]
    assert config["uniformBucketLevelAccess"]["enabled"] is True
    assert config["bucketPolicyOnly"] == config["uniformBucketLevelAccess"]
    assert config["publicAccessPrevention"] == "inherited"


def test_output_only_fields_a_client_sends_are_not_stored(
    local_cloud: LocalCloud, client: storage.Client
) -> None:
    """DISCOVERY: projectNumber, locationType, generation are the server's, whatever is sent."""
    name = f"sent-{uuid.uuid4().hex[:12]}"
    body = {"name": name, "projectNumber": "1", "locationType": "zone", "generation": "7"}
    answer = requests.post(
        f"{local_cloud.url}/storage/v1/b", params={"project": client.project}, json=body,
        timeout=10,
    )  # fmt: skip
    try:
        got = answer.json()
        assert got["projectNumber"] == project_number(client.project)
        assert got["locationType"] == "multi-region" and got["generation"] != "7"
    finally:
        client.bucket(name).delete()


# -- 2. the SDK's bucket-ownership check -------------------------------------------------------
OWNERSHIP_CHECK = textwrap.dedent("""
    import sys
    from google.cloud import aiplatform
    from google.cloud.aiplatform.utils import gcs_utils

    project, *buckets = sys.argv[1:]
    aiplatform.init(project=project, location="us-central1", staging_bucket=f"gs://{buckets[0]}")
    for bucket in buckets:  # a bucket that exists goes through _verify_bucket_ownership
        print(gcs_utils.create_gcs_bucket_for_pipeline_artifacts_if_it_does_not_exist(
            output_artifacts_gcs_dir=f"gs://{bucket}/root", project=project,
            location="us-central1"))
""")


@pytest.fixture(scope="module")
def other_project_cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCloud]:
    """A local cloud whose project is not the default one: what a user's `local up --project`
    gives, where a bucket owned by "local-project" would read as squatted."""
    home = tmp_path_factory.mktemp("other-project-cloud")
    with LocalCloud(home=home, project="squat-check-project") as cloud:
        yield cloud


def test_the_sdk_takes_the_buckets_the_local_cloud_made_as_its_projects(
    other_project_cloud: LocalCloud,
) -> None:
    """gcs_utils._verify_bucket_ownership: the bucket's projectNumber must equal Resource
    Manager's number for the project (resource_manager_utils.get_project_number)."""
    cloud, project = other_project_cloud, other_project_cloud.project
    cloud.storage.ensure_bucket("made-by-the-local-cloud")  # as a pipeline root is made
    made = cloud.context().storage_client().get_bucket("made-by-the-local-cloud")
    assert made.project_number == int(project_number(project))
    env = {**os.environ, **cloud.env()}
    vertexkit = Path(sys.executable).parent / "vertexkit"
    buckets = ["made-by-the-local-cloud", "made-by-the-sdk", "made-by-the-sdk"]
    done = subprocess.run(
        [str(vertexkit), "local", "exec", "--", sys.executable, "-c", OWNERSHIP_CHECK,
         project, *buckets],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == [f"gs://{b}/root" for b in buckets]


# -- 3. media answered with the stored contentType ---------------------------------------------
@pytest.mark.parametrize("content_type", ["text/plain", "text/csv; charset=iso-8859-1"])
def test_media_is_answered_with_the_stored_content_type(
    bucket: storage.Bucket, local_cloud: LocalCloud, content_type: str
) -> None:
    """Cloud Storage serves an object with its Content-Type metadata as stored (Object
    metadata: Content-Type); nothing is added to a text/* type."""
    blob = bucket.blob("typed.txt")
    blob.upload_from_string(b"a,b\n", content_type=content_type)
    media = requests.get(blob.media_link, timeout=10)
    assert media.headers["content-type"] == content_type
    alt = f"{local_cloud.url}/storage/v1/b/{bucket.name}/o/typed.txt"
    assert requests.get(alt, params={"alt": "media"}, timeout=10).headers["content-type"] == (
        content_type
    )
    assert bucket.get_blob("typed.txt").content_type == content_type


def test_gcsfs_reads_back_the_stored_content_type(
    bucket: storage.Bucket, cloud_context: CloudContext
) -> None:
    fs = cloud_context.gcs_filesystem()
    fs.pipe(f"{bucket.name}/plain.txt", b"plain", content_type="text/plain")
    assert fs.info(f"{bucket.name}/plain.txt")["contentType"] == "text/plain"
    assert fs.cat(f"{bucket.name}/plain.txt") == b"plain"


# -- 4. errors in Cloud Storage's shape --------------------------------------------------------
def test_a_missing_bucket_is_googles_404_whole(local_cloud: LocalCloud) -> None:
    answer = requests.get(f"{local_cloud.url}/storage/v1/b/no-such-bucket-{uuid.uuid4().hex[:8]}",
                          timeout=10)  # fmt: skip
    assert answer.status_code == 404 and answer.json() == RECORDED_NO_SUCH_BUCKET


def test_a_missing_object_is_googles_404(bucket: storage.Bucket) -> None:
    """Cloud Storage's words for an object: "No such object: bucket/name" (its JSON API
    errors), also when a generation was asked for."""
    with pytest.raises(exceptions.NotFound) as raised:
        bucket.blob("absent/thing.txt").reload()
    message = f"No such object: {bucket.name}/absent/thing.txt"
    assert raised.value.response.json() == _error(404, message, "notFound")
    with pytest.raises(exceptions.NotFound) as raised:
        bucket.blob("absent/thing.txt", generation=5).reload()
    assert raised.value.response.json()["error"]["message"] == message


def test_a_bucket_created_twice_is_googles_409(bucket: storage.Bucket) -> None:
    with pytest.raises(exceptions.Conflict) as raised:
        bucket.client.create_bucket(bucket.name)
    # googleapi's "Error 409: Your previous request ... you already own it., conflict"
    message = "Your previous request to create the named bucket succeeded and you already own it."
    assert raised.value.response.json() == _error(409, message, "conflict")


def test_a_failed_precondition_is_a_412_without_status(bucket: storage.Bucket) -> None:
    blob = bucket.blob("once.txt")
    blob.upload_from_string(b"1", if_generation_match=0)
    with pytest.raises(exceptions.PreconditionFailed) as raised:
        blob.upload_from_string(b"2", if_generation_match=0)
    # Cloud Storage's 412 (its JSON API's words; reason conditionNotMet), no status field
    message = "At least one of the pre-conditions you specified did not hold."
    assert raised.value.response.json() == _error(412, message, "conditionNotMet")


def test_vertex_errors_keep_their_status(local_cloud: LocalCloud) -> None:
    """The shared error JSON is unchanged for Vertex AI (google.rpc.Status: code, status)."""
    url = f"{local_cloud.url}/v1/projects/local-project/locations/us-central1/datasets/404404"
    error = requests.get(url, timeout=10).json()["error"]
    assert error["code"] == 404 and error["status"] == "NOT_FOUND"
