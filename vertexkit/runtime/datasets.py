"""Existing files on Cloud Storage as a dataset: checked for existence, format and row count."""

from __future__ import annotations

import io
import json
import os
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from vertexkit.specs import SpecError

if TYPE_CHECKING:
    from vertexkit.context import CloudContext

FORMATS = ("parquet", "csv", "jsonl")
_ALIASES = {"newline_delimited_json": "jsonl", "json": "jsonl", "ndjson": "jsonl", "pq": "parquet"}
_EXTENSIONS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".jsonl": "jsonl"}
_EXTENSIONS.update({".json": "jsonl", ".ndjson": "jsonl"})


class DatasetError(ValueError):
    """The files are missing, of another format, unreadable or empty; the message says which."""


@dataclass(frozen=True)
class DatasetDescription:
    uri: str
    format: str
    files: list[str]
    rows: int
    columns: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_format(value: str | None) -> str | None:
    if not value:
        return None
    name = _ALIASES.get(value.lower(), value.lower())
    if name not in FORMATS:
        raise SpecError("format", f"{value!r} is not allowed; use one of {list(FORMATS)}")
    return name


def _format_of(path: str) -> str | None:
    stem = path[:-3] if path.endswith(".gz") else path
    return _EXTENSIONS.get(os.path.splitext(stem)[1].lower())


def _matching_files(ctx: CloudContext, uri: str) -> list[str]:
    fs = ctx.gcs_filesystem()
    path = uri.removeprefix("gs://")
    if any(char in path for char in "*?["):
        found = fs.glob(path)
    elif fs.isdir(path):
        found = fs.find(path)
    elif fs.exists(path):
        found = [path]
    else:
        found = []
    names = [p for p in sorted(found) if not os.path.basename(p).startswith(("_", "."))]
    return [f"gs://{p}" for p in names if not p.endswith("/")]


def _count(ctx: CloudContext, uri: str, data_format: str) -> tuple[int, list[str]]:
    import pandas as pd
    import pyarrow.parquet as pq

    fs = ctx.gcs_filesystem()
    with fs.open(uri.removeprefix("gs://"), "rb") as handle:
        if data_format == "parquet":  # the footer holds the row count: no data is read
            metadata = pq.ParquetFile(handle).metadata
            return metadata.num_rows, list(metadata.schema.names)
        payload = handle.read()
    compression = "gzip" if uri.endswith(".gz") else None
    if data_format == "csv":
        frame = pd.read_csv(io.BytesIO(payload), compression=compression)
        return len(frame), [str(c) for c in frame.columns]
    text = payload.decode() if compression is None else _gunzip(payload)
    lines = [line for line in text.splitlines() if line.strip()]
    columns = list(json.loads(lines[0])) if lines else []
    return len(lines), columns


def _gunzip(payload: bytes) -> str:
    import gzip

    return gzip.decompress(payload).decode()


def describe_gcs_dataset(
    ctx: CloudContext, uri: str, format: str | None = None, allow_empty: bool = False
) -> DatasetDescription:
    """Files behind `uri` (a file, folder or `*` glob), their format, row count and columns."""
    if not (uri or "").startswith("gs://") or len(uri) <= len("gs://"):
        raise SpecError("uri", f"must be a gs:// file, folder or glob, got {uri!r}")
    declared = _check_format(format)
    files = _matching_files(ctx, uri)
    if not files:
        raise DatasetError(f"{uri}: no objects match")
    formats = {f: declared or _format_of(f) for f in files}
    unknown = [f for f, kind in formats.items() if kind is None]
    if unknown:
        raise DatasetError(
            f"{unknown[0]}: cannot tell the format from its extension; pass format "
            f"(one of {list(FORMATS)})"
        )
    kinds = set(formats.values())
    if len(kinds) > 1:
        raise DatasetError(f"{uri}: mixes formats {sorted(kinds)}; a dataset holds one format")
    data_format = kinds.pop()
    rows, columns = 0, []
    for file_uri in files:
        try:
            count, file_columns = _count(ctx, file_uri, data_format)
        except Exception as error:  # the readers' errors do not name the object
            raise DatasetError(f"{file_uri}: not readable as {data_format} ({error})") from error
        rows += count
        columns = columns or file_columns
    if rows == 0 and not allow_empty:
        raise DatasetError(f"{uri}: the {len(files)} file(s) hold no rows")
    return DatasetDescription(uri=uri, format=data_format, files=files, rows=rows, columns=columns)
