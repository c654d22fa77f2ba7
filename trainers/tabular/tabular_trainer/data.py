"""Reading datasets and writing artifacts on Cloud Storage (or local paths), Vertex-style.

The trainer has no vertexkit import ("its own deps only"), so it builds its fsspec options from
the same environment the Google clients read: `STORAGE_EMULATOR_HOST` points it at an emulator
(anonymous credentials); otherwise gcsfs uses the default credentials of the VM.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any

import fsspec
import pandas as pd

FORMATS = ("parquet", "csv", "jsonl")
_EXTENSIONS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".ndjson": "jsonl",
}
# Vertex sets AIP_DATA_FORMAT for managed datasets; "bigquery" is not a file format we read.
_VERTEX_FORMAT_NAMES = {"csv": "csv", "jsonl": "jsonl", "parquet": "parquet"}


class DataError(ValueError):
    """Input data that cannot be read; the message names the URI and the problem."""


def storage_options(uri: str) -> dict[str, Any]:
    """fsspec options for `uri`: emulator endpoint + anonymous token when one is configured."""
    if not uri.startswith("gs://"):
        return {}
    options: dict[str, Any] = {}
    project = os.environ.get("GOOGLE_CLOUD_PROJECT") or os.environ.get("CLOUD_ML_PROJECT_ID")
    if project:
        options["project"] = project
    emulator = os.environ.get("STORAGE_EMULATOR_HOST")
    if emulator:
        if "://" not in emulator:
            emulator = f"http://{emulator}"
        # gcsfs probes hierarchical namespaces on every call; against an emulator each probe
        # waits for a time-out.
        os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
        options.update(endpoint_url=emulator, token="anon")
    return options


def filesystem(uri: str) -> tuple[fsspec.AbstractFileSystem, str]:
    fs, path = fsspec.core.url_to_fs(uri, **storage_options(uri))
    return fs, path


def _full_uri(uri: str, path: str) -> str:
    return f"gs://{path}" if uri.startswith("gs://") else path


def resolve_files(uri: str) -> list[str]:
    """The data files behind `uri`: one file, every file under a directory, or a `*` glob."""
    fs, path = filesystem(uri)
    if any(char in path for char in "*?["):
        paths = sorted(fs.glob(path))
    elif fs.isdir(path):
        paths = sorted(fs.find(path))
    elif fs.exists(path):
        paths = [path]
    else:
        raise DataError(f"{uri}: no such file or directory")
    # Skip markers such as _SUCCESS and hidden files, and "folder/" placeholder objects.
    files = [
        p for p in paths if not os.path.basename(p).startswith(("_", ".")) and not p.endswith("/")
    ]
    if not files:
        raise DataError(f"{uri}: matches no data files")
    return [_full_uri(uri, p) for p in files]


def detect_format(path: str, declared: str | None = None) -> str:
    """The file format: the declared one, or from the extension (ignoring .gz)."""
    if declared:
        name = _VERTEX_FORMAT_NAMES.get(declared.lower())
        if not name:
            raise DataError(f"data format {declared!r} is not supported; use one of {FORMATS}")
        return name
    stem = path[:-3] if path.endswith(".gz") else path
    extension = os.path.splitext(stem)[1].lower()
    if extension not in _EXTENSIONS:
        raise DataError(
            f"{path}: cannot tell the format from the extension {extension or '(none)'!r}; "
            f"pass --data-format with one of {FORMATS}"
        )
    return _EXTENSIONS[extension]


def _read_file(uri: str, data_format: str) -> pd.DataFrame:
    fs, path = filesystem(uri)
    compression = "gzip" if path.endswith(".gz") else None
    with fs.open(path, "rb") as handle:
        payload = handle.read()
    buffer = io.BytesIO(payload)
    if data_format == "parquet":
        return pd.read_parquet(buffer)
    if data_format == "csv":
        return pd.read_csv(buffer, compression=compression)
    return pd.read_json(buffer, lines=True, compression=compression)


def read_table(uri: str, data_format: str | None = None) -> pd.DataFrame:
    """All rows behind `uri` (file, directory or glob of Parquet/CSV/JSONL) as one DataFrame."""
    frames = []
    for file_uri in resolve_files(uri):
        try:
            frames.append(_read_file(file_uri, detect_format(file_uri, data_format)))
        except DataError:
            raise
        except Exception as error:  # pandas/pyarrow errors do not name the file
            raise DataError(f"{file_uri}: cannot be read ({error})") from error
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if frame.empty:
        raise DataError(f"{uri}: holds no rows")
    return frame


def join(base: str, name: str) -> str:
    return f"{base.rstrip('/')}/{name}"


def write_bytes(uri: str, payload: bytes) -> None:
    fs, path = filesystem(uri)
    if not uri.startswith("gs://"):
        fs.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with fs.open(path, "wb") as handle:
        handle.write(payload)


def read_bytes(uri: str) -> bytes | None:
    """The object's bytes, or None when it does not exist."""
    fs, path = filesystem(uri)
    if not fs.exists(path):
        return None
    with fs.open(path, "rb") as handle:
        return handle.read()


def write_json(uri: str, value: Any) -> None:
    write_bytes(uri, json.dumps(value, indent=2, sort_keys=True).encode())


def delete(uri: str) -> None:
    fs, path = filesystem(uri)
    if fs.exists(path):
        fs.rm(path)
