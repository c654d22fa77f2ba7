"""Cloud Storage methods beyond objects and buckets, through the real google-cloud-storage client
(and its authorized `_connection.api_request` where the client has no wrapper: folders, managed
folders, operations, storage layout): ACLs, notification configs, HMAC keys, the service agent,
retention-policy locks, folders of hierarchical-namespace buckets and managed folders.

Expected values come from Google: the storage.v1 discovery document (kinds, field names), the
REST reference pages of each method, and the error texts clients have reported from Cloud
Storage (named beside each assertion)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from google.api_core import exceptions
from google.cloud import storage

from vertexkit.context import CloudContext
from vertexkit.local.projects import project_number


@pytest.fixture
def client(cloud_context: CloudContext) -> storage.Client:
    return cloud_context.storage_client()


@pytest.fixture
def bucket(client: storage.Client) -> Iterator[storage.Bucket]:
    made = client.create_bucket(f"cov-{uuid.uuid4().hex[:12]}")
    yield made
    made.delete(force=True)


@pytest.fixture
def hns_bucket(client: storage.Client) -> Iterator[storage.Bucket]:
    made = client.bucket(f"hns-{uuid.uuid4().hex[:12]}")
    made.hierarchical_namespace_enabled = True
    made.iam_configuration.uniform_bucket_level_access_enabled = True  # HNS requires it
    made.create()
    yield made
    made.delete(force=True)


def call(client: storage.Client, method: str, path: str, **kwargs: Any) -> Any:
    return client._connection.api_request(method=method, path=path, **kwargs)


def team(client: storage.Client, name: str) -> str:
    return f"project-{name}-{project_number(client.project)}"


# -- ACLs --------------------------------------------------------------------------------------
def test_bucket_acl_defaults_grant_and_revoke(bucket: storage.Bucket) -> None:
    bucket.acl.reload()
    # A new bucket's ACL is projectPrivate (REST reference, buckets.insert predefinedAcl).
    assert set(bucket.acl.get_entities()) >= {
        bucket.acl.entity_from_dict({"entity": team(bucket.client, "owners"), "role": "OWNER"})
    }
    bucket.acl.user("alice@example.com").grant_write()
    bucket.acl.save()
    again = bucket.client.bucket(bucket.name)
    again.acl.reload()
    assert "WRITER" in again.acl.user("alice@example.com").get_roles()
    entry = call(bucket.client, "GET", f"/b/{bucket.name}/acl/user-alice@example.com")
    # BucketAccessControl (discovery document): kind, entity, role, email, bucket.
    assert entry["kind"] == "storage#bucketAccessControl"
    assert (entry["email"], entry["role"], entry["bucket"]) == (
        "alice@example.com",
        "WRITER",
        bucket.name,
    )
    call(bucket.client, "DELETE", f"/b/{bucket.name}/acl/user-alice@example.com")
    with pytest.raises(exceptions.NotFound):
        call(bucket.client, "GET", f"/b/{bucket.name}/acl/user-alice@example.com")


def test_acl_roles_and_entities_are_validated(bucket: storage.Bucket) -> None:
    client = bucket.client
    # Bucket roles are OWNER, READER, WRITER; object roles OWNER, READER (REST reference).
    with pytest.raises(exceptions.BadRequest, match="role"):
        call(client, "POST", f"/b/{bucket.name}/acl", data={"entity": "allUsers", "role": "ADMIN"})
    with pytest.raises(exceptions.BadRequest, match="role"):
        call(
            client,
            "POST",
            f"/b/{bucket.name}/defaultObjectAcl",
            data={"entity": "allUsers", "role": "WRITER"},
        )
    with pytest.raises(exceptions.BadRequest, match="entity"):
        call(client, "POST", f"/b/{bucket.name}/acl", data={"entity": "nobody", "role": "READER"})
    made = call(
        client,
        "POST",
        f"/b/{bucket.name}/acl",
        data={"entity": "domain-example.com", "role": "READER"},
    )
    assert made["domain"] == "example.com"  # BucketAccessControl.domain
    patched = call(
        client, "PATCH", f"/b/{bucket.name}/acl/domain-example.com", data={"role": "OWNER"}
    )
    assert patched["role"] == "OWNER"
    listed = call(client, "GET", f"/b/{bucket.name}/acl")
    assert listed["kind"] == "storage#bucketAccessControls"
    viewers = [e for e in listed["items"] if e["entity"] == team(client, "viewers")]
    assert viewers[0]["projectTeam"] == {  # BucketAccessControl.projectTeam
        "projectNumber": project_number(client.project),
        "team": "viewers",
    }


def test_default_object_acl_seeds_new_objects(bucket: storage.Bucket) -> None:
    bucket.default_object_acl.reload()
    bucket.default_object_acl.all().grant_read()
    bucket.default_object_acl.save()
    blob = bucket.blob("seeded.txt")
    blob.upload_from_string(b"x")
    blob.acl.reload()
    # A new object takes the bucket's default object ACL (REST reference, defaultObjectAcl).
    assert "READER" in blob.acl.all().get_roles()
    blob.acl.all().revoke_read()
    blob.acl.save()
    fresh = bucket.blob("seeded.txt")
    fresh.acl.reload()
    assert not fresh.acl.all().get_roles()
    entry = call(
        bucket.client,
        "POST",
        f"/b/{bucket.name}/o/seeded.txt/acl",
        data={"entity": "user-bob@example.com", "role": "READER"},
    )
    # ObjectAccessControl (discovery document): object, generation, kind.
    assert entry["kind"] == "storage#objectAccessControl"
    assert (entry["object"], entry["generation"]) == ("seeded.txt", str(blob.generation))
    with pytest.raises(exceptions.BadRequest, match="role"):
        call(
            bucket.client,
            "PUT",
            f"/b/{bucket.name}/o/seeded.txt/acl/user-bob@example.com",
            data={"role": "WRITER"},
        )


def test_uploads_honour_predefined_acl(bucket: storage.Bucket) -> None:
    small, large = bucket.blob("small.txt"), bucket.blob("large.bin", chunk_size=256 * 1024)
    small.upload_from_string(b"x", predefined_acl="publicRead")  # multipart
    large.upload_from_string(b"y" * 300 * 1024, predefined_acl="publicRead")  # resumable
    for blob in (small, large):
        blob.acl.reload()
        # publicRead: "Object owner gets OWNER access, and allUsers get READER access."
        assert blob.acl.all().get_roles() == {"READER"}


def test_uniform_bucket_level_access_refuses_acl_calls(bucket: storage.Bucket) -> None:
    blob = bucket.blob("u.txt")
    blob.upload_from_string(b"x")
    bucket.iam_configuration.uniform_bucket_level_access_enabled = True
    bucket.patch()
    # Cloud Storage's 400s, as terraform-provider-google and python-storage users report them.
    with pytest.raises(exceptions.BadRequest, match="Cannot use ACL API to update bucket policy"):
        bucket.acl.reload()
    with pytest.raises(exceptions.BadRequest, match="Cannot get legacy ACL for an object"):
        blob.acl.reload()
    # googleapis/nodejs-storage#1230: an upload asking for an ACL on such a bucket.
    with pytest.raises(exceptions.BadRequest, match="Cannot insert legacy ACL for an object"):
        bucket.blob("v.txt").upload_from_string(b"x", predefined_acl="publicRead")


# -- notifications -------------------------------------------------------------------------------
def test_notification_configs_are_recorded(bucket: storage.Bucket) -> None:
    made = bucket.notification(
        topic_name="uploads",
        topic_project="other-project",
        event_types=["OBJECT_FINALIZE"],
        payload_format="JSON_API_V1",
    )
    made.create()
    # Notification (discovery document): id, topic in the //pubsub.googleapis.com form.
    assert made.notification_id
    assert made.topic_name == "uploads" and made.topic_project == "other-project"
    assert [n.notification_id for n in bucket.list_notifications()] == [made.notification_id]
    fetched = bucket.get_notification(made.notification_id)
    assert fetched.event_types == ["OBJECT_FINALIZE"]
    made.delete()
    assert not made.exists()
    with pytest.raises(exceptions.BadRequest, match="event_types"):
        bucket.notification(topic_name="t", event_types=["OBJECT_RENAMED"]).create()


# -- HMAC keys and the service agent ---------------------------------------------------------------
def test_hmac_key_lifecycle(client: storage.Client) -> None:
    email = f"sa-{uuid.uuid4().hex[:6]}@{client.project}.iam.gserviceaccount.com"
    metadata, secret = client.create_hmac_key(service_account_email=email)
    # HmacKey: the secret comes with create only; metadata state ACTIVE (REST reference).
    assert len(secret) == 40 and metadata.state == "ACTIVE"
    assert metadata.access_id.startswith("GOOG1E")
    assert [k.access_id for k in client.list_hmac_keys(service_account_email=email)] == [
        metadata.access_id
    ]
    with pytest.raises(exceptions.BadRequest):  # an ACTIVE key cannot be deleted
        metadata.delete()
    metadata.state = "INACTIVE"
    metadata.update()
    assert client.get_hmac_key_metadata(metadata.access_id).state == "INACTIVE"
    metadata.delete()
    assert not list(client.list_hmac_keys(service_account_email=email))
    shown = list(client.list_hmac_keys(service_account_email=email, show_deleted_keys=True))
    assert [k.state for k in shown] == ["DELETED"]


def test_service_agent_email(client: storage.Client) -> None:
    # REST reference, projects.serviceAccount: service-PROJECT_NUMBER@gs-project-accounts...
    number = project_number(client.project)
    assert client.get_service_account_email() == (
        f"service-{number}@gs-project-accounts.iam.gserviceaccount.com"
    )


# -- bucket methods ------------------------------------------------------------------------------
def test_lock_retention_policy(bucket: storage.Bucket) -> None:
    bucket.retention_period = 60
    bucket.patch()
    with pytest.raises(exceptions.BadRequest, match="ifMetagenerationMatch"):
        call(bucket.client, "POST", f"/b/{bucket.name}/lockRetentionPolicy")
    with pytest.raises(exceptions.PreconditionFailed):
        call(
            bucket.client,
            "POST",
            f"/b/{bucket.name}/lockRetentionPolicy",
            query_params={"ifMetagenerationMatch": "1"},
        )
    bucket.lock_retention_policy()
    assert bucket.retention_policy_locked is True  # Bucket.retentionPolicy.isLocked
    # A locked policy's period can grow, never shrink (REST reference, Bucket Lock docs).
    bucket.retention_period = 30
    with pytest.raises(exceptions.Forbidden):
        bucket.patch()
    bucket.retention_period = 120
    bucket.patch()
    assert bucket.retention_policy_locked is True and bucket.retention_period == 120


def test_hierarchical_namespace_needs_uniform_access(client: storage.Client) -> None:
    # "Access control: choose Uniform" (Create and manage buckets with hierarchical namespace).
    made = client.bucket(f"hns-{uuid.uuid4().hex[:12]}")
    made.hierarchical_namespace_enabled = True
    with pytest.raises(exceptions.BadRequest, match="uniformBucketLevelAccess"):
        made.create()


def test_storage_layout_and_restore(bucket: storage.Bucket, hns_bucket: storage.Bucket) -> None:
    layout = call(bucket.client, "GET", f"/b/{hns_bucket.name}/storageLayout")
    # BucketStorageLayout (discovery document).
    assert layout["kind"] == "storage#storageLayout"
    assert layout["hierarchicalNamespace"] == {"enabled": True}
    assert layout["location"] == bucket.client.get_bucket(hns_bucket.name).location
    with pytest.raises(exceptions.MethodNotImplemented, match="soft-deleted"):
        call(bucket.client, "POST", f"/b/{bucket.name}/restore", query_params={"generation": "1"})
    with pytest.raises(exceptions.MethodNotImplemented, match="no soft delete"):
        call(
            bucket.client,
            "POST",
            f"/b/{bucket.name}/o/gone.txt/restore",
            query_params={"generation": "1"},
        )


# -- folders of hierarchical-namespace buckets and their operations -------------------------------
def test_folders_and_rename_operation(hns_bucket: storage.Bucket) -> None:
    client, base = hns_bucket.client, f"/b/{hns_bucket.name}"
    made = call(client, "POST", f"{base}/folders", data={"name": "runs/"})
    assert (made["kind"], made["name"], made["metageneration"]) == ("storage#folder", "runs/", "1")
    with pytest.raises(exceptions.NotFound):  # a missing parent needs recursive=true
        call(client, "POST", f"{base}/folders", data={"name": "a/b/"})
    call(
        client, "POST", f"{base}/folders", data={"name": "a/b/"}, query_params={"recursive": "true"}
    )
    hns_bucket.blob("runs/1/model.pkl").upload_from_string(b"weights")
    names = [f["name"] for f in call(client, "GET", f"{base}/folders")["items"]]
    assert names == ["a/", "a/b/", "runs/", "runs/1/"]  # runs/1/ implied by the object
    with pytest.raises(exceptions.Conflict):
        call(client, "DELETE", f"{base}/folders/runs%2F")
    operation = call(client, "POST", f"{base}/folders/runs%2F/renameTo/folders/done%2F")
    # GoogleLongrunningOperation: kind storage#operation, name .../operations/{id}.
    assert operation["kind"] == "storage#operation" and operation["done"] is True
    assert operation["name"].startswith(f"projects/_/buckets/{hns_bucket.name}/operations/")
    assert hns_bucket.blob("done/1/model.pkl").download_as_bytes() == b"weights"
    assert not hns_bucket.blob("runs/1/model.pkl").exists()
    operation_id = operation["name"].rsplit("/", 1)[1]
    assert call(client, "GET", f"{base}/operations/{operation_id}")["done"] is True
    listed = call(client, "GET", f"{base}/operations")
    assert listed["kind"] == "storage#operations" and len(listed["operations"]) == 1
    call(client, "POST", f"{base}/folders/done%2F/deleteRecursive")
    assert not hns_bucket.blob("done/1/model.pkl").exists()


def test_folders_need_hierarchical_namespace(bucket: storage.Bucket) -> None:
    with pytest.raises(exceptions.BadRequest, match="hierarchical namespace"):
        call(bucket.client, "POST", f"/b/{bucket.name}/folders", data={"name": "x/"})


# -- managed folders ---------------------------------------------------------------------------
def test_managed_folders(bucket: storage.Bucket) -> None:
    client, base = bucket.client, f"/b/{bucket.name}/managedFolders"
    made = call(client, "POST", base, data={"name": "team/"})
    assert made["kind"] == "storage#managedFolder" and made["name"] == "team/"
    with pytest.raises(exceptions.Conflict):
        call(client, "POST", base, data={"name": "team/"})
    policy = {"bindings": [{"role": "roles/storage.objectViewer", "members": ["allUsers"]}]}
    call(client, "PUT", f"{base}/team%2F/iam", data=policy)
    got = call(client, "GET", f"{base}/team%2F/iam")
    assert got["kind"] == "storage#policy" and got["bindings"] == policy["bindings"]
    tested = call(
        client,
        "GET",
        f"{base}/team%2F/iam/testPermissions",
        query_params={"permissions": ["storage.objects.get"]},
    )
    assert tested["permissions"] == ["storage.objects.get"]
    updated = call(
        client, "PATCH", f"{base}/team%2F", data={}, query_params={"ifMetagenerationMatch": "1"}
    )
    assert updated["metageneration"] == "2"
    with pytest.raises(exceptions.BadRequest, match="rapidCacheConfig"):
        call(client, "PATCH", f"{base}/team%2F", data={"rapidCacheConfig": {}})
    bucket.blob("team/notes.txt").upload_from_string(b"x")
    with pytest.raises(exceptions.Conflict):  # not empty without allowNonEmpty
        call(client, "DELETE", f"{base}/team%2F")
    call(client, "DELETE", f"{base}/team%2F", query_params={"allowNonEmpty": "true"})
    assert "items" not in call(client, "GET", base)
