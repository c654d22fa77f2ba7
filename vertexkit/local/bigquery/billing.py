"""dryRun's totalBytesProcessed: BigQuery bills the columns a query reads, at its data sizes
(INT64 8 bytes, STRING 2 + its UTF-8 bytes, NULL 0, ARRAY and STRUCT the sum of their parts).
The local estimate reads the same sizes from the columns the query names (all of them for
`SELECT *`) in each table it reads."""

from __future__ import annotations

from typing import Any

import duckdb

from vertexkit.local.bigquery.responses import quote

FIXED_BYTES = {
    "INTEGER": 8,
    "INT64": 8,
    "FLOAT": 8,
    "FLOAT64": 8,
    "NUMERIC": 16,
    "BIGNUMERIC": 32,
    "BOOLEAN": 1,
    "BOOL": 1,
    "DATE": 8,
    "DATETIME": 8,
    "TIME": 8,
    "TIMESTAMP": 8,
}


def value_bytes(value: str, field: dict, depth: int = 0) -> str:
    """DuckDB SQL for the size of one value of `field` (0 for NULL)."""
    if str(field.get("mode") or "").upper() == "REPEATED":
        item = f"_bq_e{depth}"
        inner = value_bytes(item, {**field, "mode": "NULLABLE"}, depth + 1)
        return f"coalesce(list_sum([{inner} FOR {item} IN {value}]), 0)"
    kind = str(field["type"]).upper()
    if kind in FIXED_BYTES:
        return f"(CASE WHEN {value} IS NULL THEN 0 ELSE {FIXED_BYTES[kind]} END)"
    if kind in ("RECORD", "STRUCT"):
        parts = [
            value_bytes(f"struct_extract({value}, '{child['name']}')", child, depth)
            for child in field.get("fields") or []
        ]
        return f"(CASE WHEN {value} IS NULL THEN 0 ELSE {' + '.join(parts) or '0'} END)"
    if kind == "BYTES":
        return f"coalesce(octet_length({value}) + 2, 0)"
    if kind == "STRING":
        return f"coalesce(strlen({value}) + 2, 0)"
    return f"coalesce(strlen(CAST({value} AS VARCHAR)), 0)"  # JSON, GEOGRAPHY as text


def estimate(
    warehouse: Any, cur: duckdb.DuckDBPyConnection, tables: list, columns: set[str] | None
) -> int:
    """Bytes a query reading `columns` (None: all) of `tables` would be billed."""
    total = 0
    for table in tables:
        fields = [
            f
            for f in warehouse.table_schema(cur, table)
            if columns is None or f["name"].lower() in columns
        ]
        if not fields:
            continue
        sizes = " + ".join(f"sum({value_bytes(quote(f['name']), f)})" for f in fields)
        row = cur.execute(f"SELECT {sizes} FROM {table.sql}").fetchone()
        total += int(row[0] or 0) if row else 0
    return total
