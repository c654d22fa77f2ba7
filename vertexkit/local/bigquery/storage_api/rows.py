"""The Write API's rows: proto rows (decoded with the writer's own descriptor) or Arrow rows,
turned into an Arrow table in the destination table's column types.

`ProtoSchema.proto_descriptor` is "a self-contained" DescriptorProto: nested message types are
its nested_type entries. It goes into a pool of its own (one per distinct descriptor), and
protobuf's message factory builds the class that parses `serialized_rows`. Values map as in
Google's "Supported protocol buffer and Arrow data types" table of the Storage Write API page:
the scalar of the column's type, or an int32 DATE (days since the epoch) or int64 TIMESTAMP
(microseconds since the epoch), or a string DuckDB casts (DATE, DATETIME, TIME, TIMESTAMP,
NUMERIC, BIGNUMERIC, JSON).
"""

from __future__ import annotations

import threading
from typing import Any

import duckdb
import pyarrow as pa
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from vertexkit.local.bigquery.responses import quote
from vertexkit.local.bigquery.storage_api.formats import kind_of, mode_of

_classes: dict[bytes, Any] = {}
_classes_lock = threading.Lock()


class RowsRefused(Exception):
    """Rows the append cannot take: answered in-band as INVALID_ARGUMENT (AppendRowsResponse's
    `error`: "INVALID_ARGUMENT: Indicates a malformed request or data")."""


# -- decoding ------------------------------------------------------------------------------
def message_class(descriptor: Any) -> Any:
    """The class of the writer's proto descriptor, built once per distinct descriptor."""
    key = descriptor.SerializeToString()
    with _classes_lock:
        if key not in _classes:
            _classes[key] = _build_class(descriptor)
        return _classes[key]


def _build_class(descriptor: Any) -> Any:
    proto = descriptor_pb2.DescriptorProto()
    proto.CopyFrom(descriptor)
    package = _package_of(proto)
    file = descriptor_pb2.FileDescriptorProto(name=f"vertexkit_writer_{id(proto)}.proto",
                                              package=package, syntax="proto2")  # fmt: skip
    file.message_type.add().CopyFrom(proto)
    pool = descriptor_pool.DescriptorPool()
    try:
        pool.Add(file)
        full_name = f"{package}.{proto.name}" if package else proto.name
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))
    except (TypeError, KeyError) as error:
        raise RowsRefused(f"writer_schema.proto_descriptor: {error}") from error


def _package_of(proto: Any) -> str:
    """A descriptor copied from a compiled message names its nested types fully (`.pkg.Row.Sub`);
    the package they were compiled in is what comes before the message's own name."""
    for field in _all_fields(proto):
        name = field.type_name
        marker = f".{proto.name}."
        if name.startswith(".") and marker in name:
            return name[1 : name.index(marker)]
    return ""


def _all_fields(proto: Any) -> list[Any]:
    fields = list(proto.field)
    for nested in proto.nested_type:
        fields.extend(_all_fields(nested))
    return fields


def proto_table(descriptor: Any, serialized_rows: list[bytes]) -> pa.Table:
    cls = message_class(descriptor)
    try:
        messages = [cls.FromString(row) for row in serialized_rows]
    except Exception as error:  # DecodeError: a row that is not the writer's message
        raise RowsRefused(f"proto_rows.rows: a row does not parse as {cls.DESCRIPTOR.name}: "
                          f"{error}") from error  # fmt: skip
    names = [field.name for field in cls.DESCRIPTOR.fields]
    rows = [_as_dict(message) for message in messages]
    return pa.Table.from_pylist(rows) if rows else pa.table({name: [] for name in names})


def _as_dict(message: Any) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if _is_repeated(field):
            values[field.name] = [_as_value(field, item) for item in value]
        elif field.has_presence and not message.HasField(field.name):
            values[field.name] = None  # an unset field is NULL, as Google writes it
        else:
            values[field.name] = _as_value(field, value)
    return values


def _is_repeated(field: Any) -> bool:
    is_repeated = getattr(field, "is_repeated", None)  # protobuf >= 6
    return bool(is_repeated) if is_repeated is not None else field.label == field.LABEL_REPEATED


def _as_value(field: Any, value: Any) -> Any:
    return _as_dict(value) if field.message_type is not None else value


def arrow_table(serialized_schema: bytes, serialized_batch: bytes) -> pa.Table:
    try:
        schema = pa.ipc.read_schema(pa.py_buffer(serialized_schema))
        batch = pa.ipc.read_record_batch(pa.py_buffer(serialized_batch), schema)
    except (pa.ArrowInvalid, OSError) as error:
        raise RowsRefused(
            f"arrow_rows: not an Arrow IPC schema and record batch: {error}"
        ) from error
    return pa.Table.from_batches([batch])


# -- into the table's types ----------------------------------------------------------------
def fit(
    cur: duckdb.DuckDBPyConnection, rows: pa.Table, fields: list[dict[str, Any]], table_sql: str
) -> pa.Table:
    """`rows` with the destination's columns and types (DuckDB's casts), refused as Google
    refuses them: a field the table lacks, a REQUIRED field missing or NULL, a value that does
    not convert."""
    by_name = {item["name"].lower(): item for item in fields}
    extra = [name for name in rows.column_names if name.lower() not in by_name]
    if extra:
        raise RowsRefused("Input schema has more fields than BigQuery schema, extra fields: "
                          + ", ".join(f"'{name}'" for name in extra))  # fmt: skip
    given = {name.lower(): name for name in rows.column_names}
    rows = _pre_cast(rows, by_name)
    types = dict(zip(*_columns(cur, table_sql), strict=True))
    selects = []
    for item in fields:
        source = given.get(item["name"].lower())
        if source is None and mode_of(item) == "REQUIRED":
            raise RowsRefused(f"Required field {item['name']} is missing from the writer schema")
        value = "NULL" if source is None else quote(source)
        selects.append(f"CAST({value} AS {types[item['name']]}) AS {quote(item['name'])}")
    try:
        cur.register("_vertexkit_append", rows)
        fitted = cur.sql(f"SELECT {', '.join(selects)} FROM _vertexkit_append").to_arrow_table()
    except duckdb.Error as error:
        raise RowsRefused(f"a value does not convert to its column's type: {error}") from error
    finally:
        cur.unregister("_vertexkit_append")
    for item in fields:
        if mode_of(item) == "REQUIRED" and fitted.column(item["name"]).null_count:
            raise RowsRefused(f"Required field {item['name']} cannot be NULL")
    return fitted


def _columns(cur: duckdb.DuckDBPyConnection, table_sql: str) -> tuple[list[str], list[str]]:
    relation = cur.sql(f"SELECT * FROM {table_sql} LIMIT 0")
    return relation.columns, [str(kind) for kind in relation.types]


def _pre_cast(rows: pa.Table, by_name: dict[str, dict[str, Any]]) -> pa.Table:
    """The integer encodings DuckDB's CAST does not read: an int32 DATE is days since the
    epoch, an int64 TIMESTAMP microseconds since the epoch."""
    columns = []
    for name, column in zip(rows.column_names, rows.columns, strict=True):
        kind = kind_of(by_name[name.lower()])
        if pa.types.is_integer(column.type) and kind == "DATE":
            column = column.cast(pa.int32()).cast(pa.date32())
        elif pa.types.is_integer(column.type) and kind == "TIMESTAMP":
            column = column.cast(pa.int64()).cast(pa.timestamp("us", tz="UTC"))
        elif pa.types.is_integer(column.type) and kind in ("DATETIME", "TIME"):
            raise RowsRefused(
                f"field {name}: the packed int64 civil-time encoding of {kind} is not served "
                "by the local BigQuery; send a string"
            )
        columns.append(column)
    return pa.Table.from_arrays(columns, names=rows.column_names)


def insert(cur: duckdb.DuckDBPyConnection, table_sql: str, rows: pa.Table) -> None:
    cur.register("_vertexkit_insert", rows)
    try:
        cur.execute(f"INSERT INTO {table_sql} SELECT * FROM _vertexkit_insert")
    finally:
        cur.unregister("_vertexkit_insert")
