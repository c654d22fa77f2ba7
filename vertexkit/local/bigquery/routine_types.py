"""BigQuery's StandardSqlDataType (a routine's argument and return types) to and from GoogleSQL
type text, for the types the local BigQuery stores.
https://cloud.google.com/bigquery/docs/reference/rest/v2/StandardSqlDataType"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from vertexkit.local.bigquery.query_error import QueryError, not_supported
from vertexkit.local.errors import bad_request

SCALAR_KINDS = (
    "INT64", "BOOL", "FLOAT64", "STRING", "BYTES", "TIMESTAMP", "DATE", "TIME", "DATETIME",
    "GEOGRAPHY", "NUMERIC", "BIGNUMERIC", "JSON",
)  # fmt: skip
UNSTORED_KINDS = ("INTERVAL", "RANGE", "UUID")  # typeKinds no local column can hold


def type_sql(data_type: Any, where: str) -> str:
    """A StandardSqlDataType -> `INT64`, `ARRAY<STRING>`, `STRUCT<a INT64>`; 400 naming `where`."""
    if not isinstance(data_type, dict):
        raise bad_request(f"{where}: required, a StandardSqlDataType such as {{typeKind: INT64}}")
    kind = data_type.get("typeKind")
    if kind in SCALAR_KINDS:
        return str(kind)
    if kind == "ARRAY":
        return f"ARRAY<{type_sql(data_type.get('arrayElementType'), where + '.arrayElementType')}>"
    if kind == "STRUCT":
        return _struct_sql(data_type.get("structType"), where + ".structType")
    if kind in UNSTORED_KINDS:
        raise bad_request(f"{where}.typeKind: {kind} is not supported by the local BigQuery")
    allowed = ", ".join((*SCALAR_KINDS, "ARRAY", "STRUCT"))
    raise bad_request(f"{where}.typeKind must be one of {allowed}; got {kind!r}")


def _struct_sql(struct: Any, where: str) -> str:
    fields = (struct or {}).get("fields") if isinstance(struct, dict) else None
    if not isinstance(fields, list) or not fields:
        raise bad_request(f"{where}.fields: required, a non-empty list of {{name, type}}")
    parts = []
    for index, field in enumerate(fields):
        name = field.get("name") if isinstance(field, dict) else None
        if not isinstance(name, str) or not name.isidentifier():
            raise bad_request(f"{where}.fields[{index}].name must be a field name")
        parts.append(f"{name} {type_sql(field.get('type'), f'{where}.fields[{index}].type')}")
    return f"STRUCT<{', '.join(parts)}>"


def data_type(node: exp.DataType) -> dict:
    """A type as CREATE FUNCTION writes it -> its StandardSqlDataType."""
    if node.this == exp.DataType.Type.ARRAY:
        return {"typeKind": "ARRAY", "arrayElementType": data_type(node.expressions[0])}
    if node.this == exp.DataType.Type.STRUCT:
        fields = [
            {"name": column.name, "type": data_type(column.args["kind"])}
            for column in node.expressions
        ]
        return {"typeKind": "STRUCT", "structType": {"fields": fields}}
    kind = node.sql(dialect="bigquery").upper()
    if kind not in SCALAR_KINDS:
        raise QueryError(not_supported(f"routine arguments or results of type {kind}").message)
    return {"typeKind": kind}


LEGACY_NAMES = {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL", "RECORD": "STRUCT"}


def field_data_type(field: dict) -> dict:
    """A result schema field (responses.duckdb_to_field) -> its StandardSqlDataType: how a
    table function's returnTableType is inferred from its query when RETURNS TABLE is omitted."""
    kind = LEGACY_NAMES.get(field["type"], field["type"])
    if kind == "STRUCT":
        fields = [{"name": f["name"], "type": field_data_type(f)} for f in field["fields"]]
        element: dict = {"typeKind": "STRUCT", "structType": {"fields": fields}}
    else:
        element = {"typeKind": kind}
    if field.get("mode") == "REPEATED":
        return {"typeKind": "ARRAY", "arrayElementType": element}
    return element


def table_type_sql(table_type: Any, where: str) -> list[tuple[str, str]]:
    """A StandardSqlTableType {columns: [{name, type}]} -> [(name, GoogleSQL type)]; 400 naming
    `where`."""
    columns = table_type.get("columns") if isinstance(table_type, dict) else None
    if not isinstance(columns, list) or not columns:
        raise bad_request(f"{where}.columns: required, a non-empty list of {{name, type}}")
    out = []
    for index, column in enumerate(columns):
        name = column.get("name") if isinstance(column, dict) else None
        if not isinstance(name, str) or not name.isidentifier():
            raise bad_request(f"{where}.columns[{index}].name must be a column name")
        out.append((name, type_sql(column.get("type"), f"{where}.columns[{index}].type")))
    return out
