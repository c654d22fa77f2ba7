"""The file-backed object store, below HTTP: layout, derived metadata, listing, sessions."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import pytest

from vertexkit.local.errors import ApiError
from vertexkit.local.storage.models import ObjectStore, Preconditions
from vertexkit.local.storage.names import check_bucket_name, check_object_name


@pytest.fixture
def store(tmp_path: Path) -> ObjectStore:
    created = ObjectStore(tmp_path)
    created.create_bucket("bkt", "proj", {})
    return created


def _md5(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "empty"),
        ("../x", "'..'"),
        ("a/../../etc/passwd", "'..'"),
        ("/etc/passwd", "absolute"),
        ("a//b", "empty segment"),
        ("a/./b", "'.'"),
        ("a\x00b", "NUL"),
        ("a\nb", "line feed"),
        ("é" * 513, "1026 bytes"),
    ],
)
def test_object_name_problems_are_named(name: str, problem: str) -> None:
    with pytest.raises(ApiError) as caught:
        check_object_name(name)
    assert caught.value.code == 400 and problem in caught.value.message


@pytest.mark.parametrize("name", ["data/part-0.parquet", "folder/", "é" * 512, "a b+c%20.txt"])
def test_good_object_names_pass(name: str) -> None:
    assert check_object_name(name) == name


@pytest.mark.parametrize("name", ["my-bucket", "a.b.c", "b_1", "x" * 63, "1bucket"])
def test_good_bucket_names_pass(name: str) -> None:
    assert check_bucket_name(name) == name


@pytest.mark.parametrize(
    "name", ["ab", "x" * 64, "Caps", "a..b", "google-x", "goog1", "10.0.0.1", "a/b", ".hidden"]
)
def test_bad_bucket_names_fail(name: str) -> None:
    with pytest.raises(ApiError, match="Invalid bucket name"):
        check_bucket_name(name)


def test_objects_are_plain_files_and_metadata_is_a_sidecar(
    store: ObjectStore, tmp_path: Path
) -> None:
    record = store.write_bytes("bkt", "a/b.txt", b"abc", "text/plain", {"metadata": {"k": "v"}})
    assert (tmp_path / "bkt" / "a" / "b.txt").read_bytes() == b"abc"
    assert record.md5 == _md5(b"abc") and record.fields == {"metadata": {"k": "v"}}
    assert list((tmp_path / ".uploads").iterdir()) == []  # the temp file was moved, not copied


def test_derived_metadata_is_cached_until_the_file_changes(
    store: ObjectStore, tmp_path: Path
) -> None:
    path = tmp_path / "bkt" / "direct.bin"
    path.write_bytes(b"one")
    first = store.stat("bkt", "direct.bin")
    assert first is not None and first.md5 == _md5(b"one")
    assert first.generation == os.stat(path).st_mtime_ns
    assert store._object_row("bkt", "direct.bin") == first  # cached in the sidecar
    path.write_bytes(b"two!")
    second = store.stat("bkt", "direct.bin")
    assert second is not None and second.md5 == _md5(b"two!") and second.size == 4


def test_listing_walks_shallow_and_deep_alike(store: ObjectStore) -> None:
    for name in ["a/1", "a/b/2", "a/b/c/3", "a2", "b/4", "a/", "z"]:
        store.write_bytes("bkt", name, b"" if name.endswith("/") else b"x")
    shallow = store.list("bkt", prefix="a", delimiter="/")
    assert shallow.prefixes == ["a/"] and [r.name for r in shallow.items] == ["a2"]
    nested = store.list("bkt", prefix="a/", delimiter="/")
    assert [r.name for r in nested.items] == ["a/", "a/1"] and nested.prefixes == ["a/b/"]
    deep = store.list("bkt", prefix="a/")
    assert [r.name for r in deep.items] == ["a/", "a/1", "a/b/2", "a/b/c/3"]
    page = store.list("bkt", max_results=3)
    assert [r.name for r in page.items] == ["a/", "a/1", "a/b/2"]
    rest = store.list("bkt", page_token=page.next_page_token)
    assert [r.name for r in rest.items] == ["a/b/c/3", "a2", "b/4", "z"]
    assert rest.next_page_token is None


def test_empty_directories_are_not_prefixes(store: ObjectStore, tmp_path: Path) -> None:
    (tmp_path / "bkt" / "empty" / "deeper").mkdir(parents=True)
    assert store.list("bkt", delimiter="/").prefixes == []
    store.delete_bucket("bkt")  # only empty directories: the bucket counts as empty
    assert not (tmp_path / "bkt").exists()


def test_delete_prunes_empty_directories(store: ObjectStore, tmp_path: Path) -> None:
    store.write_bytes("bkt", "x/y/z.txt", b"1")
    store.delete("bkt", "x/y/z.txt", Preconditions())
    assert not (tmp_path / "bkt" / "x").exists()


def test_failed_precondition_leaves_nothing_written(store: ObjectStore, tmp_path: Path) -> None:
    store.write_bytes("bkt", "p.txt", b"old")
    with pytest.raises(ApiError) as caught:
        store.write_bytes("bkt", "p.txt", b"new", preconditions=Preconditions(0))
    assert caught.value.code == 412
    assert (tmp_path / "bkt" / "p.txt").read_bytes() == b"old"
    assert list((tmp_path / ".uploads").iterdir()) == []


def test_resumable_session_survives_a_restart(store: ObjectStore, tmp_path: Path) -> None:
    session = store.start_upload("bkt", "r.bin", None, {}, Preconditions(), 6)
    session.part.write_bytes(b"abc")  # bytes received before the restart
    store.close()
    reopened = ObjectStore(tmp_path)
    resumed = reopened.session(session.id)
    assert resumed.received == 3 and resumed.hasher is not None
    with open(resumed.part, "ab") as out:
        out.write(b"def")
    resumed.hasher.update(b"def")
    record = reopened.finish_upload(resumed)
    assert record.md5 == _md5(b"abcdef")
    with pytest.raises(ApiError, match="No such resumable upload"):
        reopened.session(session.id)
