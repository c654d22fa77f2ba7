"""Composed objects through the real google-cloud-storage client: componentCount counts the
components (a composite source counts its own), survives metadata changes and copies, cannot be
set by a client, and a composite has a CRC32C but no MD5, as in Cloud Storage."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from google.cloud import storage

from vertexkit.context import CloudContext


@pytest.fixture
def bucket(cloud_context: CloudContext) -> Iterator[storage.Bucket]:
    client = cloud_context.storage_client()
    made = client.create_bucket(f"compose-{uuid.uuid4().hex[:8]}")
    yield made
    made.delete(force=True)


def upload(bucket: storage.Bucket, name: str, data: bytes) -> storage.Blob:
    blob = bucket.blob(name)
    blob.upload_from_string(data)
    return blob


def test_component_count_adds_up(bucket: storage.Bucket) -> None:
    a, b, c = (upload(bucket, n, n.encode()) for n in ("a", "b", "c"))
    assert bucket.get_blob("a").component_count is None
    ab = bucket.blob("ab")
    ab.compose([a, b])
    stored = bucket.get_blob("ab")
    assert stored.component_count == 2
    assert stored.md5_hash is None and stored.crc32c
    abc = bucket.blob("abc")
    abc.compose([stored, c])
    assert bucket.get_blob("abc").component_count == 3
    assert abc.download_as_bytes() == b"abc"


def test_component_count_survives_patch_and_copy(bucket: storage.Bucket) -> None:
    parts = [upload(bucket, n, b"x") for n in ("p1", "p2")]
    whole = bucket.blob("whole")
    whole.compose(parts)
    whole.metadata = {"k": "v"}
    whole.patch()
    assert bucket.get_blob("whole").component_count == 2
    bucket.copy_blob(whole, bucket, "copy")
    assert bucket.get_blob("copy").component_count == 2


def test_a_client_cannot_set_component_count(bucket: storage.Bucket) -> None:
    blob = upload(bucket, "plain", b"data")
    blob._properties["componentCount"] = 5
    blob._changes.add("componentCount")
    blob.patch()
    stored = bucket.get_blob("plain")
    assert stored.component_count is None and stored.md5_hash
