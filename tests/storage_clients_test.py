"""The local Cloud Storage through the real clients: google-cloud-storage, gcsfs, pandas."""

from __future__ import annotations

import base64
import hashlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import requests
from google.api_core import exceptions
from google.cloud import storage

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud

MB = 1024 * 1024


@pytest.fixture
def client(cloud_context: CloudContext) -> storage.Client:
    return cloud_context.storage_client()


@pytest.fixture
def bucket(client: storage.Client) -> Iterator[storage.Bucket]:
    created = client.create_bucket(f"test-{uuid.uuid4().hex[:12]}")
    yield created
    created.delete(force=True)


def _md5(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


# -- buckets -----------------------------------------------------------------------------------
def test_bucket_lifecycle(client: storage.Client) -> None:
    name = f"life-{uuid.uuid4().hex[:12]}"
    client.create_bucket(name)
    with pytest.raises(exceptions.Conflict):
        client.create_bucket(name)
    assert client.get_bucket(name).name == name
    assert name in [b.name for b in client.list_buckets()]
    client.bucket(name).blob("keep.txt").upload_from_string(b"x")
    with pytest.raises(exceptions.Conflict, match="not empty"):
        client.bucket(name).delete()
    client.bucket(name).delete(force=True)
    with pytest.raises(exceptions.NotFound):
        client.get_bucket(name)


def test_bucket_patch_labels(bucket: storage.Bucket) -> None:
    bucket.labels = {"team": "ml"}
    bucket.patch()
    assert bucket.client.get_bucket(bucket.name).labels == {"team": "ml"}
    assert bucket.metageneration == 2


# -- uploads and downloads ---------------------------------------------------------------------
def test_multipart_upload_returns_hashes(bucket: storage.Bucket) -> None:
    blob = bucket.blob("dir/hello.txt")
    blob.upload_from_string(b"hello world", content_type="text/plain")
    assert blob.md5_hash == _md5(b"hello world")
    assert blob.crc32c == "yZRlqg=="  # crc32c("hello world"), as Cloud Storage reports it
    assert blob.size == 11 and blob.generation and blob.metageneration == 1
    fetched = bucket.get_blob("dir/hello.txt")
    assert fetched.content_type == "text/plain"
    assert fetched.download_as_bytes() == b"hello world"


def test_media_upload_raw(bucket: storage.Bucket, local_cloud: LocalCloud) -> None:
    url = f"{local_cloud.url}/upload/storage/v1/b/{bucket.name}/o"
    answer = requests.post(
        url,
        params={"uploadType": "media", "name": "raw/media.bin"},
        data=b"\x00\x01media",
        headers={"Content-Type": "application/x-test"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    blob = bucket.get_blob("raw/media.bin")
    assert blob.content_type == "application/x-test"
    assert blob.download_as_bytes() == b"\x00\x01media"


def test_resumable_upload_50mb_in_chunks(bucket: storage.Bucket, tmp_path: Path) -> None:
    data = os.urandom(50 * MB + 123)
    source = tmp_path / "big.bin"
    source.write_bytes(data)
    blob = bucket.blob("big/fifty.bin", chunk_size=4 * MB)
    blob.upload_from_filename(str(source))
    assert blob.size == len(data) and blob.md5_hash == _md5(data)
    target = tmp_path / "back.bin"
    bucket.blob("big/fifty.bin").download_to_filename(str(target))  # verifies crc32c
    assert target.read_bytes() == data
    part = bucket.blob("big/fifty.bin").download_as_bytes(start=10 * MB, end=10 * MB + 99)
    assert part == data[10 * MB : 10 * MB + 100]


def test_resumable_status_query_and_resume(bucket: storage.Bucket, local_cloud: LocalCloud) -> None:
    """The protocol itself: 308 + Range after a partial chunk, then the rest completes it."""
    start = requests.post(
        f"{local_cloud.url}/upload/storage/v1/b/{bucket.name}/o",
        params={"uploadType": "resumable"},
        json={"name": "resume/me.bin", "contentType": "application/x-test"},
        timeout=10,
    )
    location = start.headers["Location"]
    data = os.urandom(1000)
    first = requests.put(
        location, data=data[:400], headers={"Content-Range": "bytes 0-399/*"}, timeout=10
    )
    assert first.status_code == 308 and first.headers["Range"] == "bytes=0-399"
    status = requests.put(location, headers={"Content-Range": "bytes */1000"}, timeout=10)
    assert status.status_code == 308 and status.headers["Range"] == "bytes=0-399"
    # Overlapping resend (300..999): the server keeps 0..399 and appends only what is new.
    last = requests.put(
        location, data=data[300:], headers={"Content-Range": "bytes 300-999/1000"}, timeout=10
    )
    assert last.status_code == 200, last.text
    assert last.json()["md5Hash"] == _md5(data)
    assert bucket.blob("resume/me.bin").download_as_bytes() == data


def test_range_download_suffix_and_past_end(
    bucket: storage.Bucket, local_cloud: LocalCloud
) -> None:
    bucket.blob("r.bin").upload_from_string(b"0123456789")
    url = f"{local_cloud.url}/download/storage/v1/b/{bucket.name}/o/r.bin?alt=media"
    suffix = requests.get(url, headers={"Range": "bytes=-3"}, timeout=10)
    assert suffix.status_code == 206 and suffix.content == b"789"
    assert suffix.headers["Content-Range"] == "bytes 7-9/10"
    assert requests.get(url, headers={"Range": "bytes=20-"}, timeout=10).status_code == 416
    via_json_api = f"{local_cloud.url}/storage/v1/b/{bucket.name}/o/r.bin?alt=media"
    assert requests.get(via_json_api, timeout=10).content == b"0123456789"


def test_client_declared_md5_must_match(bucket: storage.Bucket) -> None:
    blob = bucket.blob("checked.txt")
    blob.md5_hash = _md5(b"something else")
    with pytest.raises(exceptions.BadRequest, match="md5Hash"):
        blob.upload_from_string(b"payload", checksum=None)
    assert bucket.get_blob("checked.txt") is None


# -- listing -----------------------------------------------------------------------------------
def test_list_paging_prefix_delimiter(bucket: storage.Bucket, client: storage.Client) -> None:
    names = [f"data/part-{i:03d}.csv" for i in range(25)] + ["data/sub/x.csv", "top.txt"]
    for name in names:
        bucket.blob(name).upload_from_string(name.encode())
    pages = list(client.list_blobs(bucket.name, prefix="data/part-", page_size=10).pages)
    assert [len(list(p)) for p in pages] == [10, 10, 5]
    every = [b.name for b in client.list_blobs(bucket.name)]
    assert every == sorted(names)
    assert len(list(client.list_blobs(bucket.name, max_results=7))) == 7
    top = client.list_blobs(bucket.name, delimiter="/")
    assert [b.name for b in top] == ["top.txt"] and top.prefixes == {"data/"}
    level = client.list_blobs(bucket.name, prefix="data/", delimiter="/")
    assert len(list(level)) == 25 and level.prefixes == {"data/sub/"}
    window = client.list_blobs(
        bucket.name, start_offset="data/part-010", end_offset="data/part-013"
    )
    assert [b.name for b in window] == [f"data/part-{i:03d}.csv" for i in (10, 11, 12)]
    globbed = client.list_blobs(bucket.name, match_glob="**/x.csv")
    assert [b.name for b in globbed] == ["data/sub/x.csv"]


def test_folder_placeholder(bucket: storage.Bucket, client: storage.Client) -> None:
    bucket.blob("empty-folder/").upload_from_string(b"")
    listed = client.list_blobs(bucket.name, delimiter="/")
    assert list(listed) == [] and listed.prefixes == {"empty-folder/"}
    assert [b.name for b in client.list_blobs(bucket.name, prefix="empty-folder/")] == [
        "empty-folder/"
    ]
    with pytest.raises(exceptions.BadRequest, match="folder placeholders"):
        bucket.blob("full-folder/").upload_from_string(b"data")
    bucket.blob("empty-folder/").delete()
    assert list(client.list_blobs(bucket.name)) == []


# -- generations and preconditions -------------------------------------------------------------
def test_preconditions(bucket: storage.Bucket) -> None:
    blob = bucket.blob("pre.txt")
    blob.upload_from_string(b"v1", if_generation_match=0)
    first = blob.generation
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.blob("pre.txt").upload_from_string(b"v2", if_generation_match=0)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.blob("pre.txt").upload_from_string(b"v2", if_generation_match=first + 1)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.blob("pre.txt").upload_from_string(b"v2", if_generation_not_match=first)
    bucket.blob("pre.txt").upload_from_string(b"v2", if_generation_match=first)
    current = bucket.get_blob("pre.txt")
    assert current.generation > first and current.download_as_bytes() == b"v2"
    with pytest.raises(exceptions.PreconditionFailed):
        current.delete(if_metageneration_match=5)
    with pytest.raises(exceptions.NotFound):
        bucket.blob("pre.txt", generation=first).download_as_bytes()
    assert bucket.blob("pre.txt", generation=current.generation).download_as_bytes() == b"v2"
    current.delete(if_generation_match=current.generation)
    assert not bucket.blob("pre.txt").exists()


def test_metadata_patch_and_metageneration(bucket: storage.Bucket) -> None:
    blob = bucket.blob("meta.json")
    blob.metadata = {"owner": "ada", "stage": "raw"}
    blob.upload_from_string(b"{}", content_type="application/json")
    blob.metadata = {"stage": "clean", "owner": None}  # None deletes the key
    blob.content_type = "text/plain"
    blob.patch(if_metageneration_match=1)
    fetched = bucket.get_blob("meta.json")
    assert fetched.metadata == {"stage": "clean"}
    assert fetched.content_type == "text/plain" and fetched.metageneration == 2
    assert fetched.generation == blob.generation  # metadata changes keep the generation
    with pytest.raises(exceptions.PreconditionFailed):
        fetched.patch(if_metageneration_match=1)


# -- copy, rewrite, compose --------------------------------------------------------------------
def test_copy_rewrite_compose(bucket: storage.Bucket, client: storage.Client) -> None:
    source = bucket.blob("src/a.txt")
    source.metadata = {"k": "v"}
    source.upload_from_string(b"alpha-", content_type="text/plain")
    bucket.blob("src/b.txt").upload_from_string(b"beta")
    copied = bucket.copy_blob(source, bucket, "dst/copy.txt")
    assert copied.download_as_bytes() == b"alpha-" and copied.metadata == {"k": "v"}
    other = client.create_bucket(f"other-{uuid.uuid4().hex[:10]}")
    try:
        target = other.blob("rewritten.txt")
        token, written, total = target.rewrite(source)
        assert token is None and written == total == 6
        assert other.get_blob("rewritten.txt").md5_hash == _md5(b"alpha-")
    finally:
        other.delete(force=True)
    composed = bucket.blob("dst/composed.txt")
    composed.content_type = "text/plain"
    composed.compose([source, bucket.blob("src/b.txt")], if_generation_match=0)
    assert composed.download_as_bytes() == b"alpha-beta"
    assert bucket.get_blob("dst/composed.txt").crc32c == composed.crc32c
    with pytest.raises(exceptions.NotFound):
        composed.compose([bucket.blob("src/missing.txt")])
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.copy_blob(source, bucket, "dst/copy.txt", if_generation_match=0)


# -- names and collisions ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "../escape.txt",
        "a/../../b",
        "/absolute",
        "a//b",
        "./here",
        "a/./b",
        "nul\x00byte",
        "x" * 1025,
    ],
)
def test_bad_object_names_are_400(bucket: storage.Bucket, name: str) -> None:
    with pytest.raises(exceptions.BadRequest):
        bucket.blob(name).upload_from_string(b"no")


@pytest.mark.parametrize(
    "name", ["UPPER", "ab", "-dash-first", "under_score_", "goog-bucket", "192.168.1.1", "a..b"]
)
def test_bad_bucket_names_are_400(local_cloud: LocalCloud, name: str) -> None:
    # Raw requests: google-cloud-storage pre-checks some of these names itself.
    answer = requests.post(
        f"{local_cloud.url}/storage/v1/b", params={"project": "p"}, json={"name": name}, timeout=10
    )
    assert answer.status_code == 400 and "bucket name" in answer.json()["error"]["message"]
    assert not (local_cloud.home / "storage" / name).exists()


def test_file_and_folder_names_collide_with_a_clear_409(bucket: storage.Bucket) -> None:
    bucket.blob("model").upload_from_string(b"file")
    with pytest.raises(exceptions.Conflict, match="cannot also be a folder"):
        bucket.blob("model/weights.bin").upload_from_string(b"x")
    bucket.blob("ckpt/1.bin").upload_from_string(b"x")
    with pytest.raises(exceptions.Conflict, match="cannot also be an object"):
        bucket.blob("ckpt").upload_from_string(b"x")


# -- the store on disk -------------------------------------------------------------------------
def test_files_written_on_disk_are_objects(bucket: storage.Bucket, local_cloud: LocalCloud) -> None:
    model_dir = local_cloud.home / "storage" / bucket.name / "model"
    model_dir.mkdir(parents=True)
    (model_dir / "model.pkl").write_bytes(b"pickled")
    (model_dir / "saved" / "variables").mkdir(parents=True)
    (model_dir / "saved" / "variables" / "v.index").write_bytes(b"index")
    names = [b.name for b in bucket.client.list_blobs(bucket.name, prefix="model/")]
    assert names == ["model/model.pkl", "model/saved/variables/v.index"]
    blob = bucket.get_blob("model/model.pkl")
    assert blob.md5_hash == _md5(b"pickled") and blob.size == 7
    assert blob.download_as_bytes() == b"pickled"
    (model_dir / "model.pkl").write_bytes(b"retrained!")  # a process rewrites it in place
    again = bucket.get_blob("model/model.pkl")
    assert again.md5_hash == _md5(b"retrained!") and again.generation != blob.generation
    assert again.download_as_bytes() == b"retrained!"


def test_state_survives_restart(tmp_path: Path) -> None:
    with LocalCloud(home=tmp_path) as first:
        client = first.context().storage_client()
        created = client.bucket("persisted-bucket")
        created.labels = {"a": "b"}
        created = client.create_bucket(created)
        blob = created.blob("keep/me.txt")
        blob.metadata = {"why": "restart"}
        blob.upload_from_string(b"still here", content_type="text/plain")
        generation = blob.generation
    with LocalCloud(home=tmp_path) as second:
        client = second.context().storage_client()
        assert client.get_bucket("persisted-bucket").labels == {"a": "b"}
        again = client.bucket("persisted-bucket").get_blob("keep/me.txt")
        assert again.generation == generation and again.metadata == {"why": "restart"}
        assert again.content_type == "text/plain"
        assert again.download_as_bytes() == b"still here"


# -- gcsfs and pandas --------------------------------------------------------------------------
def test_pandas_parquet_and_csv_through_gcsfs(
    bucket: storage.Bucket, cloud_context: CloudContext
) -> None:
    options = cloud_context.storage_options()
    frame = pd.DataFrame({"id": range(1000), "label": ["a", "b"] * 500, "x": [0.5] * 1000})
    frame.to_parquet(f"gs://{bucket.name}/tables/t.parquet", storage_options=options)
    frame.to_csv(f"gs://{bucket.name}/tables/t.csv", index=False, storage_options=options)
    parquet = pd.read_parquet(f"gs://{bucket.name}/tables/t.parquet", storage_options=options)
    csv = pd.read_csv(f"gs://{bucket.name}/tables/t.csv", storage_options=options)
    pd.testing.assert_frame_equal(parquet, frame)
    pd.testing.assert_frame_equal(csv, frame)
    on_disk = cloud_context.storage_client().bucket(bucket.name).get_blob("tables/t.parquet")
    assert on_disk.size > 0 and on_disk.crc32c


def test_gcsfs_filesystem_operations(bucket: storage.Bucket, cloud_context: CloudContext) -> None:
    fs = cloud_context.gcs_filesystem()
    root = f"{bucket.name}/fs"
    fs.pipe(f"{root}/a.txt", b"aaa")
    fs.pipe(f"{root}/nested/b.txt", b"bbbb")
    big = os.urandom(12 * MB)  # above gcsfs' 5 MB block: a resumable upload over POSTs
    with fs.open(f"{root}/big.bin", "wb") as out:
        out.write(big)
    fs.invalidate_cache()
    assert sorted(fs.ls(root)) == [f"{root}/a.txt", f"{root}/big.bin", f"{root}/nested"]
    assert fs.info(f"{root}/nested")["type"] == "directory"
    assert fs.info(f"{root}/a.txt")["size"] == 3
    assert fs.cat(f"{root}/big.bin") == big
    assert fs.cat_file(f"{root}/big.bin", start=5, end=15) == big[5:15]
    fs.cp(f"{root}/a.txt", f"{root}/copy.txt")
    fs.mv(f"{root}/nested/b.txt", f"{root}/moved.txt")
    assert fs.cat(f"{root}/copy.txt") == b"aaa" and fs.cat(f"{root}/moved.txt") == b"bbbb"
    assert sorted(fs.find(root)) == [
        f"{root}/{n}" for n in ("a.txt", "big.bin", "copy.txt", "moved.txt")
    ]
    fs.rm(root, recursive=True)
    fs.invalidate_cache()
    assert fs.find(root) == []
