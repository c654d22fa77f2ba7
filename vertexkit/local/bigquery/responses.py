"""The BigQuery v2 wire format: schemas (BigQuery <-> DuckDB types) and `f/v` rows encoded the way
google-cloud-bigquery parses them (TIMESTAMP as integer microseconds, BYTES as base64, ...)."""

from __future__ import annotations

import base64
import datetime
import json
import math
from collections.abc import Callable
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from vertexkit.local.bigquery.query_error import not_supported
from vertexkit.local.bigquery.sql import (
    BIGNUMERIC_TYPE,
    NUMERIC_TYPE,
    QueryError,
)

LOCATION = "US"
SCALAR_TO_DUCKDB = {
    "INT64": "BIGINT",
    "INTEGER": "BIGINT",
    "FLOAT64": "DOUBLE",
    "FLOAT": "DOUBLE",
    "NUMERIC": NUMERIC_TYPE,
    "DECIMAL": NUMERIC_TYPE,
    "BIGNUMERIC": BIGNUMERIC_TYPE,
    "BIGDECIMAL": BIGNUMERIC_TYPE,
    "BOOL": "BOOLEAN",
    "BOOLEAN": "BOOLEAN",
    "STRING": "VARCHAR",
    "BYTES": "BLOB",
    "DATE": "DATE",
    "DATETIME": "TIMESTAMP",
    "TIME": "TIME",
    "TIMESTAMP": "TIMESTAMPTZ",
    "JSON": "JSON",
    "GEOGRAPHY": "GEOMETRY",  # WKB in DuckDB's GEOMETRY: geography.py
    "INTERVAL": "INTERVAL",  # months, days and microseconds apart, as in BigQuery: intervals.py
}
CANONICAL_TYPE = {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL", "STRUCT": "RECORD"}
DUCKDB_TO_BIGQUERY = {
    "tinyint": "INTEGER",
    "smallint": "INTEGER",
    "integer": "INTEGER",
    "bigint": "INTEGER",
    "hugeint": "INTEGER",
    "utinyint": "INTEGER",
    "usmallint": "INTEGER",
    "uinteger": "INTEGER",
    "ubigint": "INTEGER",
    "float": "FLOAT",
    "double": "FLOAT",
    "boolean": "BOOLEAN",
    "varchar": "STRING",
    "uuid": "STRING",
    "blob": "BYTES",
    "date": "DATE",
    "timestamp": "DATETIME",
    "timestamp_ms": "DATETIME",
    "timestamp_ns": "DATETIME",
    "timestamp_s": "DATETIME",
    "timestamp with time zone": "TIMESTAMP",
    "time": "TIME",
    "interval": "INTERVAL",
}


# -- schemas ---------------------------------------------------------------------------------
def field_to_duckdb(field: dict[str, Any]) -> str:
    """A BigQuery schema field -> the DuckDB column type that stores it."""
    kind = str(field.get("type", "")).upper()
    kind = CANONICAL_TYPE.get(kind, kind)
    if kind == "RECORD":
        children = field.get("fields") or []
        if not children:
            raise QueryError(
                f"Field {field.get('name')} is type RECORD but has no schema", "invalid"
            )
        inner = ", ".join(f"{quote(child['name'])} {field_to_duckdb(child)}" for child in children)
        base = f"STRUCT({inner})"
    elif kind in SCALAR_TO_DUCKDB:
        base = SCALAR_TO_DUCKDB[kind]
    else:
        allowed = ", ".join(sorted({*SCALAR_TO_DUCKDB, "RECORD", "STRUCT"}))
        raise QueryError(
            f"Field {field.get('name')}: unknown type {kind!r}; allowed: {allowed}", "invalid"
        )
    return f"{base}[]" if str(field.get("mode", "")).upper() == "REPEATED" else base


def schema_to_columns(fields: list[dict[str, Any]]) -> str:
    """`(name TYPE [NOT NULL], ...)` for CREATE TABLE."""
    if not fields:
        raise QueryError("A schema needs at least one field", "invalid")
    names = set()
    parts = []
    for item in fields:
        name = item.get("name") or ""
        if not name or name.lower() in names:
            raise QueryError(f"Schema field name {name!r} is empty or duplicated", "invalid")
        names.add(name.lower())
        required = " NOT NULL" if str(item.get("mode", "")).upper() == "REQUIRED" else ""
        parts.append(f"{quote(name)} {field_to_duckdb(item)}{required}")
    return "(" + ", ".join(parts) + ")"


def duckdb_to_field(name: str, kind: duckdb.typing.DuckDBPyType, nullable: bool = True) -> dict:
    """A DuckDB column -> a BigQuery schema field."""
    mode = "NULLABLE" if nullable else "REQUIRED"
    if kind.id == "list":
        _refuse_nested_geography(name, kind.children[0][1])
        child = duckdb_to_field(name, kind.children[0][1])
        if child.get("mode") == "REPEATED":
            raise QueryError(f"Column {name}: arrays of arrays are not allowed in BigQuery")
        return {**child, "mode": "REPEATED"}
    if kind.id == "struct":
        for child, sub in kind.children:
            _refuse_nested_geography(f"{name}.{child}", sub)
        fields = [duckdb_to_field(child, sub) for child, sub in kind.children]
        return {"name": name, "type": "RECORD", "mode": mode, "fields": fields}
    if kind.id == "decimal":
        params = dict(kind.children)
        bq_type = "NUMERIC" if params["scale"] <= 9 and params["precision"] <= 38 else "BIGNUMERIC"
        if (params["precision"], params["scale"]) == (38, 18):
            bq_type = "BIGNUMERIC"
        return {"name": name, "type": bq_type, "mode": mode}
    if str(kind) == '"NULL"':  # an untyped NULL is INT64 in BigQuery
        return {"name": name, "type": "INTEGER", "mode": mode}
    if str(kind) == "JSON":
        return {"name": name, "type": "JSON", "mode": mode}
    if kind.id == "geometry":
        return {"name": name, "type": "GEOGRAPHY", "mode": mode}
    bq_type = DUCKDB_TO_BIGQUERY.get(kind.id)
    if bq_type is None:
        raise QueryError(f"Column {name} has type {kind}, which BigQuery has no equivalent for")
    return {"name": name, "type": bq_type, "mode": mode}


def _refuse_nested_geography(name: str, kind: duckdb.typing.DuckDBPyType) -> None:
    # Values leave as WKT text column by column (geography.text_columns); a GEOGRAPHY inside
    # an ARRAY or STRUCT would leave as WKB bytes.
    if kind.id == "geometry":
        raise not_supported(f"GEOGRAPHY inside an ARRAY or STRUCT (column {name})")


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# -- rows --------------------------------------------------------------------------------------
def encode_rows(table: pa.Table, fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Arrow rows -> `[{"f": [{"v": ...}, ...]}, ...]`; whole columns are converted at once."""
    columns = [_encode_column(table.column(index), field) for index, field in enumerate(fields)]
    return [{"f": [{"v": value} for value in row]} for row in zip(*columns, strict=True)]


def _encode_column(column: pa.ChunkedArray, field: dict[str, Any]) -> list[Any]:
    kind = CANONICAL_TYPE.get(field["type"], field["type"])
    if field.get("mode") == "REPEATED" or kind == "RECORD":
        encode = _value_encoder(field)
        return [encode(value) for value in column.to_pylist()]
    fast = _vector_encode(column, kind)
    if fast is not None:
        return fast
    encode = _scalar_encoder(kind)
    return [None if value is None else encode(value) for value in column.to_pylist()]


def _vector_encode(column: pa.ChunkedArray, kind: str) -> list[Any] | None:
    """Arrow compute for the common scalar types: 10-50x faster than per-value Python."""
    if kind in ("INT64", "BOOL", "STRING", "DATE", "NUMERIC", "BIGNUMERIC"):
        if kind == "BOOL":
            return pc.cast(column, pa.string()).to_pylist()  # "true"/"false"
        return pc.cast(column, pa.string()).to_pylist() if kind != "STRING" else column.to_pylist()
    if kind == "TIMESTAMP":
        micros = pc.cast(pc.cast(column, pa.timestamp("us", tz="UTC")), pa.int64())
        return pc.cast(micros, pa.string()).to_pylist()
    if kind == "FLOAT64":
        values = column.to_pylist()
        if pc.any(pc.invert(pc.is_finite(column))).as_py():
            return [_encode_float(value) if value is not None else None for value in values]
        return values
    return None


def _encode_float(value: float) -> Any:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _scalar_encoder(kind: str) -> Callable[[Any], Any]:
    encoders: dict[str, Callable[[Any], Any]] = {
        "INT64": str,
        "FLOAT64": _encode_float,
        "NUMERIC": str,
        "BIGNUMERIC": str,
        "BOOL": lambda value: "true" if value else "false",
        "STRING": str,
        "GEOGRAPHY": str,
        "BYTES": lambda value: base64.b64encode(value).decode(),
        "DATE": lambda value: value.isoformat(),
        # isoformat: strftime writes year 3 as "3", which the client cannot read back.
        "DATETIME": lambda value: value.isoformat(timespec="microseconds"),
        "TIME": lambda value: value.strftime("%H:%M:%S.%f"),
        "TIMESTAMP": _timestamp_micros,
        "JSON": lambda value: value if isinstance(value, str) else json.dumps(value),
        "INTERVAL": str,  # already BigQuery's canonical text (intervals.exportable)
    }
    return encoders.get(kind, str)


def _timestamp_micros(value: datetime.datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    delta = value - datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    return str((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)


def _value_encoder(field: dict[str, Any]) -> Callable[[Any], Any]:
    kind = CANONICAL_TYPE.get(field["type"], field["type"])
    if kind == "RECORD":
        children = [(child["name"], _value_encoder(child)) for child in field["fields"]]

        def encode_record(value: Any) -> Any:
            if value is None:
                return None
            return {"f": [{"v": encode(value.get(name))} for name, encode in children]}

        single: Callable[[Any], Any] = encode_record
    else:
        scalar = _scalar_encoder(kind)

        def single(value: Any) -> Any:
            return None if value is None else scalar(value)

    if field.get("mode") != "REPEATED":
        return single
    return lambda values: [{"v": single(item)} for item in (values or [])]


# -- resources ---------------------------------------------------------------------------------
def millis(moment: float) -> str:
    return str(int(moment * 1000))


def error_proto(message: str, reason: str) -> dict[str, str]:
    return {"reason": reason, "message": message, "location": "query" if reason else ""}
