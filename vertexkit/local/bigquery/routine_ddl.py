"""`CREATE [OR REPLACE] FUNCTION [IF NOT EXISTS] dataset.fn(x T, ...) [RETURNS T]
[OPTIONS(description=...)] AS (expression)` and `DROP FUNCTION [IF EXISTS] dataset.fn` in a
query: the same routines routines.insert and routines.delete make and remove (routines.py).
https://cloud.google.com/bigquery/docs/reference/standard-sql/data-definition-language#create_function_statement

JavaScript, remote, aggregate and table functions cannot run here and are refused by name;
so is any OPTIONS entry but description, rather than kept without effect.
"""

from __future__ import annotations

import re

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from vertexkit.local.bigquery import routines
from vertexkit.local.bigquery.models import Duplicate, NotFound, Warehouse
from vertexkit.local.bigquery.query_error import QueryError, not_supported
from vertexkit.local.bigquery.routine_types import data_type
from vertexkit.local.bigquery.sql import TableName
from vertexkit.local.errors import ApiError

FUNCTION_WORD = re.compile(r"\bFUNCTION\b", re.IGNORECASE)
AGGREGATE = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\w*\s+)?AGGREGATE\s+FUNCTION",
                       re.IGNORECASE)  # fmt: skip
TABLE_FUNCTION = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+FUNCTION", re.IGNORECASE)
NO_STATISTICS = {"totalBytesProcessed": "0", "totalBytesBilled": "0", "cacheHit": False}


def parse(sql: str) -> exp.Expression | None:
    """The statement when `sql` is one CREATE FUNCTION (not TEMP) or DROP FUNCTION; None for
    anything else, which the query path translates as before."""
    if not FUNCTION_WORD.search(sql):
        return None
    if AGGREGATE.match(sql):
        raise not_supported("aggregate UDFs (CREATE AGGREGATE FUNCTION)")
    if TABLE_FUNCTION.match(sql):
        raise not_supported("table functions (CREATE TABLE FUNCTION)")
    try:
        statements = [s for s in sqlglot.parse(sql, read="bigquery") if s is not None]
    except ParseError:
        return None  # the translation reports the syntax error
    if len(statements) != 1 or not isinstance(statements[0], (exp.Create, exp.Drop)):
        return None
    statement = statements[0]
    if str(statement.args.get("kind") or "").upper() != "FUNCTION" or _temporary(statement):
        return None
    return statement


def _temporary(statement: exp.Expression) -> bool:
    properties = statement.args.get("properties")
    return bool(properties) and any(
        isinstance(p, exp.TemporaryProperty) for p in properties.expressions
    )


def run(
    warehouse: Warehouse,
    cur: duckdb.DuckDBPyConnection,
    statement: exp.Expression,
    project: str,
    default_dataset: tuple[str, str] | None,
) -> dict:
    """Runs the statement in the job's transaction; answers the job's query statistics."""
    if isinstance(statement, exp.Drop):
        return _drop(cur, statement, project, default_dataset)
    return _create(warehouse, cur, statement, project, default_dataset)


def _name(table: exp.Expression, project: str, default: tuple[str, str] | None) -> TableName:
    if not isinstance(table, exp.Table):
        raise QueryError("Syntax error: expected a function name")
    if table.catalog:
        return TableName(table.catalog, table.db, table.name)
    if table.db:
        return TableName(project, table.db, table.name)
    if default:
        return TableName(default[0], default[1], table.name)
    raise QueryError(
        f"Function {table.name} must be qualified with a dataset (dataset.{table.name})"
    )


def _statistics(kind: str, operation: str, name: TableName) -> dict:
    target = {"projectId": name.project, "datasetId": name.dataset, "routineId": name.table}
    return {**NO_STATISTICS, "statementType": kind, "ddlOperationPerformed": operation,
            "ddlTargetRoutine": target}  # fmt: skip


def _drop(
    cur: duckdb.DuckDBPyConnection,
    statement: exp.Drop,
    project: str,
    default: tuple[str, str] | None,
) -> dict:
    tables = statement.args.get("tables") or [statement.this]
    if len(tables) != 1:
        raise not_supported("DROP of several functions at once")
    name = _name(tables[0], project, default)
    if routines.load(cur, name) is None:
        if statement.args.get("exists"):
            return _statistics("DROP_FUNCTION", "SKIP", name)
        raise NotFound(f"Not found: Function {name.bigquery_id}")
    routines.drop(cur, name)
    return _statistics("DROP_FUNCTION", "DROP", name)


def _create(
    warehouse: Warehouse,
    cur: duckdb.DuckDBPyConnection,
    statement: exp.Create,
    project: str,
    default: tuple[str, str] | None,
) -> dict:
    udf = statement.this
    if not isinstance(udf, exp.UserDefinedFunction):
        raise QueryError("Syntax error: expected CREATE FUNCTION name(arguments)")
    name = _name(udf.this, project, default)
    resource = _resource(statement, udf, name)
    existing = routines.load(cur, name)
    if existing is not None and statement.args.get("exists"):
        return _statistics("CREATE_FUNCTION", "SKIP", name)
    if existing is not None and not statement.args.get("replace"):
        raise Duplicate(f"Already Exists: Function {name.bigquery_id}")
    try:
        routines.save(warehouse, cur, resource, existing, keep_created=False)
    except ApiError as error:  # a routine id the local BigQuery cannot call
        raise QueryError(error.message) from None
    return _statistics("CREATE_FUNCTION", "REPLACE" if existing else "CREATE", name)


def _resource(statement: exp.Create, udf: exp.UserDefinedFunction, name: TableName) -> dict:
    resource = {
        "routineReference": {
            "projectId": name.project, "datasetId": name.dataset, "routineId": name.table,
        },
        "routineType": "SCALAR_FUNCTION",
        "language": "SQL",
        "arguments": [_argument(argument) for argument in udf.expressions],
        "definitionBody": _body(statement.expression),
    }  # fmt: skip
    properties = statement.args.get("properties")
    for prop in properties.expressions if properties else []:
        resource.update(_property(prop))
    return resource


def _argument(argument: exp.Expression) -> dict:
    kind = argument.args.get("kind") if isinstance(argument, exp.ColumnDef) else None
    if kind is None or "ANY TYPE" in kind.sql(dialect="bigquery").upper():
        raise not_supported("templated UDF arguments (ANY TYPE)")
    return {"name": argument.name, "dataType": data_type(kind)}


def _body(expression: exp.Expression | None) -> str:
    if isinstance(expression, exp.Paren):
        return expression.this.sql(dialect="bigquery")
    if isinstance(expression, exp.Subquery):  # AS ((SELECT ...))
        return expression.sql(dialect="bigquery")
    if isinstance(expression, exp.Literal):
        raise not_supported("JavaScript UDFs (LANGUAGE js)")
    raise not_supported("a CREATE FUNCTION body other than a SQL expression AS (...)")


def _property(prop: exp.Expression) -> dict:
    if isinstance(prop, exp.ReturnsProperty):
        return {"returnType": data_type(prop.this)}
    if isinstance(prop, exp.LanguageProperty):
        raise not_supported("JavaScript UDFs (LANGUAGE js)")
    if isinstance(prop, exp.RemoteWithConnectionModelProperty):
        raise not_supported("remote functions (REMOTE WITH CONNECTION)")
    if isinstance(prop, exp.Property) and prop.name.lower() == "description":
        if not isinstance(prop.args.get("value"), exp.Literal) or not prop.args["value"].is_string:
            raise QueryError("OPTIONS(description) must be a string literal")
        return {"description": prop.args["value"].this}
    raise not_supported(f"CREATE FUNCTION option {prop.sql(dialect='bigquery')}")
