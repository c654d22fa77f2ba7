"""`CREATE [OR REPLACE] FUNCTION [IF NOT EXISTS] dataset.fn(x T, ...) [RETURNS T]
[OPTIONS(description=...)] AS (expression)`, `CREATE [OR REPLACE] TABLE FUNCTION [IF NOT EXISTS]
dataset.tvf(x T, ...) [RETURNS TABLE<c T, ...>] AS [(]SELECT ...[)]`, `DROP FUNCTION` and
`DROP TABLE FUNCTION [IF EXISTS]` in a query: the same routines routines.insert and
routines.delete make and remove (routines.py).
https://cloud.google.com/bigquery/docs/reference/standard-sql/data-definition-language#create_function_statement
https://cloud.google.com/bigquery/docs/reference/standard-sql/data-definition-language#create_table_function_statement

JavaScript, remote and aggregate functions and table parameters (`t TABLE<...>`) cannot run
here and are refused by name; so is any OPTIONS entry but description, rather than kept
without effect.
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
TABLE_FUNCTION = re.compile(
    r"^\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?|DROP\s+)(TABLE\s+)FUNCTION\b", re.IGNORECASE
)
TABLE_PARAMETER = re.compile(r"\(\s*[^)]*\bTABLE\s*<", re.IGNORECASE)
TABLE_KIND = "table_function"  # statement.meta key: the statement names a table function
NO_STATISTICS = {"totalBytesProcessed": "0", "totalBytesBilled": "0", "cacheHit": False}


def parse(sql: str) -> exp.Expression | None:
    """The statement when `sql` is one CREATE FUNCTION (not TEMP) or DROP FUNCTION; None for
    anything else, which the query path translates as before."""
    if not FUNCTION_WORD.search(sql):
        return None
    if AGGREGATE.match(sql):
        raise not_supported("aggregate UDFs (CREATE AGGREGATE FUNCTION)")
    table_function = TABLE_FUNCTION.match(sql)
    if table_function:
        # sqlglot reads `CREATE TABLE FUNCTION` as `CREATE FUNCTION` and not `DROP TABLE
        # FUNCTION` at all: parse without the word, and remember it
        sql = sql[: table_function.start(1)] + sql[table_function.end(1) :]
    try:
        statements = [s for s in sqlglot.parse(sql, read="bigquery") if s is not None]
    except ParseError as error:
        if table_function and TABLE_PARAMETER.search(sql.split(" AS ", 1)[0]):
            raise not_supported("table function parameters of type TABLE<...>") from None
        if table_function:
            raise QueryError(f"Syntax error: {str(error).splitlines()[0]}") from None
        return None  # the translation reports the syntax error
    if len(statements) != 1 or not isinstance(statements[0], (exp.Create, exp.Drop)):
        return None
    statement = statements[0]
    if str(statement.args.get("kind") or "").upper() != "FUNCTION" or _temporary(statement):
        return None
    statement.meta[TABLE_KIND] = bool(table_function)
    return statement


def _kind_words(statement: exp.Expression) -> tuple[str, str, str]:
    """(statementType suffix, routineType, the noun of its messages)."""
    if statement.meta.get(TABLE_KIND):
        return "TABLE_FUNCTION", routines.TABLE_FUNCTION, "Table function"
    return "FUNCTION", "SCALAR_FUNCTION", "Function"


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
    kind, routine_type, noun = _kind_words(statement)
    existing = routines.load(cur, name)
    if existing is None or existing["routineType"] != routine_type:
        # DROP FUNCTION does not drop a table function, nor DROP TABLE FUNCTION a scalar one
        if statement.args.get("exists"):
            return _statistics(f"DROP_{kind}", "SKIP", name)
        raise NotFound(f"Not found: {noun} {name.bigquery_id}")
    routines.drop(cur, name)
    return _statistics(f"DROP_{kind}", "DROP", name)


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
    kind, _, noun = _kind_words(statement)
    resource = _resource(statement, udf, name)
    existing = routines.load(cur, name)
    if existing is not None and statement.args.get("exists"):
        return _statistics(f"CREATE_{kind}", "SKIP", name)
    if existing is not None and not statement.args.get("replace"):
        raise Duplicate(f"Already Exists: {noun} {name.bigquery_id}")
    try:
        routines.save(warehouse, cur, resource, existing, keep_created=False)
    except ApiError as error:  # a routine id the local BigQuery cannot call
        raise QueryError(error.message) from None
    return _statistics(f"CREATE_{kind}", "REPLACE" if existing else "CREATE", name)


def _resource(statement: exp.Create, udf: exp.UserDefinedFunction, name: TableName) -> dict:
    table_function = bool(statement.meta.get(TABLE_KIND))
    body = _query(statement.expression) if table_function else _body(statement.expression)
    resource = {
        "routineReference": {
            "projectId": name.project, "datasetId": name.dataset, "routineId": name.table,
        },
        "routineType": routines.TABLE_FUNCTION if table_function else "SCALAR_FUNCTION",
        "language": "SQL",
        "arguments": [_argument(argument) for argument in udf.expressions],
        "definitionBody": body,
    }  # fmt: skip
    properties = statement.args.get("properties")
    for prop in properties.expressions if properties else []:
        resource.update(_property(prop))
    if table_function and "returnType" in resource:
        raise QueryError("Syntax error: a table function RETURNS TABLE<column type, ...>")
    if not table_function and "returnTableType" in resource:
        raise QueryError("Syntax error: RETURNS TABLE<...> is for CREATE TABLE FUNCTION")
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


def _query(expression: exp.Expression | None) -> str:
    """A table function's body, `AS SELECT ...` or `AS (SELECT ...)`: the query's text."""
    if isinstance(expression, exp.Subquery):
        expression = expression.this
    if not isinstance(expression, exp.Query):
        raise QueryError("Syntax error: a table function's body is a query, AS (SELECT ...)")
    return expression.sql(dialect="bigquery")


def _property(prop: exp.Expression) -> dict:
    if isinstance(prop, exp.ReturnsProperty) and isinstance(prop.this, exp.Schema):
        columns = [
            {"name": column.name, "type": data_type(column.args["kind"])}
            for column in prop.this.expressions
        ]
        return {"returnTableType": {"columns": columns}}
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
