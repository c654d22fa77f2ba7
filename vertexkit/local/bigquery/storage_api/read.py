"""The Storage Read API (`BigQueryRead`): CreateReadSession, ReadRows, SplitReadStream.

A session reads the table once, when it is created: the rows its options select (columns in
the table's order, `row_restriction` evaluated by DuckDB through the GoogleSQL translator) as
one Arrow table, cut into contiguous streams. So every stream of a session sees the table as it
was at creation, as Google's sessions read a snapshot (`table_modifiers.snapshot_time`: "If not
set, interpreted as now"), and a reader that resumes at an offset gets the same rows again.
Sessions live in memory for Google's six hours (`ReadSession.expire_time`), at most
`MAX_SESSIONS` at once; a restart of the local cloud forgets them.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pyarrow as pa
from google.cloud.bigquery_storage_v1 import types

from vertexkit.local.bigquery import geography, intervals
from vertexkit.local.bigquery.query_error import QueryError
from vertexkit.local.bigquery.responses import LOCATION
from vertexkit.local.bigquery.sql import TableName, translate
from vertexkit.local.bigquery.storage_api import formats
from vertexkit.local.bigquery.storage_api.errors import (
    StorageApiError,
    from_query_error,
    invalid,
)
from vertexkit.local.bigquery.table_name import quote_identifier

TABLE_PATH = re.compile(r"projects/([^/]+)/datasets/([^/]+)/tables/([^/]+)")
PARENT_PATH = re.compile(r"projects/[^/]+")
SESSION_LIFETIME_S = 6 * 3600  # ReadSession.expire_time: "typically 6 hours"
MAX_SESSIONS = 64  # the oldest session goes first: a local machine's memory is not Google's
ROWS_PER_STREAM = 250_000  # the default split: streams worth reading side by side
DEFAULT_MAX_STREAMS = 4
RESPONSE_BYTES = 4 << 20  # the rows of one ReadRowsResponse, about
ARROW, AVRO = types.DataFormat.ARROW, types.DataFormat.AVRO
COMPRESSION = {
    types.ArrowSerializationOptions.CompressionCodec.LZ4_FRAME: "lz4",
    types.ArrowSerializationOptions.CompressionCodec.ZSTD: "zstd",
}
ReadSessionPb = types.ReadSession.pb()
ReadRowsResponsePb = types.ReadRowsResponse.pb()
SplitReadStreamResponsePb = types.SplitReadStreamResponse.pb()


@dataclass
class _Session:
    name: str
    rows: pa.Table  # the session's snapshot, in the Read API's Arrow schema
    data_format: int
    avro_schema: dict[str, Any] | None
    compression: str | None
    created: float
    streams: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> [start, end)


class ReadService:
    """Answers `BigQueryRead` from the warehouse the handle gives (built on first use)."""

    def __init__(self, warehouse: Callable[[], Any]) -> None:
        self._warehouse = warehouse
        self._sessions: dict[str, _Session] = {}
        self._streams: dict[str, _Session] = {}
        self._lock = threading.Lock()

    # -- CreateReadSession -----------------------------------------------------------------
    def create_read_session(self, request: Any) -> Any:
        asked = request.read_session
        if not PARENT_PATH.fullmatch(request.parent):
            raise invalid("parent", f"must be projects/{{project_id}}, got {request.parent!r}")
        table = _table_name(asked.table)
        data_format = _data_format(asked.data_format)
        count = _stream_count(request.max_stream_count, request.preferred_min_stream_count)
        options = asked.read_options
        compression = _compression(options)
        if options.HasField("avro_serialization_options") and (
            options.avro_serialization_options.enable_display_name_attribute
        ):
            raise StorageApiError(
                grpc.StatusCode.UNIMPLEMENTED,
                "read_session.read_options.avro_serialization_options."
                "enable_display_name_attribute is not served by the local BigQuery",
            )
        snapshot = (
            asked.table_modifiers.snapshot_time.ToMicroseconds() / 1e6
            if asked.table_modifiers.HasField("snapshot_time")
            else None
        )
        fields, rows = self._select(table, list(options.selected_fields), options.row_restriction,
                                    snapshot)  # fmt: skip
        session = _Session(
            name=f"projects/{table.project}/locations/{LOCATION.lower()}/sessions/"
            f"{uuid.uuid4().hex}",
            rows=formats.conform(rows, formats.arrow_schema(fields)),
            data_format=data_format,
            avro_schema=formats.avro_schema(fields) if data_format == AVRO else None,
            compression=compression,
            created=time.time(),
        )
        for start, end in _ranges(session.rows.num_rows, count, request.preferred_min_stream_count):
            session.streams[f"{session.name}/streams/{uuid.uuid4().hex[:12]}"] = (start, end)
        self._keep(session)
        return self._session_message(session, asked)

    def _select(
        self, table: TableName, selected: list[str], restriction: str, snapshot: float | None
    ) -> tuple[list[dict[str, Any]], pa.Table]:
        warehouse = self._warehouse()
        cur = warehouse.cursor()
        try:
            kind = warehouse.require_table(cur, table)
            if kind == "VIEW":
                raise invalid("read_session.table", f"{table.bigquery_id} is a view; the Storage "
                              "Read API reads tables")  # fmt: skip
            if snapshot is not None:
                _check_snapshot(warehouse.table_extras(cur, table), snapshot, warehouse.clock())
            fields = _selected_fields(warehouse.table_schema(cur, table), selected)
            intervals.refuse_interval_columns(fields, "the Storage Read API")
            sql = _sql(table, fields, restriction)
        except QueryError as error:
            raise from_query_error(error) from error
        finally:
            cur.close()
        return fields, _rows(warehouse, sql)

    def _keep(self, session: _Session) -> None:
        with self._lock:
            expired = [
                s for s in self._sessions.values() if s.created < time.time() - SESSION_LIFETIME_S
            ]
            oldest = sorted(self._sessions.values(), key=lambda s: s.created)
            expired += oldest[: max(0, len(oldest) - MAX_SESSIONS + 1)]
            for old in expired:
                self._forget(old)
            self._sessions[session.name] = session
            self._streams.update((name, session) for name in session.streams)

    def _forget(self, session: _Session) -> None:
        self._sessions.pop(session.name, None)
        for name in session.streams:
            self._streams.pop(name, None)

    def _session_message(self, session: _Session, asked: Any) -> Any:
        message = ReadSessionPb()
        message.CopyFrom(asked)
        message.name = session.name
        message.expire_time.FromSeconds(int(session.created + SESSION_LIFETIME_S))
        if session.data_format == AVRO:
            message.avro_schema.schema = json.dumps(session.avro_schema)
        else:
            message.arrow_schema.serialized_schema = formats.serialized_schema(session.rows.schema)
        for name in session.streams:
            message.streams.add(name=name)
        message.estimated_row_count = session.rows.num_rows
        message.estimated_total_bytes_scanned = session.rows.nbytes
        message.estimated_total_physical_file_size = session.rows.nbytes
        return message

    # -- ReadRows --------------------------------------------------------------------------
    def read_rows(self, request: Any) -> Iterator[Any]:
        session, (start, end) = self._stream(request.read_stream, "read_stream")
        if request.offset < 0 or request.offset > end - start:
            raise StorageApiError(
                grpc.StatusCode.OUT_OF_RANGE,
                f"offset: {request.offset} is beyond the {end - start} rows of the stream",
            )
        begin = start + request.offset
        chunk = _rows_per_response(session.rows)
        first = True
        for at in range(begin, end, chunk):
            count = min(chunk, end - at)
            yield self._response(session, at, count, (at - start, end - start), first)
            first = False

    def _response(
        self, session: _Session, at: int, count: int, progress: tuple[int, int], first: bool
    ) -> Any:
        rows = session.rows.slice(at, count)
        response = ReadRowsResponsePb()
        response.row_count = count
        if session.data_format == AVRO:
            assert session.avro_schema is not None
            response.avro_rows.serialized_binary_rows = formats.avro_rows(rows, session.avro_schema)
            response.avro_rows.row_count = count
            if first:
                response.avro_schema.schema = json.dumps(session.avro_schema)
        else:
            serialized = formats.serialized_batch(rows, session.compression)
            response.arrow_record_batch.serialized_record_batch = serialized
            response.arrow_record_batch.row_count = count
            if first:
                response.arrow_schema.serialized_schema = formats.serialized_schema(rows.schema)
        done, total = progress
        response.stats.progress.at_response_start = done / total if total else 0.0
        response.stats.progress.at_response_end = (done + count) / total if total else 1.0
        return response

    def _stream(self, name: str, field_name: str) -> tuple[_Session, tuple[int, int]]:
        with self._lock:
            session = self._streams.get(name)
            if session is None or name not in session.streams:
                raise StorageApiError(grpc.StatusCode.NOT_FOUND,
                                      f"{field_name}: read stream {name!r} not found "
                                      "(unknown, or its session has expired)")  # fmt: skip
            return session, session.streams[name]

    # -- SplitReadStream -------------------------------------------------------------------
    def split_read_stream(self, request: Any) -> Any:
        """The stream's rows cut at `fraction`: the primary gets the head, the remainder the
        tail, and the original now ends where the primary does. A stream of fewer than two
        rows cannot be split: both answers are empty, as the proto comment says."""
        if not 0.0 < request.fraction < 1.0:
            raise invalid("fraction", f"must be in (0.0, 1.0), got {request.fraction}")
        session, (start, end) = self._stream(request.name, "name")
        response = SplitReadStreamResponsePb()
        cut = start + int((end - start) * request.fraction)
        if end - start < 2 or not start < cut < end:
            return response
        primary = f"{session.name}/streams/{uuid.uuid4().hex[:12]}"
        remainder = f"{session.name}/streams/{uuid.uuid4().hex[:12]}"
        with self._lock:
            session.streams.update({request.name: (start, cut), primary: (start, cut),
                                    remainder: (cut, end)})  # fmt: skip
            self._streams.update({primary: session, remainder: session})
        response.primary_stream.name = primary
        response.remainder_stream.name = remainder
        return response


def _rows(warehouse: Any, sql: str) -> pa.Table:
    """The session's rows, on a cursor of their own: DuckDB refuses a query on a cursor whose
    last result (the catalog's look-ups) is unfinished."""
    cur = warehouse.cursor()
    try:
        return geography.text_columns(cur.sql(sql).to_arrow_table())
    except Exception as error:  # duckdb.Error: a restriction DuckDB rejects at run time
        raise invalid("read_session.read_options.row_restriction", str(error)) from error
    finally:
        cur.close()


# -- request checks ------------------------------------------------------------------------
def _table_name(path: str) -> TableName:
    match = TABLE_PATH.fullmatch(path)
    if not match:
        raise invalid("read_session.table", "must be projects/{project_id}/datasets/"
                      f"{{dataset_id}}/tables/{{table_id}}, got {path!r}")  # fmt: skip
    if "$" in match.group(3) or "@" in match.group(3):
        raise invalid("read_session.table", "table decorators are not supported; use "
                      "table_modifiers.snapshot_time or read_options.row_restriction")  # fmt: skip
    return TableName(*match.groups())


def _data_format(value: int) -> int:
    if value not in (ARROW, AVRO):
        raise invalid("read_session.data_format", "must be ARROW or AVRO")
    return value


def _stream_count(maximum: int, preferred_min: int) -> int:
    if maximum < 0:
        raise invalid("max_stream_count", f"must be non-negative, got {maximum}")
    if preferred_min < 0:
        raise invalid("preferred_min_stream_count", f"must be non-negative, got {preferred_min}")
    if maximum and preferred_min > maximum:
        raise invalid("max_stream_count", "must be greater than or equal to "
                      "preferred_min_stream_count")  # fmt: skip
    return min(maximum, 1000) if maximum else 0


def _compression(options: Any) -> str | None:
    if options.response_compression_codec:
        raise StorageApiError(
            grpc.StatusCode.UNIMPLEMENTED,
            "read_session.read_options.response_compression_codec is not served by the local "
            "BigQuery; arrow_serialization_options.buffer_compression is",
        )
    if not options.HasField("arrow_serialization_options"):
        return None
    return COMPRESSION.get(options.arrow_serialization_options.buffer_compression)


def _check_snapshot(extras: dict[str, Any], snapshot: float, now: float) -> None:
    """The local warehouse keeps no history: a snapshot at or after the table's last change is
    the table as it is; one before its creation or in the future is refused as Google refuses
    it; one between the two would need history it does not keep, so it is refused too."""
    created = int(extras.get("creationTime") or 0) / 1000
    modified = int(extras.get("lastModifiedTime") or 0) / 1000
    field_name = "read_session.table_modifiers.snapshot_time"
    if snapshot > now + 1:
        raise invalid(field_name, "is in the future")
    if snapshot < created:
        raise invalid(field_name, "is before the table was created")
    if snapshot < modified:
        raise StorageApiError(grpc.StatusCode.UNIMPLEMENTED,
                              f"{field_name}: the table changed after this time, and the local "
                              "BigQuery keeps no table history (time travel)")  # fmt: skip


def _selected_fields(schema: list[dict[str, Any]], selected: list[str]) -> list[dict[str, Any]]:
    """The table's fields, in the table's order, that `selected` names (all when empty)."""
    if not selected:
        return schema
    wanted = {name.lower() for name in selected}
    nested = sorted(name for name in selected if "." in name)
    if nested:
        raise StorageApiError(grpc.StatusCode.UNIMPLEMENTED,
                              "read_session.read_options.selected_fields: nested fields "
                              f"({', '.join(nested)}) are not served by the local BigQuery; "
                              "select the whole STRUCT")  # fmt: skip
    known = {item["name"].lower() for item in schema}
    missing = sorted(name for name in selected if name.lower() not in known)
    if missing:
        raise invalid("read_session.read_options.selected_fields",
                      f"fields not in the table schema: {', '.join(missing)}")  # fmt: skip
    return [item for item in schema if item["name"].lower() in wanted]


def _sql(table: TableName, fields: list[dict[str, Any]], restriction: str) -> str:
    columns = ", ".join(quote_identifier(item["name"]) for item in fields)
    if not restriction.strip():
        return f"SELECT {columns} FROM {table.sql}"
    googlesql = (
        f"SELECT {', '.join('`' + item['name'] + '`' for item in fields)} FROM "
        f"`{table.project}.{table.dataset}.{table.table}` WHERE {restriction}"
    )
    try:
        return translate(googlesql, table.project).sql
    except QueryError as error:
        raise invalid("read_session.read_options.row_restriction", error.message) from error


def _ranges(rows: int, count: int, preferred_min: int) -> list[tuple[int, int]]:
    """Contiguous row ranges, one per stream. No rows, no streams (as Google answers an empty
    table); `count` 0 lets the server choose."""
    if rows == 0:
        return []
    if not count:
        count = min(DEFAULT_MAX_STREAMS, math.ceil(rows / ROWS_PER_STREAM))
        count = max(count, min(preferred_min, rows))
    count = max(1, min(count, rows))
    size = math.ceil(rows / count)
    return [(start, min(start + size, rows)) for start in range(0, rows, size)]


def _rows_per_response(rows: pa.Table) -> int:
    width = rows.nbytes / max(rows.num_rows, 1)
    return max(1, int(RESPONSE_BYTES / max(width, 1)))
