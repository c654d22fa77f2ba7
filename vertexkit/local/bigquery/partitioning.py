"""Partitioning and clustering of a table, as BigQuery keeps them on the `Table` resource
(`timePartitioning`, `rangePartitioning`, `clustering`, `requirePartitionFilter`): checked against
the schema when the table is made (tables.insert, or CREATE TABLE ... PARTITION BY / CLUSTER BY),
stored beside it and answered back. DuckDB stores no partitions, so partitioning changes no
answer; `requirePartitionFilter` does, and is honoured: a query of such a table must filter on
its partitioning column in a WHERE clause (a simple check: BigQuery's is partition
elimination, which the local BigQuery does not model)."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from vertexkit.local.bigquery.query_error import QueryError, not_supported

TABLE_OPTIONS = (
    "timePartitioning",
    "rangePartitioning",
    "clustering",
    "encryptionConfiguration",
    "tableConstraints",
    "requirePartitionFilter",
)
TIME_TYPES = ("DAY", "HOUR", "MONTH", "YEAR")  # reference TimePartitioning.type
TIME_COLUMNS = ("DATE", "TIMESTAMP", "DATETIME")
MAX_CLUSTERING_FIELDS = 4  # docs: "You can specify up to four clustering columns"
TRUNC_UNITS = {"HOUR": "HOUR", "DAY": "DAY", "MONTH": "MONTH", "YEAR": "YEAR"}


def _invalid(message: str) -> QueryError:
    return QueryError(message, "invalid")


def check_options(options: dict[str, Any], fields: list[dict]) -> None:
    """Refuses partitioning or clustering over a column the schema lacks or cannot use."""
    types = {f["name"].lower(): (f.get("type", "").upper(), f.get("mode")) for f in fields}
    time = options.get("timePartitioning")
    if time is not None:
        kind = str(time.get("type") or "DAY").upper()
        if kind not in TIME_TYPES:
            raise _invalid(f"timePartitioning.type {kind!r}; allowed: {', '.join(TIME_TYPES)}")
        column = time.get("field")
        if column and types.get(column.lower(), ("",))[0] not in TIME_COLUMNS:
            raise _invalid(
                f"The field specified for time partitioning can only be of type TIMESTAMP, DATE "
                f"or DATETIME. The type found is: {types.get(column.lower(), ('missing',))[0]}."
            )
    ranged = options.get("rangePartitioning")
    if ranged is not None:
        column = str(ranged.get("field") or "")
        if types.get(column.lower(), ("",))[0] not in ("INTEGER", "INT64"):
            raise _invalid(f"rangePartitioning.field {column!r} must be an INT64 column")
        if time is not None:
            raise _invalid("A table cannot have both timePartitioning and rangePartitioning")
    clustering = (options.get("clustering") or {}).get("fields") or []
    if len(clustering) > MAX_CLUSTERING_FIELDS:
        raise _invalid(f"Too many clustering fields: {len(clustering)}, only 4 allowed")
    for column in clustering:
        if column.lower() not in types:
            raise _invalid(f"The field specified for clustering cannot be found: {column}")
    if options.get("requirePartitionFilter") and partition_column(options) is None:
        raise not_supported("requirePartitionFilter on a table without a partitioning column")


def partition_column(options: dict[str, Any]) -> str | None:
    """The column a partition filter must name; None for no (or ingestion-time) partitioning."""
    time = options.get("timePartitioning")
    if time is not None:
        return time.get("field") or None
    ranged = options.get("rangePartitioning")
    return (ranged or {}).get("field") or None


def options_of(body: dict[str, Any]) -> dict[str, Any]:
    return {key: body[key] for key in TABLE_OPTIONS if key in body}


# -- DDL ---------------------------------------------------------------------------------------
def take_ddl_options(statement: exp.Create) -> dict[str, Any]:
    """PARTITION BY / CLUSTER BY / OPTIONS(require_partition_filter) of CREATE TABLE as REST
    fields, removed from the statement (DuckDB has no such clauses)."""
    properties = statement.args.get("properties")
    if properties is None:
        return {}
    options: dict[str, Any] = {}
    kept = []
    for prop in properties.expressions:
        if isinstance(prop, exp.PartitionedByProperty):
            options.update(_partition_by(prop.this))
        elif isinstance(prop, exp.ClusterProperty):
            options["clustering"] = {"fields": [e.name for e in prop.expressions]}
        elif isinstance(prop, exp.Property) and prop.name.lower() == "require_partition_filter":
            options["requirePartitionFilter"] = prop.args["value"].sql().upper() == "TRUE"
        else:
            kept.append(prop)
    properties.set("expressions", kept)
    if not kept:
        statement.set("properties", None)
    return options


def _partition_by(node: exp.Expression) -> dict[str, Any]:
    if isinstance(node, (exp.Column, exp.Identifier)):
        return {"timePartitioning": {"type": "DAY", "field": node.name}}
    if isinstance(node, (exp.Date, exp.TsOrDsToDate)) and isinstance(node.this, exp.Column):
        return {"timePartitioning": {"type": "DAY", "field": node.this.name}}
    unit = node.args.get("unit")
    if isinstance(node, (exp.TimestampTrunc, exp.DatetimeTrunc, exp.DateTrunc)) and isinstance(
        node.this, exp.Column
    ):
        name = unit.name.upper() if unit is not None else ""
        if name in TRUNC_UNITS:
            return {"timePartitioning": {"type": TRUNC_UNITS[name], "field": node.this.name}}
    if isinstance(node, exp.RangeBucket):
        return {"rangePartitioning": _range_bucket(node)}
    raise not_supported(f"PARTITION BY {node.sql(dialect='bigquery')}")


def _range_bucket(node: exp.RangeBucket) -> dict[str, Any]:
    column, bounds = node.this, node.expression
    if not isinstance(column, exp.Column) or not isinstance(bounds, exp.GenerateSeries):
        raise not_supported(f"PARTITION BY {node.sql(dialect='bigquery')}")
    values = [bounds.args.get("start"), bounds.args.get("end"), bounds.args.get("step")]
    if not all(isinstance(v, exp.Literal) and v.is_int for v in values):
        raise not_supported("RANGE_BUCKET bounds that are not integer literals")
    start, end, interval = (str(v.this) for v in values if v is not None)
    return {"field": column.name, "range": {"start": start, "end": end, "interval": interval}}


# -- queries -----------------------------------------------------------------------------------
def check_partition_filters(sql: str, required: dict[str, str]) -> None:
    """`required`: table id (project.dataset.table) -> the column its partition filter must
    name. BigQuery's message for a query without one is quoted."""
    if not required:
        return
    try:
        statement = sqlglot.parse_one(sql, read="bigquery")
    except sqlglot.errors.ParseError:
        return  # the translation has already accepted it; nothing more to check
    filtered = {
        column.name.lower()
        for where in statement.find_all(exp.Where)
        for column in where.find_all(exp.Column)
    }
    for table, column in required.items():
        if column.lower() not in filtered:
            raise QueryError(
                f"Cannot query over table '{table}' without a filter over column(s) "
                f"'{column}' that can be used for partition elimination",
                "invalidQuery",
            )
