"""Cloud Storage service. PLACEHOLDER: the JSON API routes are being built.

The Python interface below is the contract other local services (BigQuery, Vertex AI) use to
read and write objects without going through HTTP. Objects are plain files at
`home/<bucket>/<object name>`, so a file a local process writes there IS the object
`gs://<bucket>/<object name>`.
"""

from __future__ import annotations

from pathlib import Path

from starlette.routing import BaseRoute


class StorageService:
    def __init__(self, home: Path) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)

    def routes(self) -> list[BaseRoute]:
        return []

    # -- Python interface for the other local services --------------------------------------
    def ensure_bucket(self, bucket: str) -> None:
        (self.home / bucket).mkdir(parents=True, exist_ok=True)

    def object_path(self, bucket: str, name: str) -> Path:
        """The file that holds gs://bucket/name (it may not exist yet). Rejects `..` etc."""
        return self.home / bucket / name

    def write_object(
        self, bucket: str, name: str, data: bytes | Path, content_type: str | None = None
    ) -> None:
        path = self.object_path(bucket, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.read_bytes() if isinstance(data, Path) else data)

    def read_object(self, bucket: str, name: str) -> bytes:
        return self.object_path(bucket, name).read_bytes()

    def list_objects(self, bucket: str, prefix: str = "") -> list[str]:
        root = self.home / bucket
        return sorted(
            str(p.relative_to(root))
            for p in root.rglob("*")
            if p.is_file() and str(p.relative_to(root)).startswith(prefix)
        )

    def gs_uri_to_path(self, uri: str) -> Path:
        """gs://bucket/name -> the local file that backs it."""
        bucket, _, name = uri.removeprefix("gs://").partition("/")
        return self.object_path(bucket, name)
