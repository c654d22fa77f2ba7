"""The Python interface other local services use (no HTTP): same store, same rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from vertexkit.local.errors import ApiError
from vertexkit.local.storage.routes import StorageService


def test_python_interface_round_trip(tmp_path: Path) -> None:
    service = StorageService(tmp_path / "storage")
    source = tmp_path / "model.pkl"
    source.write_bytes(b"weights")
    record = service.write_object("models", "run-1/model.pkl", source)
    assert record.size == 7 and record.md5
    service.write_object("models", "run-1/meta.json", b"{}", content_type="application/json")
    assert service.list_objects("models", "run-1/") == ["run-1/meta.json", "run-1/model.pkl"]
    assert service.read_object("models", "run-1/model.pkl") == b"weights"
    path = service.gs_uri_to_path("gs://models/run-1/model.pkl")
    assert path == tmp_path / "storage" / "models" / "run-1" / "model.pkl"
    assert service.gs_uri_to_path("gs://models/run-1/") == path.parent
    stat = service.stat_object("models", "run-1/meta.json")
    assert stat is not None and stat.content_type == "application/json"
    assert service.delete_object("models", "run-1/meta.json")
    assert not service.delete_object("models", "run-1/meta.json")
    assert service.list_objects("no-such-bucket") == []


@pytest.mark.parametrize("uri", ["gs://models/../etc/passwd", "gs://Bad_Bucket/x", "s3://b/x"])
def test_uris_that_would_escape_are_refused(tmp_path: Path, uri: str) -> None:
    service = StorageService(tmp_path)
    with pytest.raises(ApiError) as caught:
        service.gs_uri_to_path(uri)
    assert caught.value.code == 400
