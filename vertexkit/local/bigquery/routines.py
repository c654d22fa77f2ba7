"""Persistent SQL UDFs: BigQuery's routines (SCALAR_FUNCTION, language SQL), made by
routines.insert or by `CREATE [OR REPLACE] FUNCTION` in a query (routine_ddl.py), callable from
later queries as `dataset.fn(...)` or `project.dataset.fn(...)`.
https://cloud.google.com/bigquery/docs/reference/rest/v2/routines

Each routine is a DuckDB macro in its dataset's schema (sql.py turns a qualified call into a
call of it, so dropping a dataset drops its routines) and its Routine resource in the catalog
table `_vertexkit.routines`. The macro casts each argument to its declared type and the result
to `returnType`, as BigQuery coerces them; the body is translated from GoogleSQL once, when the
routine is made, and bound against typed NULLs then, so a body BigQuery would reject is refused
at creation.

Routine fields honoured: routineReference, routineType (SCALAR_FUNCTION), language (SQL),
arguments (name, dataType, argumentKind FIXED_TYPE), returnType, definitionBody, description,
determinismLevel (kept and answered; it only guides BigQuery's result cache, which the local
BigQuery has not). etag, creationTime and lastModifiedTime are output only and, as on Google,
not read from a request. Everything else is refused by name: other routine types and languages
cannot run here (501), the options of remote, Spark, Python and data-masking routines and the
procedure-only fields are a 400.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from vertexkit.local.bigquery.functions import GOOGLESQL_FUNCTIONS
from vertexkit.local.bigquery.models import META_SCHEMA, Duplicate, NotFound, Warehouse
from vertexkit.local.bigquery.query_error import QueryError, not_supported
from vertexkit.local.bigquery.responses import duckdb_to_field, quote
from vertexkit.local.bigquery.routine_types import field_data_type, table_type_sql, type_sql
from vertexkit.local.bigquery.sql import TableCall, TableName, Translation, translate
from vertexkit.local.errors import bad_request, refused

ROUTINE_ID = re.compile(r"[A-Za-z0-9_]{1,256}")  # BigQuery's rule for RoutineReference.routineId
ARGUMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
REFUSED_TYPES = {
    "PROCEDURE": "stored procedures (routineType PROCEDURE) are not run by the local BigQuery",
    "AGGREGATE_FUNCTION": "aggregate UDFs (AGGREGATE_FUNCTION) are not run by the local BigQuery",
}
REFUSED_LANGUAGES = ("JAVASCRIPT", "PYTHON", "JAVA", "SCALA")
TABLE_FUNCTION = "TABLE_VALUED_FUNCTION"
ROUTINE_TYPES = ("SCALAR_FUNCTION", TABLE_FUNCTION, *REFUSED_TYPES)
LANGUAGES = ("SQL", *REFUSED_LANGUAGES)
DETERMINISM_LEVELS = ("DETERMINISM_LEVEL_UNSPECIFIED", "DETERMINISTIC", "NOT_DETERMINISTIC")
OUTPUT_ONLY = ("etag", "creationTime", "lastModifiedTime")
ACCEPTED = (
    "routineReference", "routineType", "language", "arguments", "returnType",
    "definitionBody", "description", "determinismLevel", "returnTableType", *OUTPUT_ONLY,
)  # fmt: skip
ARGUMENT_FIELDS = ("name", "dataType", "argumentKind")
POLICY_KEY = "_iamPolicy"  # stored with the routine, never answered as one of its fields
LIST_FIELDS = ("etag", "routineReference", "routineType", "creationTime", "lastModifiedTime",
               "language")  # fmt: skip


# -- the Routine resource ---------------------------------------------------------------------
def validate(body: dict, reference: dict) -> dict:
    """A Routine request -> the resource to store (no times, no etag), or a 400/501."""
    unknown = sorted(set(body) - set(ACCEPTED))
    if unknown:
        raise bad_request(f"{unknown[0]}: not accepted for a SQL function by the local "
                          f"BigQuery; accepted: {', '.join(ACCEPTED)}")  # fmt: skip
    _check_reference(body.get("routineReference"), reference)
    _check_kind(body)
    resource: dict[str, Any] = {
        "routineReference": reference,
        "routineType": body["routineType"],
        "language": "SQL",
        "arguments": [_argument(i, a) for i, a in enumerate(_list(body, "arguments"))],
        "definitionBody": _definition_body(body.get("definitionBody")),
    }
    _check_argument_names(resource["arguments"])
    return {**resource, **_return_type(body), **_metadata(body)}


def _return_type(body: dict) -> dict:
    """returnType for a scalar function, returnTableType for a table function: each is the
    other kind's field only (Routine reference), so the wrong one is a 400, never ignored."""
    scalar_field, table_field = body.get("returnType"), body.get("returnTableType")
    if body["routineType"] == TABLE_FUNCTION:
        if scalar_field is not None:
            raise bad_request("returnType: set only for scalar functions; a table function's "
                              "result is returnTableType")  # fmt: skip
        if table_field is None:
            return {}  # inferred from the query when the routine is made (save)
        table_type_sql(table_field, "returnTableType")
        return {"returnTableType": table_field}
    if table_field is not None:
        raise bad_request("returnTableType: set only for table functions (TABLE_VALUED_FUNCTION)")
    if scalar_field is None:
        return {}
    type_sql(scalar_field, "returnType")
    return {"returnType": scalar_field}


def _check_reference(given: Any, reference: dict) -> None:
    if not isinstance(given, dict):
        raise bad_request("routineReference: required, {projectId, datasetId, routineId}")
    for key in ("projectId", "datasetId", "routineId"):
        if given.get(key) != reference[key]:
            raise bad_request(f"routineReference.{key} must be {reference[key]!r}, the URL's")


def check_routine_id(routine_id: str) -> None:
    if not isinstance(routine_id, str) or not ROUTINE_ID.fullmatch(routine_id):
        raise bad_request(
            f"routineReference.routineId {routine_id!r}: letters, digits and underscores only, "
            "at most 256"
        )
    if routine_id.upper() in GOOGLESQL_FUNCTIONS or _parsed_as_builtin(routine_id):
        raise refused(
            f"The local BigQuery cannot call a routine named like the GoogleSQL function "
            f"{routine_id.upper()}: its queries would call the built-in instead"
        )


def _parsed_as_builtin(routine_id: str) -> bool:
    try:
        call = sqlglot.parse_one(f"SELECT ds.{routine_id}(1)", read="bigquery").selects[0]
    except ParseError:
        return True
    return not (isinstance(call, exp.Dot) and isinstance(call.expression, exp.Anonymous))


def _check_kind(body: dict) -> None:
    kind = body.get("routineType")
    if kind not in ROUTINE_TYPES:
        raise bad_request(f"routineType must be one of {', '.join(ROUTINE_TYPES)}; got {kind!r}")
    if kind in REFUSED_TYPES:
        raise refused(REFUSED_TYPES[kind])
    language = body.get("language", "SQL")
    if language not in LANGUAGES:
        raise bad_request(f"language must be one of {', '.join(LANGUAGES)}; got {language!r}")
    if language in REFUSED_LANGUAGES:
        raise refused(f"{language} functions are not run by the local BigQuery (SQL only)")


def _list(body: dict, key: str) -> list:
    value = body.get(key) or []
    if not isinstance(value, list):
        raise bad_request(f"{key} must be a list")
    return value


def _argument(index: int, argument: Any) -> dict:
    where = f"arguments[{index}]"
    if not isinstance(argument, dict):
        raise bad_request(f"{where} must be an object with name and dataType")
    unknown = sorted(set(argument) - set(ARGUMENT_FIELDS) - {"mode", "isAggregate"})
    if unknown:
        raise bad_request(f"{where}.{unknown[0]}: unknown field; allowed: "
                          f"{', '.join(ARGUMENT_FIELDS)}")  # fmt: skip
    _check_argument_kind(where, argument)
    name = argument.get("name")
    if not isinstance(name, str) or not ARGUMENT_NAME.fullmatch(name):
        raise bad_request(f"{where}.name must be a name of letters, digits and underscores")
    type_sql(argument.get("dataType"), f"{where}.dataType")
    return {key: argument[key] for key in ARGUMENT_FIELDS if key in argument}


def _check_argument_kind(where: str, argument: dict) -> None:
    kind = argument.get("argumentKind", "FIXED_TYPE")
    if kind in ("ANY_TYPE", "FIXED_TABLE", "ANY_TABLE"):
        raise refused(f"{where}.argumentKind {kind}: templated and table arguments are not "
                      "supported by the local BigQuery")  # fmt: skip
    if kind not in ("FIXED_TYPE", "ARGUMENT_KIND_UNSPECIFIED"):
        raise bad_request(f"{where}.argumentKind must be FIXED_TYPE, ANY_TYPE, FIXED_TABLE or "
                          f"ANY_TABLE; got {kind!r}")  # fmt: skip
    if argument.get("mode") not in (None, "MODE_UNSPECIFIED"):
        raise bad_request(f"{where}.mode: IN/OUT/INOUT apply to procedure arguments only")
    if argument.get("isAggregate"):
        raise refused(REFUSED_TYPES["AGGREGATE_FUNCTION"])


def _check_argument_names(arguments: list[dict]) -> None:
    seen: set[str] = set()
    for argument in arguments:
        if argument["name"].lower() in seen:
            raise bad_request(f"Duplicate argument name {argument['name']}")
        seen.add(argument["name"].lower())


def _definition_body(body: Any) -> str:
    if not isinstance(body, str) or not body.strip():
        raise bad_request("definitionBody: required, the function's SQL expression or query")
    return body


def _metadata(body: dict) -> dict:
    out = {}
    if body.get("description") is not None:
        if not isinstance(body["description"], str):
            raise bad_request("description must be a string")
        out["description"] = body["description"]
    level = body.get("determinismLevel")
    if level is not None:
        if level not in DETERMINISM_LEVELS:
            raise bad_request(f"determinismLevel must be one of {', '.join(DETERMINISM_LEVELS)}")
        out["determinismLevel"] = level
    return out


def answer(stored: dict, mask: set[str] | None = None) -> dict:
    """The Routine as Google answers it: no private keys; `mask` limits the fields (the
    reference is always given, as readMask says)."""
    public = {k: v for k, v in stored.items() if not k.startswith("_")}
    if not public.get("arguments"):
        public.pop("arguments", None)  # Google leaves an empty list out
    if mask is None:
        return public
    return {k: v for k, v in public.items() if k in mask or k == "routineReference"}


def read_mask(raw: str | None) -> set[str] | None:
    if not raw:
        return None
    fields = {_camel(part.strip()) for part in raw.split(",") if part.strip()}
    unknown = sorted(fields - set(ACCEPTED))
    if unknown:
        raise bad_request(f"readMask: {unknown[0]!r} is not a Routine field")
    return fields


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _etag(stored: dict) -> str:
    text = json.dumps(answer({k: v for k, v in stored.items() if k != "etag"}), sort_keys=True)
    return base64.b64encode(hashlib.sha256(text.encode()).digest()[:12]).decode()


# -- the catalog ------------------------------------------------------------------------------
def routine_name(reference: dict) -> TableName:
    return TableName(reference["projectId"], reference["datasetId"], reference["routineId"])


def load(cur: duckdb.DuckDBPyConnection, name: TableName) -> dict | None:
    row = cur.execute(
        f"SELECT body FROM {META_SCHEMA}.routines WHERE project = ? AND dataset = ? "
        "AND routine = ?",
        [name.project, name.dataset, name.table],
    ).fetchone()
    return json.loads(row[0]) if row else None


def load_all(cur: duckdb.DuckDBPyConnection, project: str, dataset: str) -> list[dict]:
    rows = cur.execute(
        f"SELECT body FROM {META_SCHEMA}.routines WHERE project = ? AND dataset = ? "
        "ORDER BY routine",
        [project, dataset],
    ).fetchall()
    return [json.loads(row[0]) for row in rows]


def _write(cur: duckdb.DuckDBPyConnection, name: TableName, body: dict) -> None:
    _delete_row(cur, name)
    cur.execute(
        f"INSERT INTO {META_SCHEMA}.routines VALUES (?, ?, ?, ?)",
        [name.project, name.dataset, name.table, json.dumps(body)],
    )


def _delete_row(cur: duckdb.DuckDBPyConnection, name: TableName) -> None:
    cur.execute(
        f"DELETE FROM {META_SCHEMA}.routines WHERE project = ? AND dataset = ? AND routine = ?",
        [name.project, name.dataset, name.table],
    )


def require(cur: duckdb.DuckDBPyConnection, name: TableName) -> None:
    """A query's call of a routine that does not exist: BigQuery's "Function not found"."""
    stored = load(cur, name)
    if stored is None:
        raise QueryError(f"Function not found: {name.dataset}.{name.table}")
    if stored["routineType"] == TABLE_FUNCTION:
        raise QueryError(f"Table-valued function {name.dataset}.{name.table} cannot be called "
                         "in an expression; call it in a FROM clause")  # fmt: skip


@dataclass(frozen=True)
class Parameters:
    """A job's query parameters: the values DuckDB binds, and each one's GoogleSQL type by
    `@name` (lower case) or `?n` (its position), as TableCall.kinds name them."""

    values: Any = None
    types: dict[str, str] = field(default_factory=dict)


def require_all(
    cur: duckdb.DuckDBPyConnection, translation: Translation, parameters: Parameters | None = None
) -> None:
    """Every routine a statement calls exists as the kind it is called as, and each table
    function call matches its signature. No `parameters`: a routine's body, whose calls'
    arguments may be its own parameters, typed only where it is called."""
    for name in translation.routines:
        require(cur, name)
    for call in translation.table_calls:
        require_table_call(cur, call, parameters)


# What an argument's type coerces to, by where the value comes from (conversion rules page,
# https://cloud.google.com/bigquery/docs/reference/standard-sql/conversion_rules: the
# "Coerce to" column for any expression, then "Literal coercion" and "Parameter coercion").
EXPRESSION_COERCIONS = {
    "INT64": ("NUMERIC", "BIGNUMERIC", "FLOAT64"),
    "NUMERIC": ("BIGNUMERIC", "FLOAT64"),
    "BIGNUMERIC": ("FLOAT64",),
    "DATE": ("DATETIME",),
}
DATE_AND_TIME = ("DATE", "DATETIME", "TIME", "TIMESTAMP")
LITERAL_COERCIONS = {"STRING": DATE_AND_TIME}
PARAMETER_COERCIONS = {"STRING": DATE_AND_TIME}


def _coerces(kind: str, declared: str, extra: dict[str, tuple[str, ...]]) -> bool:
    return (
        kind in ("NULL", declared)
        or declared in EXPRESSION_COERCIONS.get(kind, ())
        or declared in extra.get(kind, ())
    )


def require_table_call(
    cur: duckdb.DuckDBPyConnection, call: TableCall, parameters: Parameters | None
) -> None:
    """`FROM ds.tvf(args)`: the table function exists and takes these arguments; a wrong count
    or an argument of a type that does not coerce to its parameter's is BigQuery's "No matching
    signature". Literals and query parameters are typed as written; another expression by
    DuckDB (LIMIT 0: no row read)."""
    name = call.name
    stored = load(cur, name)
    if stored is None or stored["routineType"] != TABLE_FUNCTION:
        raise QueryError(f"Table-valued function not found: {name.dataset}.{name.table}")
    declared = [type_sql(a["dataType"], "dataType") for a in stored.get("arguments") or []]
    typed = [_argument_type(cur, call, i, parameters) for i in range(len(call.kinds))]
    fits = len(declared) == len(typed) and all(
        kind is None or _coerces(kind, want, extra)
        for (kind, extra), want in zip(typed, declared, strict=True)
    )
    if not fits:
        given = ", ".join(kind or "?" for kind, _ in typed) or "no arguments"
        raise QueryError(
            f"No matching signature for table-valued function {name.dataset}.{name.table} for "
            f"argument types: {given}. Supported signature: {name.dataset}.{name.table}"
            f"({', '.join(declared)})"
        )


def _argument_type(
    cur: duckdb.DuckDBPyConnection, call: TableCall, index: int, parameters: Parameters | None
) -> tuple[str | None, dict[str, tuple[str, ...]]]:
    """The index-th argument's GoogleSQL type (None: not known in a routine's body), and the
    coercions its source adds."""
    kind = call.kinds[index]
    if kind is not None and not kind.startswith(("@", "?")):
        return kind, LITERAL_COERCIONS
    if parameters is None or index >= len(call.arguments):
        return None, {}
    if kind is not None:
        key = kind.lower() if kind.startswith("@") else kind
        if key not in parameters.types:
            raise QueryError(f"Query parameter '{kind.lstrip('@?')}' not found")
        return parameters.types[key], PARAMETER_COERCIONS
    return _expression_type(cur, call.arguments[index], parameters), {}


def _expression_type(cur: duckdb.DuckDBPyConnection, sql: str, parameters: Parameters) -> str:
    if "?" in re.sub(r"'(?:[^']|'')*'", "", sql):
        raise not_supported("a table function argument computed from a positional parameter")
    named = set(re.findall(r"\$(\w+)", sql))
    values = {k: v for k, v in (parameters.values or {}).items() if k in named} or None
    kind = cur.execute(f"SELECT {sql} AS argument LIMIT 0", values).description[0][1]
    return type_sql(field_data_type(duckdb_to_field("argument", kind)), "argument")


def routine_not_found(name: TableName) -> NotFound:
    return NotFound(f"Not found: Routine {name.bigquery_id}")


def save(
    warehouse: Warehouse,
    cur: duckdb.DuckDBPyConnection,
    resource: dict,
    existing: dict | None,
    keep_created: bool,
) -> dict:
    """Creates or replaces the macro and its catalog entry, in the caller's transaction."""
    name = routine_name(resource["routineReference"])
    check_routine_id(name.table)
    if not warehouse.dataset_exists(cur, name.project, name.dataset):
        raise NotFound(f"Not found: Dataset {name.project}:{name.dataset}")
    _refuse_case_clash(cur, name)
    if resource["routineType"] == TABLE_FUNCTION:
        resource = _make_table_macro(warehouse, cur, resource, name)
    else:
        _execute_body(cur, _macro_sql(warehouse, cur, resource, name))
        _bind(cur, resource, name)
    now = str(int(warehouse.clock() * 1000))
    created = existing["creationTime"] if existing and keep_created else now
    stored = {**resource, "creationTime": created, "lastModifiedTime": now}
    if existing and POLICY_KEY in existing:
        stored[POLICY_KEY] = existing[POLICY_KEY]
    stored["etag"] = _etag(stored)
    _write(cur, name, stored)
    return stored


def _refuse_case_clash(cur: duckdb.DuckDBPyConnection, name: TableName) -> None:
    """DuckDB matches macro names case-insensitively: `Fn` would replace `fn`'s macro."""
    row = cur.execute(
        f"SELECT routine FROM {META_SCHEMA}.routines WHERE project = ? AND dataset = ? "
        "AND lower(routine) = lower(?) AND routine <> ?",
        [name.project, name.dataset, name.table, name.table],
    ).fetchone()
    if row:
        raise refused(
            f"The local BigQuery cannot keep routines {row[0]} and {name.table} in one dataset: "
            "it tells routine names apart without regard to case"
        )


def insert(warehouse: Warehouse, cur: duckdb.DuckDBPyConnection, resource: dict) -> dict:
    name = routine_name(resource["routineReference"])
    if load(cur, name) is not None:
        raise Duplicate(f"Already Exists: Routine {name.bigquery_id}")
    return save(warehouse, cur, resource, None, keep_created=False)


def drop(cur: duckdb.DuckDBPyConnection, name: TableName) -> None:
    if load(cur, name) is None:
        raise routine_not_found(name)
    cur.execute(f"DROP MACRO IF EXISTS {name.sql}")
    _delete_row(cur, name)


def put_policy(cur: duckdb.DuckDBPyConnection, name: TableName, policy: dict) -> None:
    stored = load(cur, name)
    if stored is None:
        raise routine_not_found(name)
    _write(cur, name, {**stored, POLICY_KEY: policy})


# -- the macro --------------------------------------------------------------------------------
def _macro_sql(
    warehouse: Warehouse, cur: duckdb.DuckDBPyConnection, resource: dict, name: TableName
) -> str:
    """`CREATE OR REPLACE MACRO "p.ds"."fn"(x) AS (...)`: the body in DuckDB's SQL, each
    argument cast to its declared type, the result to returnType."""
    body = _parse_body(resource["definitionBody"])
    for argument in resource["arguments"]:
        _cast_argument(body, argument["name"], type_sql(argument["dataType"], "dataType"))
    text = body.sql(dialect="bigquery")
    if "returnType" in resource:
        text = f"CAST(({text}) AS {type_sql(resource['returnType'], 'returnType')})"
    translation = translate(f"SELECT {text} AS v", name.project)
    for table in translation.read_tables:
        warehouse.require_table(cur, table)
    require_all(cur, translation)
    expression = sqlglot.parse_one(translation.sql, read="duckdb").selects[0].unalias()
    parameters = ", ".join(quote(a["name"]) for a in resource["arguments"])
    return f"CREATE OR REPLACE MACRO {name.sql}({parameters}) AS ({expression.sql('duckdb')})"


def _parse_body(text: str) -> exp.Expression:
    try:
        statements = sqlglot.parse(f"SELECT ({text})", read="bigquery")
    except ParseError as error:
        raise QueryError(f"Syntax error in definitionBody: {str(error).splitlines()[0]}") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Select):
        raise QueryError("definitionBody must be one SQL expression")
    return statements[0].selects[0]


def _cast_argument(body: exp.Expression, name: str, kind: str) -> None:
    for column in list(body.find_all(exp.Column)):
        if not column.table and column.name.lower() == name.lower():
            column.replace(exp.cast(exp.column(name), exp.DataType.build(kind, dialect="bigquery")))


def _bind(cur: duckdb.DuckDBPyConnection, resource: dict, name: TableName) -> None:
    """Plans a call with typed NULLs: a body that names no such column, function or type is
    refused now, as BigQuery refuses it at creation."""
    nulls = ", ".join(
        f"CAST(NULL AS {type_sql(a['dataType'], 'dataType')})" for a in resource["arguments"]
    )
    call = translate(f"SELECT `{name.project}.{name.dataset}.{name.table}`({nulls})", name.project)
    _execute_body(cur, f"SELECT * FROM ({call.sql}) AS bind LIMIT 0")


def _execute_body(cur: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Runs SQL built from a routine's body: DuckDB's complaint about the body is the 400
    BigQuery answers for an invalid one."""
    try:
        cur.execute(sql).fetchall()
    except duckdb.Error as error:
        from vertexkit.local.bigquery.jobs import _duckdb_message

        raise QueryError(f"Invalid function body: {_duckdb_message(error)}") from None


# -- the table macro --------------------------------------------------------------------------
def _make_table_macro(
    warehouse: Warehouse, cur: duckdb.DuckDBPyConnection, resource: dict, name: TableName
) -> dict:
    """`CREATE OR REPLACE MACRO "p.ds"."tvf"(x) AS TABLE SELECT ...`: the query in DuckDB's SQL,
    each parameter cast to its declared type. Bound with typed NULLs, its result schema is
    returnTableType when RETURNS TABLE is omitted (BigQuery infers it from the query); when it
    is given, the query's columns must be those named and are cast to the declared types."""
    query = _query_body(resource["definitionBody"], resource["arguments"])
    _execute_body(cur, _table_macro_sql(warehouse, cur, query, resource, name))
    fields = _bind_table(cur, resource, name)
    declared = resource.get("returnTableType")
    if declared is None:
        columns = [{"name": f["name"], "type": field_data_type(f)} for f in fields]
        return {**resource, "returnTableType": {"columns": columns}}
    wanted = table_type_sql(declared, "returnTableType")
    _check_result_columns(name, [f["name"] for f in fields], [column for column, _ in wanted])
    casts = ", ".join(f"CAST(`{column}` AS {kind}) AS `{column}`" for column, kind in wanted)
    query = f"SELECT {casts} FROM ({query}) AS tvf_result"
    _execute_body(cur, _table_macro_sql(warehouse, cur, query, resource, name))
    return resource


def _query_body(text: str, arguments: list[dict]) -> str:
    """The body (`SELECT ...` or `(SELECT ...)`) as GoogleSQL, each unqualified reference to a
    parameter cast to its type. A table column of the same name still wins, as in BigQuery:
    DuckDB binds a macro parameter only where no column of that name is in scope."""
    try:
        statements = sqlglot.parse(text, read="bigquery")
    except ParseError as error:
        raise QueryError(f"Syntax error in definitionBody: {str(error).splitlines()[0]}") from None
    query = statements[0] if len(statements) == 1 else None
    if isinstance(query, exp.Subquery):
        query = query.this
    if not isinstance(query, exp.Query):
        raise QueryError("A table function's definitionBody must be one query (SELECT ...)")
    for argument in arguments:
        _cast_argument(query, argument["name"], type_sql(argument["dataType"], "dataType"))
    return query.sql(dialect="bigquery")


def _table_macro_sql(
    warehouse: Warehouse,
    cur: duckdb.DuckDBPyConnection,
    query: str,
    resource: dict,
    name: TableName,
) -> str:
    translation = translate(query, name.project)
    if translation.statement_type != "SELECT":
        raise QueryError("A table function's definitionBody must be one query (SELECT ...)")
    for table in translation.read_tables:
        warehouse.require_table(cur, table)
    require_all(cur, translation)
    parameters = ", ".join(quote(a["name"]) for a in resource["arguments"])
    return f"CREATE OR REPLACE MACRO {name.sql}({parameters}) AS TABLE {translation.sql}"


def _bind_table(cur: duckdb.DuckDBPyConnection, resource: dict, name: TableName) -> list[dict]:
    """The macro's result schema, planned with typed NULLs (no rows read)."""
    nulls = ", ".join(
        f"CAST(NULL AS {type_sql(a['dataType'], 'dataType')})" for a in resource["arguments"]
    )
    call = translate(f"SELECT * FROM `{name.project}.{name.dataset}.{name.table}`({nulls})",
                     name.project)  # fmt: skip
    try:
        relation = cur.sql(f"SELECT * FROM ({call.sql}) AS bind LIMIT 0")
        columns = zip(relation.columns, relation.types, strict=True)
        return [duckdb_to_field(column, kind) for column, kind in columns]
    except duckdb.Error as error:
        from vertexkit.local.bigquery.jobs import _duckdb_message

        raise QueryError(f"Invalid function body: {_duckdb_message(error)}") from None


def _check_result_columns(name: TableName, got: list[str], wanted: list[str]) -> None:
    """RETURNS TABLE names the query's columns (DDL reference): any other set is refused."""
    if sorted(c.lower() for c in got) != sorted(c.lower() for c in wanted):
        raise QueryError(
            f"Table function {name.dataset}.{name.table}: its query returns columns "
            f"{', '.join(got)} but RETURNS TABLE declares {', '.join(wanted)}"
        )
