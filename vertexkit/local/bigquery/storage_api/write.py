"""The Storage Write API (`BigQueryWrite`), as the proto comments of `storage.proto` and
`stream.proto` describe it:

- `_default` (`.../streams/_default`): rows are in the table as soon as the append is answered;
  an `offset` is refused ("Specifying a value for this field is not allowed when calling
  AppendRows for the '_default' stream").
- COMMITTED: the same, with offsets; PENDING: rows wait until FinalizeWriteStream then
  BatchCommitWriteStreams puts every listed stream's rows in the table at once ("ZERO stream is
  committed due to atomicity guarantee" when one has an error); BUFFERED: rows wait until
  FlushRows "up to ... the offset specified (including this offset)".
- An append whose `offset` is behind the stream's end is ALREADY_EXISTS, one beyond it
  OUT_OF_RANGE, bad rows INVALID_ARGUMENT: each in the response's `error` field, and the
  connection carries on ("Users can retry or continue with other append requests within the
  same connection").

Streams live in memory (a restart of the local cloud forgets them and their uncommitted rows);
each append or commit runs in one warehouse transaction on the table's lock.
"""

from __future__ import annotations

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
from google.rpc import code_pb2

from vertexkit.local.bigquery import intervals
from vertexkit.local.bigquery.query_error import QueryError
from vertexkit.local.bigquery.responses import LOCATION
from vertexkit.local.bigquery.sql import TableName
from vertexkit.local.bigquery.storage_api import rows as row_codec
from vertexkit.local.bigquery.storage_api.errors import (
    StorageApiError,
    from_query_error,
    invalid,
)
from vertexkit.local.bigquery.storage_api.formats import kind_of, mode_of

TABLE_PATH = re.compile(r"projects/([^/]+)/datasets/([^/]+)/tables/([^/]+)")
STREAM_PATH = re.compile(r"(projects/[^/]+/datasets/[^/]+/tables/[^/]+)/streams/([^/]+)")
DEFAULT_STREAM = "_default"
DEFAULT_VALUE = types.AppendRowsRequest.MissingValueInterpretation.DEFAULT_VALUE
StreamType = types.WriteStream.Type
ErrorCode = types.StorageError.StorageErrorCode
WriteStreamPb = types.WriteStream.pb()
AppendRowsResponsePb = types.AppendRowsResponse.pb()
FinalizeResponsePb = types.FinalizeWriteStreamResponse.pb()
CommitResponsePb = types.BatchCommitWriteStreamsResponse.pb()
FlushResponsePb = types.FlushRowsResponse.pb()
TableSchemaPb = types.TableSchema.pb()
FIELD_TYPES = {"FLOAT64": "DOUBLE", "RECORD": "STRUCT", "DECIMAL": "NUMERIC",
               "BIGDECIMAL": "BIGNUMERIC"}  # fmt: skip


@dataclass
class _Stream:
    name: str
    table: TableName
    type: int
    created: float
    rows: int = 0  # the next append offset
    flushed: int = 0  # BUFFERED: rows before this offset are in the table
    waiting: list[pa.Table] = field(default_factory=list)  # PENDING/BUFFERED rows not in it yet
    finalized: float | None = None
    committed: float | None = None


class _Connection:
    """What one AppendRows connection remembers between requests: its stream and writer schema."""

    stream: str = ""
    proto_descriptor: Any = None
    arrow_schema: bytes = b""


class WriteService:
    def __init__(self, warehouse: Callable[[], Any]) -> None:
        self._warehouse = warehouse
        self._streams: dict[str, _Stream] = {}
        self._lock = threading.Lock()

    # -- streams ---------------------------------------------------------------------------
    def create_write_stream(self, request: Any) -> Any:
        table = _table_name(request.parent, "parent")
        kind = request.write_stream.type_
        if kind not in (StreamType.COMMITTED, StreamType.PENDING, StreamType.BUFFERED):
            raise invalid("write_stream.type", "must be COMMITTED, PENDING or BUFFERED")
        schema = self._schema(table)
        stream = _Stream(f"{request.parent}/streams/{uuid.uuid4().hex}", table, kind, time.time())
        with self._lock:
            self._streams[stream.name] = stream
        return _stream_message(stream, schema)

    def get_write_stream(self, request: Any) -> Any:
        stream = self._stream(request.name, "name")
        full = request.view == types.WriteStreamView.FULL
        return _stream_message(stream, self._schema(stream.table) if full else None)

    def finalize_write_stream(self, request: Any) -> Any:
        stream = self._stream(request.name, "name")
        if stream.name.endswith("/" + DEFAULT_STREAM):
            raise invalid("name", "the _default stream cannot be finalized")
        with self._lock:
            stream.finalized = stream.finalized or time.time()
        return FinalizeResponsePb(row_count=stream.rows)

    def batch_commit_write_streams(self, request: Any) -> Any:
        table = _table_name(request.parent, "parent")
        if not request.write_streams:
            raise invalid("write_streams", "name at least one stream")
        response = CommitResponsePb()
        streams = []
        for name in request.write_streams:
            stream, error = self._committable(name, table)
            if error is not None:
                response.stream_errors.add(code=error[0], entity=name, error_message=error[1])
            streams.append(stream)
        if response.stream_errors:
            return response  # nothing committed: "ZERO stream is committed"
        with self._warehouse().transaction(table) as cur:
            for stream in streams:
                for rows in stream.waiting:
                    row_codec.insert(cur, table.sql, rows)
            self._warehouse().touch_table(cur, table)
        now = time.time()
        for stream in streams:
            stream.waiting, stream.committed = [], now
        response.commit_time.FromMicroseconds(int(now * 1e6))
        return response

    def _committable(self, name: str, table: TableName) -> tuple[Any, tuple[int, str] | None]:
        stream = self._streams.get(name)
        if stream is None or stream.table != table:
            return None, (ErrorCode.STREAM_NOT_FOUND, f"stream {name} not found in the parent")
        if stream.type != StreamType.PENDING:
            return stream, (ErrorCode.INVALID_STREAM_TYPE, "only PENDING streams are committed")
        if stream.committed is not None:
            return stream, (ErrorCode.STREAM_ALREADY_COMMITTED, "stream already committed")
        if stream.finalized is None:
            return stream, (ErrorCode.INVALID_STREAM_STATE, "stream is not finalized")
        return stream, None

    def flush_rows(self, request: Any) -> Any:
        stream = self._stream(request.write_stream, "write_stream")
        if stream.type != StreamType.BUFFERED:
            raise invalid("write_stream", "FlushRows is only for BUFFERED streams")
        upto = request.offset.value + 1  # "including this offset"
        if upto > stream.rows:
            raise StorageApiError(grpc.StatusCode.OUT_OF_RANGE,
                                  f"offset: {request.offset.value} is beyond the stream's last "
                                  f"row {stream.rows - 1}")  # fmt: skip
        with self._warehouse().transaction(stream.table) as cur:
            if upto > stream.flushed:
                waiting = pa.concat_tables(stream.waiting) if stream.waiting else None
                assert waiting is not None
                row_codec.insert(cur, stream.table.sql, waiting.slice(0, upto - stream.flushed))
                stream.waiting = [waiting.slice(upto - stream.flushed)]
                stream.flushed = upto
                self._warehouse().touch_table(cur, stream.table)
        return FlushResponsePb(offset=request.offset.value)

    def _stream(self, name: str, field_name: str) -> _Stream:
        match = STREAM_PATH.fullmatch(name)
        if not match:
            raise invalid(field_name, "must be projects/{project}/datasets/{dataset}/tables/"
                          f"{{table}}/streams/{{stream}}, got {name!r}")  # fmt: skip
        with self._lock:
            if match.group(2) == DEFAULT_STREAM and name not in self._streams:
                table = _table_name(match.group(1), field_name)
                self._schema(table)  # NOT_FOUND for a missing table
                self._streams[name] = _Stream(name, table, StreamType.COMMITTED, time.time())
            stream = self._streams.get(name)
        if stream is None:
            raise StorageApiError(grpc.StatusCode.NOT_FOUND, f"Requested entity was not found. "
                                  f"Write stream {name} not found")  # fmt: skip
        return stream

    def _schema(self, table: TableName) -> list[dict[str, Any]]:
        warehouse = self._warehouse()
        cur = warehouse.cursor()
        try:
            warehouse.require_table(cur, table)
            fields = warehouse.table_schema(cur, table)
            intervals.refuse_interval_columns(fields, "the Storage Write API")
            return fields
        except QueryError as error:
            raise from_query_error(error) from error
        finally:
            cur.close()

    # -- AppendRows ------------------------------------------------------------------------
    def append_rows(self, requests: Iterator[Any]) -> Iterator[Any]:
        connection = _Connection()
        for request in requests:
            yield self._append(connection, request)

    def _append(self, connection: _Connection, request: Any) -> Any:
        if request.write_stream:
            connection.stream = request.write_stream
        if not connection.stream:
            raise invalid("write_stream", "the first request of a connection names the stream")
        stream = self._stream(connection.stream, "write_stream")  # NOT_FOUND ends the call
        response = AppendRowsResponsePb(write_stream=stream.name)
        try:
            _check_missing_values(request)
            rows = _decoded(connection, request)
            offset = self._check_offset(stream, request)
            self._write(stream, rows)
        except _InBand as error:
            response.error.code, response.error.message = error.code, error.message
            return response
        except row_codec.RowsRefused as error:
            response.error.code = code_pb2.INVALID_ARGUMENT
            response.error.message = str(error)
            return response
        if offset is not None:
            response.append_result.offset.value = offset
        else:
            response.append_result.SetInParent()
        return response

    def _check_offset(self, stream: _Stream, request: Any) -> int | None:
        if stream.finalized is not None:
            raise _InBand(code_pb2.INVALID_ARGUMENT, f"Stream {stream.name} is finalized")
        if not request.HasField("offset"):
            return None if stream.name.endswith("/" + DEFAULT_STREAM) else stream.rows
        if stream.name.endswith("/" + DEFAULT_STREAM):
            raise _InBand(
                code_pb2.INVALID_ARGUMENT,
                "offset: not allowed when calling AppendRows for the '_default' stream",
            )
        wanted = request.offset.value
        if wanted < stream.rows:
            raise _InBand(code_pb2.ALREADY_EXISTS, f"The offset is within stream, expected "
                          f"offset {stream.rows}, received {wanted}")  # fmt: skip
        if wanted > stream.rows:
            raise _InBand(code_pb2.OUT_OF_RANGE, f"The offset is beyond stream, expected "
                          f"offset {stream.rows}, received {wanted}")  # fmt: skip
        return wanted

    def _write(self, stream: _Stream, rows: pa.Table) -> None:
        warehouse = self._warehouse()
        schema = self._schema(stream.table)
        with warehouse.transaction(stream.table) as cur:
            fitted = row_codec.fit(cur, rows, schema, stream.table.sql)
            if stream.type == StreamType.COMMITTED:
                row_codec.insert(cur, stream.table.sql, fitted)
                warehouse.touch_table(cur, stream.table)
            else:
                stream.waiting.append(fitted)
            stream.rows += fitted.num_rows


class _InBand(Exception):
    """An append refused in the response's `error`, the connection left open."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _check_missing_values(request: Any) -> None:
    """NULL_VALUE is what an absent field becomes here, as on Google with no interpretation
    set; DEFAULT_VALUE would need the column's default value expression, which the local
    tables do not evaluate on append, so it is refused rather than silently written as NULL."""
    wanted = {
        "default_missing_value_interpretation": [request.default_missing_value_interpretation],
        "missing_value_interpretations": list(request.missing_value_interpretations.values()),
    }
    for field_name, interpretations in wanted.items():
        if any(value == DEFAULT_VALUE for value in interpretations):
            raise _InBand(code_pb2.INVALID_ARGUMENT, f"{field_name}: DEFAULT_VALUE is not "
                          "applied locally (column defaults are not evaluated on append); "
                          "use NULL_VALUE or leave it unset")  # fmt: skip


def _decoded(connection: _Connection, request: Any) -> pa.Table:
    if request.HasField("proto_rows"):
        data = request.proto_rows
        if data.HasField("writer_schema"):
            connection.proto_descriptor = data.writer_schema.proto_descriptor
        if connection.proto_descriptor is None:
            raise _InBand(
                code_pb2.INVALID_ARGUMENT,
                "proto_rows.writer_schema: the first request of a connection carries it",
            )
        return row_codec.proto_table(connection.proto_descriptor, list(data.rows.serialized_rows))
    if request.HasField("arrow_rows"):
        data = request.arrow_rows
        if data.HasField("writer_schema"):
            connection.arrow_schema = data.writer_schema.serialized_schema
        if not connection.arrow_schema:
            raise _InBand(
                code_pb2.INVALID_ARGUMENT,
                "arrow_rows.writer_schema: the first request of a connection carries it",
            )
        return row_codec.arrow_table(connection.arrow_schema, data.rows.serialized_record_batch)
    raise _InBand(code_pb2.INVALID_ARGUMENT, "rows: give proto_rows or arrow_rows")


def _table_name(path: str, field_name: str) -> TableName:
    match = TABLE_PATH.fullmatch(path)
    if not match:
        raise invalid(field_name, "must be projects/{project}/datasets/{dataset}/tables/"
                      f"{{table}}, got {path!r}")  # fmt: skip
    return TableName(*match.groups())


def _stream_message(stream: _Stream, schema: list[dict[str, Any]] | None) -> Any:
    message = WriteStreamPb(name=stream.name, type_=stream.type, location=LOCATION,
                            write_mode=types.WriteStream.WriteMode.INSERT)  # fmt: skip
    message.create_time.FromMicroseconds(int(stream.created * 1e6))
    if stream.committed is not None:
        message.commit_time.FromMicroseconds(int(stream.committed * 1e6))
    if schema is not None:
        message.table_schema.CopyFrom(table_schema(schema))
    return message


def table_schema(fields: list[dict[str, Any]]) -> Any:
    schema = TableSchemaPb()
    for item in fields:
        schema.fields.add().CopyFrom(_field_schema(item))
    return schema


def _field_schema(item: dict[str, Any]) -> Any:
    message = types.TableFieldSchema.pb()(name=item["name"])
    kind = kind_of(item)
    message.type_ = types.TableFieldSchema.Type[FIELD_TYPES.get(kind, kind)]
    message.mode = types.TableFieldSchema.Mode[mode_of(item)]
    for child in item.get("fields") or []:
        message.fields.add().CopyFrom(_field_schema(child))
    return message
