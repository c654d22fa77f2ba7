"""Small Cloud Storage reads and writes shared by the job and model runtime."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vertexkit.context import CloudContext


def split_gs_uri(uri: str) -> tuple[str, str]:
    """`gs://bucket/a/b` -> ("bucket", "a/b")."""
    if not uri.startswith("gs://"):
        raise ValueError(f"not a gs:// URI: {uri!r}")
    bucket, _, name = uri[len("gs://") :].partition("/")
    if not bucket:
        raise ValueError(f"no bucket in {uri!r}")
    return bucket, name


def join(uri: str, *parts: str) -> str:
    return "/".join([uri.rstrip("/"), *(p.strip("/") for p in parts)])


def read_text(ctx: CloudContext, uri: str) -> str | None:
    """The object's text, or None when it does not exist."""
    from google.api_core import exceptions

    bucket, name = split_gs_uri(uri)
    try:
        return ctx.storage_client().bucket(bucket).blob(name).download_as_text()
    except exceptions.NotFound:
        return None


def write_text(ctx: CloudContext, uri: str, text: str, content_type: str = "text/plain") -> None:
    bucket, name = split_gs_uri(uri)
    ctx.storage_client().bucket(bucket).blob(name).upload_from_string(
        text, content_type=content_type
    )


def download_prefix(ctx: CloudContext, uri: str, target: Path) -> list[Path]:
    """Copies every object under `uri/` into `target`, keeping relative paths."""
    bucket, prefix = split_gs_uri(uri)
    prefix = prefix.rstrip("/") + "/" if prefix else ""
    written = []
    for blob in ctx.storage_client().list_blobs(bucket, prefix=prefix):
        relative = blob.name[len(prefix) :]
        if not relative or relative.endswith("/"):
            continue
        local = target / relative
        local.parent.mkdir(parents=True, exist_ok=True)
        blob.download_to_filename(str(local))
        written.append(local)
    return written
