"""INFORMATION_SCHEMA.SCHEMATA / TABLES / COLUMNS, built from the catalog when a query names one.

`sql.translate` replaces each `[project.]dataset.INFORMATION_SCHEMA.VIEW` (or `region-xx.` /
`project.` for the project scope) by a name of its own; the job registers the view's rows under
that name on its own connection (`register`) before running the query, so the rows are those
of the catalog at the time of the job. Columns are BigQuery's, in BigQuery's order; a view or
column the local BigQuery does not have is refused or unknown, never made up.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Any

import duckdb

from vertexkit.local.bigquery.query_error import QueryError, not_supported
from vertexkit.local.bigquery.table_name import TableName

LOCATION = "US"
REGION = re.compile(r"^region-[a-z0-9-]+$", re.IGNORECASE)
# BigQuery's columns (a prefix of each view's documented column list), with their types.
SQL_TYPES = {"STRING": "VARCHAR", "TIMESTAMP": "TIMESTAMPTZ", "INT64": "BIGINT"}
COLUMNS: dict[str, list[tuple[str, str]]] = {
    "SCHEMATA": [
        ("catalog_name", "STRING"),
        ("schema_name", "STRING"),
        ("schema_owner", "STRING"),
        ("creation_time", "TIMESTAMP"),
        ("last_modified_time", "TIMESTAMP"),
        ("location", "STRING"),
    ],
    "TABLES": [
        ("table_catalog", "STRING"),
        ("table_schema", "STRING"),
        ("table_name", "STRING"),
        ("table_type", "STRING"),
        ("is_insertable_into", "STRING"),
        ("is_typed", "STRING"),
        ("creation_time", "TIMESTAMP"),
    ],
    "COLUMNS": [
        ("table_catalog", "STRING"),
        ("table_schema", "STRING"),
        ("table_name", "STRING"),
        ("column_name", "STRING"),
        ("ordinal_position", "INT64"),
        ("is_nullable", "STRING"),
        ("data_type", "STRING"),
        ("is_generated", "STRING"),
        ("is_hidden", "STRING"),
        ("is_system_defined", "STRING"),
        ("is_partitioning_column", "STRING"),
        ("clustering_ordinal_position", "INT64"),
    ],
}
TYPE_NAMES = {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL"}


@dataclass(frozen=True)
class InformationSchemaRef:
    """One INFORMATION_SCHEMA view a query reads; `dataset` None is the project scope."""

    alias: str
    view: str
    project: str
    dataset: str | None


def reference(index: int, view: str, qualifier: list[str], project: str) -> InformationSchemaRef:
    """The view named `qualifier`.INFORMATION_SCHEMA.`view` in a job of `project`."""
    view = view.upper()
    if view not in COLUMNS:
        raise not_supported(f"INFORMATION_SCHEMA.{view}")
    if not qualifier:
        raise QueryError(
            f"INFORMATION_SCHEMA.{view} must be qualified with a dataset or a region "
            "(e.g. dataset.INFORMATION_SCHEMA.TABLES or `region-us`.INFORMATION_SCHEMA.SCHEMATA)"
        )
    alias = f"_bq_information_schema_{index}"
    if len(qualifier) == 1 and REGION.match(qualifier[0]):
        return InformationSchemaRef(alias, view, project, None)
    if view == "SCHEMATA":  # project scope: `project.INFORMATION_SCHEMA.SCHEMATA`
        if len(qualifier) != 1:
            raise QueryError("INFORMATION_SCHEMA.SCHEMATA is qualified by a project or a region")
        return InformationSchemaRef(alias, view, qualifier[0], None)
    if len(qualifier) == 1:
        return InformationSchemaRef(alias, view, project, qualifier[0])
    return InformationSchemaRef(alias, view, qualifier[0], qualifier[1])


def register(warehouse: Any, cur: duckdb.DuckDBPyConnection, ref: InformationSchemaRef) -> None:
    """Makes `ref.alias` name the view's rows: a TEMP table, seen by this connection only and
    gone when the job's connection closes."""
    rows = {"SCHEMATA": _schemata, "TABLES": _tables, "COLUMNS": _columns}[ref.view](
        warehouse, cur, ref
    )
    columns = ", ".join(f'"{name}" {SQL_TYPES[kind]}' for name, kind in COLUMNS[ref.view])
    cur.execute(f'CREATE OR REPLACE TEMP TABLE "{ref.alias}" ({columns})')
    if rows:
        holes = ", ".join("?" for _ in COLUMNS[ref.view])
        cur.executemany(f'INSERT INTO "{ref.alias}" VALUES ({holes})', rows)


def _datasets(warehouse: Any, cur: duckdb.DuckDBPyConnection, ref: InformationSchemaRef) -> list:
    if ref.dataset is not None:
        warehouse.dataset_body(cur, ref.project, ref.dataset)  # NotFound for a missing one
        return [ref.dataset]
    return warehouse.list_datasets(ref.project, include_hidden=False)


def _time(milliseconds: Any) -> datetime.datetime | None:
    if milliseconds is None:
        return None
    return datetime.datetime.fromtimestamp(int(milliseconds) / 1000, tz=datetime.UTC)


def _schemata(warehouse: Any, cur: duckdb.DuckDBPyConnection, ref: InformationSchemaRef) -> list:
    rows = []
    for dataset in _datasets(warehouse, cur, ref):
        body = warehouse.dataset_body(cur, ref.project, dataset)
        created = _time(body.get("creationTime"))
        modified = _time(body.get("lastModifiedTime")) or created
        rows.append((ref.project, dataset, None, created, modified, LOCATION))
    return rows


def _each_table(warehouse: Any, cur: duckdb.DuckDBPyConnection, ref: InformationSchemaRef) -> list:
    tables = []
    for dataset in _datasets(warehouse, cur, ref):
        for name, kind in warehouse.list_tables(ref.project, dataset, cur):
            tables.append((TableName(ref.project, dataset, name), kind))
    return tables


def _tables(warehouse: Any, cur: duckdb.DuckDBPyConnection, ref: InformationSchemaRef) -> list:
    rows = []
    for name, kind in _each_table(warehouse, cur, ref):
        created = _time(warehouse.table_extras(cur, name).get("creationTime"))
        table_type = "VIEW" if kind == "VIEW" else "BASE TABLE"
        insertable = "NO" if kind == "VIEW" else "YES"
        rows.append((name.project, name.dataset, name.table, table_type, insertable, "NO", created))
    return rows


def _columns(warehouse: Any, cur: duckdb.DuckDBPyConnection, ref: InformationSchemaRef) -> list:
    rows = []
    for name, _ in _each_table(warehouse, cur, ref):
        for position, field in enumerate(warehouse.table_schema(cur, name), start=1):
            nullable = "NO" if field.get("mode") == "REQUIRED" else "YES"
            rows.append(
                (
                    name.project,
                    name.dataset,
                    name.table,
                    field["name"],
                    position,
                    nullable,
                    data_type(field),
                    "NEVER",
                    "NO",
                    "NO",
                    "NO",
                    None,
                )
            )
    return rows


def data_type(field: dict) -> str:
    """A schema field as INFORMATION_SCHEMA.COLUMNS writes its type: ARRAY<STRUCT<a INT64>>."""
    kind = TYPE_NAMES.get(field["type"], field["type"])
    if kind in ("RECORD", "STRUCT"):
        inner = ", ".join(
            f"{child['name']} {data_type(child)}" for child in field.get("fields") or []
        )
        kind = f"STRUCT<{inner}>"
    return f"ARRAY<{kind}>" if field.get("mode") == "REPEATED" else kind
