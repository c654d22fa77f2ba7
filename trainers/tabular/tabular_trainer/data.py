"""Reading datasets and writing artifacts on Cloud Storage (or local paths), Vertex-style.

Files go through pyarrow's filesystems: `GcsFileSystem` for `gs://`, `LocalFileSystem` for a
path. pyarrow is already here for Parquet, so Cloud Storage costs the trainer no import of its
own; gcsfs (aiohttp, google-auth, the storage clients) took 0.4 s of CPU at every start.

The trainer has no vertexkit import ("its own deps only"), so it finds an emulator the way the
Google clients do: `STORAGE_EMULATOR_HOST` points it there, with anonymous credentials; otherwise
pyarrow uses the default credentials of the VM (the metadata server, on Vertex).
"""

from __future__ import annotations

import io
import json
import os
import re
from datetime import timedelta
from functools import cache
from typing import Any

import pandas as pd
from pyarrow import fs as pafs

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
_GLOB_CHARS = "*?["
# google-cloud-cpp retries a failing call for 15 minutes by default; gcsfs, which this trainer
# used before, gave up after about a minute of retries. A trainer that cannot reach its data
# fails in that minute, not a quarter of an hour later.
RETRY_TIME_LIMIT = timedelta(seconds=60)


class DataError(ValueError):
    """Input data that cannot be read; the message names the URI and the problem."""


@cache
def _gcs() -> pafs.GcsFileSystem:
    emulator = os.environ.get("STORAGE_EMULATOR_HOST")
    if not emulator:
        return pafs.GcsFileSystem(retry_time_limit=RETRY_TIME_LIMIT)
    scheme, _, host = emulator.rpartition("://")
    return pafs.GcsFileSystem(
        anonymous=True,
        endpoint_override=host.rstrip("/"),
        scheme=scheme or "http",
        retry_time_limit=RETRY_TIME_LIMIT,
    )


def filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """The filesystem behind `uri` and the path in it: `gs://b/o` is `b/o` on Cloud Storage."""
    if uri.startswith("gs://"):
        return _gcs(), uri.removeprefix("gs://").rstrip("/")
    return pafs.LocalFileSystem(), os.path.abspath(uri)


def _full_uri(uri: str, path: str) -> str:
    return f"gs://{path}" if uri.startswith("gs://") else path


def _glob_pattern(pattern: str) -> re.Pattern[str]:
    """A glob as fsspec reads one: `*` and `?` within a path segment, `**` across segments
    (`**/` also across none), `[...]` a character class (`[!...]` negated)."""
    parts = re.split(r"(\*\*/|\*\*|\*|\?|\[[^]]*\])", pattern)
    regex = ""
    for part in parts:
        if part == "**/":
            regex += "(?:.*/)?"
        elif part == "**":
            regex += ".*"
        elif part == "*":
            regex += "[^/]*"
        elif part == "?":
            regex += "[^/]"
        elif part.startswith("[") and part.endswith("]") and len(part) > 2:
            regex += "[^" + part[2:-1] + "]" if part[1] == "!" else part
        else:
            regex += re.escape(part)
    return re.compile(regex + r"\Z")


def _files_under(fs: pafs.FileSystem, folder: str) -> list[str]:
    selector = pafs.FileSelector(folder, recursive=True, allow_not_found=True)
    return [info.path for info in fs.get_file_info(selector) if info.type == pafs.FileType.File]


def _is_glob(path: str) -> bool:
    return any(char in path for char in _GLOB_CHARS)


def _matching(fs: pafs.FileSystem, path: str) -> list[str]:
    """The files `path` names: a glob's matches, a folder's files, or the one file."""
    if _is_glob(path):
        cut = min(path.find(char) for char in _GLOB_CHARS if char in path)
        folder = path[:cut].rpartition("/")[0]
        pattern = _glob_pattern(path)
        return sorted(p for p in _files_under(fs, folder) if pattern.match(p))
    kind = fs.get_file_info(path).type
    if kind == pafs.FileType.Directory:
        return sorted(_files_under(fs, path))
    return [path] if kind == pafs.FileType.File else []


def resolve_files(uri: str) -> list[str]:
    """The data files behind `uri`: one file, every file under a directory, or a `*` glob."""
    fs, path = filesystem(uri)
    paths = _matching(fs, path)
    if not paths and not _is_glob(path):
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
    compression = "gzip" if uri.endswith(".gz") else None
    buffer = io.BytesIO(read_bytes(uri))
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
        fs.create_dir(os.path.dirname(path), recursive=True)
    # compression=None: pyarrow would otherwise compress a `.gz` name on its own
    with fs.open_output_stream(path, compression=None) as handle:
        handle.write(payload)


def read_bytes(uri: str) -> bytes | None:
    """The object's bytes, or None when it does not exist."""
    fs, path = filesystem(uri)
    try:
        with fs.open_input_stream(path, compression=None) as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def write_json(uri: str, value: Any) -> None:
    write_bytes(uri, json.dumps(value, indent=2, sort_keys=True).encode())


def delete(uri: str) -> None:
    fs, path = filesystem(uri)
    if fs.get_file_info(path).type == pafs.FileType.File:
        fs.delete_file(path)
