"""StorageRest against the local cloud's Cloud Storage, checked with google-cloud-storage (the
client Google ships for the same JSON API) on the same objects."""

from __future__ import annotations

import uuid

import pytest

from vertexkit import storage_rest
from vertexkit.context import CloudContext
from vertexkit.storage_rest import StorageRest
from vertexkit.vertex_rest import ServiceRefused


@pytest.fixture
def bucket(cloud_context: CloudContext) -> str:
    name = f"storage-rest-{uuid.uuid4().hex[:12]}"
    StorageRest.for_context(cloud_context).ensure_bucket(cloud_context.project, name)
    return name


def test_a_bucket_is_made_once_and_a_second_ask_leaves_it(
    cloud_context: CloudContext, bucket: str
) -> None:
    client = cloud_context.storage_client()
    client.bucket(bucket).blob("kept.txt").upload_from_string(b"kept")
    # buckets.insert of a name in use is a 409 (JSON API reference, buckets/insert); ensure
    # reads it as "there already" and changes nothing.
    StorageRest.for_context(cloud_context).ensure_bucket(cloud_context.project, bucket)
    assert client.get_bucket(bucket).name == bucket
    assert client.bucket(bucket).blob("kept.txt").download_as_bytes() == b"kept"


def test_an_object_reads_back_byte_for_byte(cloud_context: CloudContext, bucket: str) -> None:
    data = bytes(range(256)) * 3  # not text: the read must not decode
    name = "dir/a name with spaces & a #hash.bin"  # escaped as one path segment
    cloud_context.storage_client().bucket(bucket).blob(name).upload_from_string(data)
    assert StorageRest.for_context(cloud_context).read(bucket, name) == data


def test_a_missing_object_is_a_404(cloud_context: CloudContext, bucket: str) -> None:
    with pytest.raises(ServiceRefused) as refused:
        StorageRest.for_context(cloud_context).read(bucket, "absent.json")
    assert refused.value.code == 404


@pytest.mark.parametrize("page_size", [None, 2], ids=["default-pages", "pages-of-2"])
def test_names_are_every_object_under_the_prefix(
    cloud_context: CloudContext, bucket: str, page_size: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storage_rest, "PAGE_SIZE", page_size)
    client = cloud_context.storage_client()
    for name in ("out/data-0.parquet", "out/data-1.parquet", "out/sub/x", "other/y", "outer"):
        client.bucket(bucket).blob(name).upload_from_string(b"-")
    expected = [blob.name for blob in client.list_blobs(bucket, prefix="out/")]
    listed = list(StorageRest.for_context(cloud_context).names(bucket, "out/"))
    assert listed == expected == ["out/data-0.parquet", "out/data-1.parquet", "out/sub/x"]
