"""The Read API's two row formats, from a table's BigQuery schema.

Arrow types are those of Google's "Storage Read API: Apache Arrow" table (INT64 int64, NUMERIC
decimal128(38, 9), BIGNUMERIC decimal256(76, 38), DATETIME timestamp[us], TIMESTAMP
timestamp[us, UTC], JSON and GEOGRAPHY utf8 with an `ARROW:extension:name` of
`google:sqlType:json` / `google:sqlType:geography`). Avro types are those of the same page's
Avro table (NUMERIC bytes decimal(38, 9), TIMESTAMP long timestamp-micros, DATE int date, TIME
long time-micros, DATETIME string with sqlType DATETIME, JSON string with sqlType JSON); a
NULLABLE column is a union with "null" first, a REPEATED one an array.
"""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa

from vertexkit.local.bigquery.responses import CANONICAL_TYPE

ARROW_SCALARS: dict[str, pa.DataType] = {
    "INT64": pa.int64(),
    "FLOAT64": pa.float64(),
    "BOOL": pa.bool_(),
    "STRING": pa.string(),
    "BYTES": pa.binary(),
    "DATE": pa.date32(),
    "DATETIME": pa.timestamp("us"),
    "TIME": pa.time64("us"),
    "TIMESTAMP": pa.timestamp("us", tz="UTC"),
    "NUMERIC": pa.decimal128(38, 9),
    "DECIMAL": pa.decimal128(38, 9),
    "BIGNUMERIC": pa.decimal256(76, 38),
    "BIGDECIMAL": pa.decimal256(76, 38),
    "JSON": pa.string(),
    "GEOGRAPHY": pa.string(),
}
EXTENSION_NAMES = {"JSON": b"google:sqlType:json", "GEOGRAPHY": b"google:sqlType:geography"}
AVRO_SCALARS: dict[str, Any] = {
    "INT64": "long",
    "FLOAT64": "double",
    "BOOL": "boolean",
    "STRING": "string",
    "BYTES": "bytes",
    "DATE": {"type": "int", "logicalType": "date"},
    "DATETIME": {"type": "string", "sqlType": "DATETIME"},
    "TIME": {"type": "long", "logicalType": "time-micros"},
    "TIMESTAMP": {"type": "long", "logicalType": "timestamp-micros"},
    "NUMERIC": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 9},
    "DECIMAL": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 9},
    "BIGNUMERIC": {"type": "bytes", "logicalType": "decimal", "precision": 77, "scale": 38},
    "BIGDECIMAL": {"type": "bytes", "logicalType": "decimal", "precision": 77, "scale": 38},
    "JSON": {"type": "string", "sqlType": "JSON"},
    "GEOGRAPHY": {"type": "string", "sqlType": "GEOGRAPHY"},
}


def kind_of(field: dict[str, Any]) -> str:
    kind = str(field.get("type", "")).upper()
    return CANONICAL_TYPE.get(kind, kind)


def mode_of(field: dict[str, Any]) -> str:
    return str(field.get("mode") or "NULLABLE").upper()


# -- Arrow -----------------------------------------------------------------------------------
def arrow_field(field: dict[str, Any]) -> pa.Field:
    kind = kind_of(field)
    if kind == "RECORD":
        value_type: pa.DataType = pa.struct([arrow_field(child) for child in field["fields"]])
    else:
        value_type = ARROW_SCALARS[kind]
    metadata = {b"ARROW:extension:name": EXTENSION_NAMES[kind]} if kind in EXTENSION_NAMES else None
    if mode_of(field) == "REPEATED":
        item = pa.field("item", value_type, nullable=False, metadata=metadata)
        return pa.field(field["name"], pa.list_(item), nullable=False)
    return pa.field(field["name"], value_type, mode_of(field) != "REQUIRED", metadata=metadata)


def arrow_schema(fields: list[dict[str, Any]]) -> pa.Schema:
    return pa.schema([arrow_field(field) for field in fields])


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """DuckDB's Arrow (string views, JSON extension types, DECIMAL(38, 18) for BIGNUMERIC) cast
    to the Read API's schema; columns matched by position, as the session's SELECT lists them."""
    columns = [
        _cast(column, field.type) for column, field in zip(table.columns, schema, strict=True)
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def _cast(column: pa.ChunkedArray, target: pa.DataType) -> pa.ChunkedArray:
    if column.type == target:
        return column
    if pa.types.is_extension_type(column.type):
        column = pa.chunked_array(
            [chunk.storage for chunk in column.chunks], column.type.storage_type
        )
    return column.cast(target)


def serialized_schema(schema: pa.Schema) -> bytes:
    return schema.serialize().to_pybytes()


def serialized_batch(rows: pa.Table, compression: str | None) -> bytes:
    """One IPC record-batch message (no schema), what `pyarrow.ipc.read_record_batch` reads;
    with `buffer_compression`, its buffers LZ4- or ZSTD-compressed."""
    batches = rows.combine_chunks().to_batches()
    batch = batches[0] if batches else pa.RecordBatch.from_pylist([], schema=rows.schema)
    if compression is None:
        return batch.serialize().to_pybytes()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(
        sink, rows.schema, options=pa.ipc.IpcWriteOptions(compression=compression)
    ) as writer:
        writer.write_batch(batch)  # fmt: skip
    messages = pa.ipc.MessageReader.open_stream(sink.getvalue())
    messages.read_next_message()  # the schema
    return messages.read_next_message().serialize().to_pybytes()


# -- Avro ------------------------------------------------------------------------------------
def avro_schema(fields: list[dict[str, Any]]) -> dict[str, Any]:
    """The session's Avro schema: a record named `__root__`, as Google names it."""
    return {"type": "record", "name": "__root__", "fields": [_avro_field(f, "") for f in fields]}


def _avro_field(field: dict[str, Any], path: str) -> dict[str, Any]:
    name = field["name"]
    if kind_of(field) == "RECORD":
        children = [_avro_field(child, f"{path}{name}__") for child in field["fields"]]
        value: Any = {"type": "record", "name": f"{path}{name}", "fields": children}
    else:
        value = AVRO_SCALARS[kind_of(field)]
    if mode_of(field) == "REPEATED":
        return {"name": name, "type": {"type": "array", "items": value}}
    if mode_of(field) == "REQUIRED":
        return {"name": name, "type": value}
    return {"name": name, "type": ["null", value]}


def avro_rows(table: pa.Table, schema: dict[str, Any]) -> bytes:
    """Rows as Avro binary, one after another with no container header: what the client's
    `fastavro.schemaless_reader` loop reads, `row_count` times."""
    import fastavro  # only Avro sessions need it

    parsed = fastavro.parse_schema(schema)
    datetimes = [f["name"] for f in schema["fields"] if _is_datetime_string(f["type"])]
    out = io.BytesIO()
    for row in table.to_pylist():
        for name in datetimes:  # Avro's DATETIME is the canonical civil-time string
            if row[name] is not None:
                row[name] = row[name].isoformat()
        fastavro.schemaless_writer(out, parsed, row)
    return out.getvalue()


def _is_datetime_string(avro_type: Any) -> bool:
    options = avro_type if isinstance(avro_type, list) else [avro_type]
    return any(isinstance(t, dict) and t.get("sqlType") == "DATETIME" for t in options)
