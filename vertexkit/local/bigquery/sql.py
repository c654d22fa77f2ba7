"""GoogleSQL -> DuckDB: parse with sqlglot's BigQuery dialect, map table names onto the local
catalog, fix the types sqlglot leaves vague, and refuse what cannot be translated faithfully.

Catalog: one DuckDB database file for the whole local BigQuery; each dataset `project.dataset`
is a DuckDB schema literally named "project.dataset". Project ids contain hyphens and dataset ids
cannot contain dots, so the name is unambiguous, and one file keeps every cross-project join, DML
and transaction inside one DuckDB instance (ATTACHing a file per project would need file access,
which user SQL must not have).
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import sqlglot
from sqlglot import ErrorLevel, exp
from sqlglot.errors import ParseError, UnsupportedError

from vertexkit.local.bigquery import googlesql, partitioning
from vertexkit.local.bigquery.functions import (
    GOOGLESQL_FUNCTIONS,
    NOT_SUPPORTED,
    REQUIRED_ARGUMENTS,
)
from vertexkit.local.bigquery.information_schema import InformationSchemaRef, reference
from vertexkit.local.bigquery.query_error import QueryError, not_supported
from vertexkit.local.bigquery.table_name import TableName

NUMERIC_TYPE = "DECIMAL(38, 9)"
# DuckDB decimals stop at 38 digits; BIGNUMERIC keeps 18 of them for the fraction locally.
BIGNUMERIC_TYPE = "DECIMAL(38, 18)"


# BigQuery ML / AI / federated calls: no local equivalent, refused by name.
BIGQUERY_ONLY_CALL = re.compile(
    r"\b(?:(?:ML|AI|KEYS|AEAD|KLL_QUANTILES|DLP)\.[A-Z_0-9]+|VECTOR_SEARCH|"
    r"EXTERNAL_QUERY)\s*\(",
    re.IGNORECASE,
)
CREATE_MODEL_REFUSED = "BigQuery ML (CREATE MODEL) is not run by the local cloud"
DATE_RESULT_FUNCTIONS = (exp.DateTrunc, exp.DateAdd, exp.DateSub)
# A call as sqlglot writes it back in GoogleSQL: `NAME(`; CASE, [..] and the like are syntax.
CALL_HEAD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*\(")


@dataclass(frozen=True)
class TableCall:
    """`FROM ds.tvf(args)`: the table function called and, for the signature check against the
    catalog, each argument's kind: its GoogleSQL type for a literal, `@name` / `?n` for a query
    parameter (its declared type is the job's), None for another expression, which is typed by
    DuckDB from `arguments` (each argument in DuckDB's SQL)."""

    name: TableName
    kinds: tuple[str | None, ...]
    arguments: tuple[str, ...] = ()


@dataclass
class Translation:
    sql: str
    statement_type: str
    read_tables: list[TableName] = field(default_factory=list)
    target: TableName | None = None  # the table a DDL/DML statement creates or changes
    create_kind: str | None = None  # TABLE / VIEW for CREATE statements
    replace: bool = False
    if_not_exists: bool = False
    if_exists: bool = False
    # the column names the query mentions (None: `*`, all), for dryRun's byte estimate
    columns_read: set[str] | None = None
    # INFORMATION_SCHEMA views the job registers before running the query
    information_schema: list[InformationSchemaRef] = field(default_factory=list)
    # persistent functions (routines) the statement calls: (project, dataset, routine id)
    routines: list[TableName] = field(default_factory=list)
    # table functions the statement calls in FROM
    table_calls: list[TableCall] = field(default_factory=list)
    # CREATE TABLE's PARTITION BY / CLUSTER BY / require_partition_filter, as REST fields
    table_options: dict = field(default_factory=dict)


@dataclass
class ScriptScope:
    """What a script's earlier statements made that its later ones may name: temporary tables
    (lower-case name -> lower-case column names), temporary SQL functions, and variables
    (lower-case name -> the GoogleSQL literal of the value)."""

    temp_tables: dict[str, set[str]] = field(default_factory=dict)
    functions: set[str] = field(default_factory=set)
    variables: dict[str, str] = field(default_factory=dict)


def quote_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


ColumnTypes = Callable[["TableName"], dict[str, str]]


# Translations of statements outside scripts, by (text, project, default dataset): parsing and
# rewriting was 1.2 ms of a `SELECT 1`. Each entry keeps the column types its translation asked
# the catalog for, and is used again only while the catalog still answers the same.
CACHE_SIZE = 512
_cache: collections.OrderedDict[tuple, tuple[Translation, dict]] = collections.OrderedDict()
_cache_lock = threading.Lock()


def translate(
    sql: str,
    project: str,
    default_dataset: tuple[str, str] | None = None,
    column_types: ColumnTypes | None = None,
    scope: ScriptScope | None = None,
) -> Translation:
    """One GoogleSQL statement -> DuckDB SQL, with the tables it reads and writes.
    `column_types` gives a table's {lower-case column name: GoogleSQL type} (the catalog's),
    for rewrites whose result type depends on an argument's (JSON_QUERY of STRING or JSON)."""
    if scope is not None and (scope.temp_tables or scope.functions or scope.variables):
        return _translate(sql, project, default_dataset, column_types, scope)
    key = (sql, project, default_dataset)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
    if hit is not None and all(
        (column_types(name) if column_types else {}) == types for name, types in hit[1].items()
    ):
        return _fresh_copy(hit[0])
    asked: dict[TableName, dict[str, str]] = {}

    def recorded(name: TableName) -> dict[str, str]:
        asked[name] = column_types(name) if column_types else {}
        return asked[name]

    translation = _translate(sql, project, default_dataset, recorded, scope)
    with _cache_lock:
        _cache[key] = (_fresh_copy(translation), asked)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return translation


def _fresh_copy(translation: Translation) -> Translation:
    """A copy whose containers the caller may change (a deepcopy was 0.15 ms)."""
    return dataclasses.replace(
        translation,
        read_tables=list(translation.read_tables),
        columns_read=None if translation.columns_read is None else set(translation.columns_read),
        information_schema=list(translation.information_schema),
        routines=list(translation.routines),
        table_calls=list(translation.table_calls),
        table_options=copy.deepcopy(translation.table_options) if translation.table_options else {},
    )


def _translate(
    sql: str,
    project: str,
    default_dataset: tuple[str, str] | None,
    column_types: ColumnTypes | None,
    scope: ScriptScope | None,
) -> Translation:
    try:
        statements = [s for s in sqlglot.parse(sql, read="bigquery") if s is not None]
    except ParseError as error:
        raise QueryError(f"Syntax error: {_first_line(error)}") from error
    if not statements:
        raise QueryError("Syntax error: the query is empty")
    if len(statements) > 1:
        raise not_supported("multi-statement scripts")
    statement = statements[0]
    scope = scope or ScriptScope()
    _refuse_unsupported(statement)
    translation = Translation(sql="", statement_type=_statement_type(statement))
    _name_namespaced_calls(statement)
    _implicit_unnests_from_unnest(statement)
    _call_table_functions(statement, project, translation)
    _call_routines(statement, project, translation)
    _refuse_unknown_functions(statement, scope.functions)
    # CTE names are case-insensitive in GoogleSQL (DuckDB matches unquoted names the same way)
    cte_names = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
    target_node = _target_node(statement)
    tables_by_alias: dict[str, TableName] = {}
    for table in list(statement.find_all(exp.Table)):
        if not table.name or (not table.db and table.name.lower() in cte_names):
            continue
        if table.meta.get(TABLE_FUNCTION_CALL):
            continue  # a table function's macro: the job checks the call (table_calls)
        if table.name.upper().startswith("INFORMATION_SCHEMA."):
            translation.information_schema.append(_information_schema(table, project, translation))
            continue
        if not table.db and table.name.lower() in scope.temp_tables:
            _to_temp_table(table)  # neither read_tables nor target: no catalog entry
            continue
        name = _resolve(table, project, default_dataset)
        tables_by_alias[(table.alias or table.name).lower()] = name
        table.set("catalog", None)
        table.set("db", exp.to_identifier(name.schema, quoted=True))
        table.set("this", exp.to_identifier(name.table, quoted=True))
        if table is target_node:
            translation.target = name
        elif name not in translation.read_tables:
            translation.read_tables.append(name)
    if scope.variables:
        _substitute_variables(statement, scope, translation.read_tables, column_types)
    if translation.information_schema:
        _refuse_star_over_information_schema(statement)
    translation.columns_read = _columns_read(statement)
    _fix_types(statement)
    resolver = None
    if column_types is not None:
        resolver = _column_resolver(statement, tables_by_alias, cte_names, column_types)
    if isinstance(statement, exp.Create) and str(statement.args.get("kind")).upper() == "TABLE":
        translation.table_options = partitioning.take_ddl_options(statement)
    googlesql.rewrite(statement, resolver)
    translation.table_calls = _with_arguments(statement, translation.table_calls)
    if isinstance(statement, exp.Create):
        translation.create_kind = str(statement.args.get("kind") or "TABLE").upper()
        translation.replace = bool(statement.args.get("replace"))
        translation.if_not_exists = bool(statement.args.get("exists"))
    if isinstance(statement, exp.Drop):
        translation.if_exists = bool(statement.args.get("exists"))
    try:
        translation.sql = _create_with_column_list(statement) or statement.sql(
            dialect="duckdb", unsupported_level=ErrorLevel.RAISE
        )
    except UnsupportedError as error:
        raise not_supported(_first_line(error)) from error
    except (KeyError, AttributeError, ValueError) as error:  # a call sqlglot cannot write
        raise QueryError(f"No matching signature for a function call: {error!r}") from error
    return translation


def _implicit_unnests_from_unnest(statement: exp.Expression) -> None:
    """`FROM UNNEST(...) AS a LEFT JOIN a.items AS item`: a path that starts with a range
    variable is an implicit UNNEST (query syntax page, its correlated LEFT JOIN example).
    sqlglot's parser turns such paths into UNNEST after tables and subqueries, not after an
    UNNEST's alias, which was then read as the table `a.items`."""
    for select in statement.find_all(exp.Select):
        source = select.args.get("from_")
        joins = select.args.get("joins") or []
        ranges: set[str] = set()  # the UNNEST aliases met so far, left to right
        for item in [source.this if source else None, *(join.this for join in joins)]:
            if isinstance(item, exp.Unnest) and item.args.get("alias"):
                ranges.update(column.name.lower() for column in item.args["alias"].columns)
            elif isinstance(item, exp.Table) and _path_from(item, ranges):
                item.replace(_unnest_of_path(item))


def _path_from(table: exp.Table, ranges: set[str]) -> bool:
    join = table.parent
    return (
        isinstance(join, exp.Join)
        and not join.args.get("on")
        and len(table.parts) > 1
        and table.parts[0].name.lower() in ranges
    )


def _unnest_of_path(table: exp.Table) -> exp.Unnest:
    path = exp.column(*reversed([part.name for part in table.parts]))
    unnest = exp.Unnest(expressions=[path])
    alias = table.args.get("alias")
    if alias is not None:
        unnest.set("alias", exp.TableAlias(columns=[alias.this.copy()]))
    return unnest


def _create_with_column_list(statement: exp.Expression) -> str | None:
    """CREATE TABLE t (columns) AS query: the table has the list's names, types and modes, and
    the query's rows by position (the query's own names are ignored). DuckDB has no such form:
    the table is created from the list and the rows inserted, so a NULL in a NOT NULL column
    and a wrong number of columns fail as in BigQuery."""
    if not isinstance(statement, exp.Create) or statement.expression is None:
        return None
    schema = statement.this
    if not isinstance(schema, exp.Schema) or not schema.expressions:
        return None
    query = statement.expression
    if isinstance(query, exp.Subquery):
        query = query.this
    create = statement.copy()
    create.set("expression", None)
    table = schema.this.sql(dialect="duckdb")
    return (
        f"{create.sql(dialect='duckdb', unsupported_level=ErrorLevel.RAISE)}; "
        f"INSERT INTO {table} SELECT * FROM ("
        f"{query.sql(dialect='duckdb', unsupported_level=ErrorLevel.RAISE)})"
    )


NAMESPACES = ("NET", "HLL_COUNT")  # GoogleSQL's own `NAMESPACE.FUNCTION(...)` calls


def _name_namespaced_calls(statement: exp.Expression) -> None:
    """`NET.HOST(x)` and `HLL_COUNT.INIT(x)` become one call named "NET.HOST" / "HLL_COUNT.INIT"
    before persistent-function calls are resolved: `dataset.fn(...)` has the same shape, and a
    dataset may not shadow GoogleSQL's namespaces."""
    for node in list(statement.find_all(exp.NetFunc, exp.Dot)):
        if isinstance(node, exp.NetFunc):
            namespace, inner = "NET", node.this
        else:
            path = _identifier_path(node.this)
            namespace, inner = (path[0].upper() if len(path) == 1 else ""), node.expression
        if namespace not in NAMESPACES or not isinstance(inner, exp.Func):
            continue
        if isinstance(inner, exp.Anonymous):
            function, arguments = inner.name, inner.expressions
        else:  # a call sqlglot knows (NET.HOST -> Host): its name as written, args in order
            function, arguments = _function_name(inner) or "", list(inner.iter_expressions())
        node.replace(exp.Anonymous(this=f"{namespace}.{function.upper()}", expressions=arguments))


def _call_routines(statement: exp.Expression, project: str, translation: Translation) -> None:
    """`dataset.fn(...)`, `project.dataset.fn(...)`, `` `project.dataset.fn`(...) ``: a call of a
    persistent function becomes a call of its DuckDB macro in the dataset's schema."""
    for node in list(statement.find_all(exp.Anonymous)):
        name = _routine_name(node, project)
        if name is None:
            continue
        call = exp.Anonymous(
            this=exp.to_identifier(name.table, quoted=True), expressions=node.expressions
        )
        qualified = exp.Dot(this=exp.to_identifier(name.schema, quoted=True), expression=call)
        (node.parent if _is_qualified_call(node) else node).replace(qualified)
        if name not in translation.routines:
            translation.routines.append(name)


TABLE_FUNCTION_CALL = "vertexkit_table_function"  # meta key on a FROM item that calls one


def _call_table_functions(
    statement: exp.Expression, project: str, translation: Translation
) -> None:
    """`FROM ds.tvf(1)`, `FROM project.ds.tvf(1)`, `` FROM `project.ds.tvf`(1) ``: a table
    function's call becomes a call of its DuckDB table macro in the dataset's schema."""
    placeholders = list(statement.find_all(exp.Placeholder))  # `?`: counted in text order
    for table in list(statement.find_all(exp.Table)):
        call = table.this
        if not isinstance(call, exp.Anonymous):
            continue
        parts = [part for part in (table.catalog, table.db) if part] + call.name.split(".")
        if len(parts) not in (2, 3) or not all(parts):
            continue  # unqualified: the allow-list answers for the name
        name = TableName(*parts) if len(parts) == 3 else TableName(project, *parts)
        kinds = tuple(_argument_kind(argument, placeholders) for argument in call.expressions)
        table.set("catalog", None)
        table.set("db", exp.to_identifier(name.schema, quoted=True))
        table.set("this", exp.Anonymous(this=exp.to_identifier(name.table, quoted=True),
                                        expressions=call.expressions))  # fmt: skip
        table.meta[TABLE_FUNCTION_CALL] = True
        translation.table_calls.append(TableCall(name, kinds))


def _with_arguments(statement: exp.Expression, calls: list[TableCall]) -> list[TableCall]:
    """The calls with their arguments as rewritten, in DuckDB's SQL (found in the same order)."""
    tables = [t for t in statement.find_all(exp.Table) if t.meta.get(TABLE_FUNCTION_CALL)]
    if len(tables) != len(calls):
        return calls
    return [
        dataclasses.replace(
            call, arguments=tuple(a.sql(dialect="duckdb") for a in table.this.expressions)
        )
        for call, table in zip(calls, tables, strict=True)
    ]


def _argument_kind(node: exp.Expression, placeholders: list[exp.Placeholder]) -> str | None:
    """A literal's GoogleSQL type, `@name` / `?n` for a query parameter, None otherwise."""
    if isinstance(node, exp.Parameter):
        return f"@{node.name}"
    if isinstance(node, exp.Placeholder):
        return f"?{next(i for i, p in enumerate(placeholders) if p is node)}"
    return _literal_kind(node)


def _literal_kind(node: exp.Expression) -> str | None:
    """The GoogleSQL type of a literal argument; None for any other expression."""
    if isinstance(node, exp.Neg):
        node = node.this
    if isinstance(node, exp.Null):
        return "NULL"
    if isinstance(node, exp.Boolean):
        return "BOOL"
    if isinstance(node, exp.Literal):
        if node.is_string:
            return "STRING"
        return "INT64" if node.this.isdigit() else "FLOAT64"
    return None


def _is_qualified_call(node: exp.Anonymous) -> bool:
    return isinstance(node.parent, exp.Dot) and node.arg_key == "expression"


def _routine_name(node: exp.Anonymous, project: str) -> TableName | None:
    if _is_qualified_call(node):
        parts = [*_identifier_path(node.parent.this), node.name]
    elif isinstance(node.this, exp.Identifier) and "." in node.this.name:
        parts = node.this.name.split(".")  # one backquoted path: `project.dataset.fn`
    else:
        return None
    if len(parts) == 2:
        return TableName(project, parts[0], parts[1])
    return TableName(*parts) if len(parts) == 3 and all(parts) else None


def _identifier_path(node: exp.Expression) -> list[str]:
    """`a.b` before a call: its parts, or [] when it is not a path of names."""
    if isinstance(node, exp.Identifier):
        return node.name.split(".")
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
        head = _identifier_path(node.this)
        return [*head, node.expression.name] if head else []
    return []


def _to_temp_table(table: exp.Table) -> None:
    """A script's temporary table lives in DuckDB's connection-local `temp` catalog."""
    table.set("catalog", exp.to_identifier("temp"))
    table.set("db", exp.to_identifier("main"))
    table.set("this", exp.to_identifier(table.name.lower(), quoted=True))


def _substitute_variables(
    statement: exp.Expression,
    scope: ScriptScope,
    read_tables: list[TableName],
    column_types: ColumnTypes | None,
) -> None:
    """An unqualified name that is a script variable becomes the variable's value. Where a
    table the statement reads has a column of that name, which one BigQuery means is refused
    rather than guessed."""
    named = [
        column
        for column in statement.find_all(exp.Column)
        if not column.table and column.name.lower() in scope.variables
    ]
    if not named:
        return
    columns = set().union(*scope.temp_tables.values()) if scope.temp_tables else set()
    for name in read_tables:
        columns |= set((column_types or (lambda _: {}))(name))
    for column in named:
        variable = column.name.lower()
        if variable in columns:
            raise not_supported(f"a script variable named like a column ({column.name})")
        literal = sqlglot.parse_one(scope.variables[variable], read="bigquery")
        column.replace(literal)


def _information_schema(
    table: exp.Table, project: str, translation: Translation
) -> InformationSchemaRef:
    """`[project.]dataset.INFORMATION_SCHEMA.VIEW` -> a name the job registers the rows under."""
    qualifier = [part.name for part in table.parts[:-1]]
    view = table.name.split(".", 1)[1]
    ref = reference(len(translation.information_schema), view, qualifier, project)
    table.set("catalog", None)
    table.set("db", None)
    table.set("this", exp.to_identifier(ref.alias, quoted=True))
    return ref


# FROM items whose columns the catalog does not describe: an unqualified name may be theirs.
DERIVED_SOURCES = (exp.Subquery, exp.Unnest, exp.Values, exp.Lateral, exp.CTE)


def _column_resolver(
    statement: exp.Expression,
    tables: dict[str, TableName],
    cte_names: set[str],
    column_types: ColumnTypes,
) -> Callable[[exp.Column], str | None]:
    """A column reference -> its table column's type, only where that is certain: `t.c` of a
    table alias `t`, or an unqualified `c` of exactly one table in a statement that reads no
    subquery, CTE or UNNEST (whose columns could shadow it)."""
    cache: dict[TableName, dict[str, str]] = {}

    def types(name: TableName) -> dict[str, str]:
        if name not in cache:
            cache[name] = column_types(name)
        return cache[name]

    derived = statement.find(*DERIVED_SOURCES) is not None

    def resolve(column: exp.Column) -> str | None:
        qualifier = column.table.lower()
        if qualifier:
            if qualifier in cte_names or qualifier not in tables:
                return None
            return types(tables[qualifier]).get(column.name.lower())
        if derived:
            return None
        found = [t for t in tables.values() if column.name.lower() in types(t)]
        return types(found[0])[column.name.lower()] if len(found) == 1 else None

    return resolve


def _columns_read(statement: exp.Expression) -> set[str] | None:
    """Names a column reference could be (a qualifier may be a STRUCT column); None for `*`."""
    for select in statement.find_all(exp.Select):
        for projection in select.expressions:
            if isinstance(projection, exp.Star) or (
                isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
            ):
                return None
    names = set()
    for column in statement.find_all(exp.Column):
        names.update(part.name.lower() for part in column.parts)
    return names


def _refuse_star_over_information_schema(statement: exp.Expression) -> None:
    """The views carry a prefix of BigQuery's columns: `SELECT *` would answer fewer."""
    for select in statement.find_all(exp.Select):
        for projection in select.expressions:
            if isinstance(projection, exp.Star) or (
                isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
            ):
                raise not_supported("SELECT * from INFORMATION_SCHEMA (name the columns)")


def _no_matching_signature(node: exp.Func) -> QueryError:
    return QueryError(f"No matching signature for function {node.sql_name()}")


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _refuse_unsupported(statement: exp.Expression) -> None:
    if not isinstance(
        statement,
        (exp.Query, exp.Create, exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Drop),
    ):
        # The statement's first word as written (PRAGMA, SET, COPY, LOAD, INSTALL, ...).
        kind = (statement.sql(dialect="bigquery").split() or ["EMPTY"])[0].upper()
        raise not_supported(f"statement {kind}")
    if isinstance(statement, exp.Create):
        kind = str(statement.args.get("kind") or "").upper()
        if kind == "MODEL":
            raise QueryError(CREATE_MODEL_REFUSED)
        if kind not in ("TABLE", "VIEW"):
            raise not_supported(f"CREATE {kind}")
    if isinstance(statement, exp.Drop):
        kind = str(statement.args.get("kind") or "").upper()
        if kind not in ("TABLE", "VIEW"):
            raise not_supported(f"DROP {kind}")
    for cast in statement.find_all(exp.Cast):
        if cast.to.this == exp.DataType.Type.GEOGRAPHY:  # BigQuery: GEOGRAPHY from GEOGRAPHY only
            raise not_supported("CAST to GEOGRAPHY (use ST_GEOGFROMTEXT)")
    try:
        text = statement.sql(dialect="bigquery")
    except (KeyError, AttributeError, ValueError) as error:  # a call sqlglot cannot write
        raise QueryError(f"No matching signature for a function call: {error!r}") from error
    match = BIGQUERY_ONLY_CALL.search(text)
    if match:
        raise not_supported(match.group(0).rstrip("("))


def _refuse_unknown_functions(statement: exp.Expression, own: set[str]) -> None:
    """Every call must be a GoogleSQL function (functions.py) or one of the script's `own`
    temporary functions, judged on the parsed tree: a DuckDB-only name gets BigQuery's answer
    for a name it does not know."""
    for node in statement.find_all(exp.Func):
        if isinstance(node, exp.Anonymous) and node.name.lower() in own:
            continue
        if isinstance(node.parent, exp.Table) and node.parent.meta.get(TABLE_FUNCTION_CALL):
            continue  # a table function's macro (_call_table_functions)
        if isinstance(node, exp.Anonymous) and _is_qualified_call(node):
            continue  # a routine's macro (_call_routines): the job checks that it exists
        name = _function_name(node)
        if name and (name.upper() in NOT_SUPPORTED or _unserved_geography(name.upper())):
            raise not_supported(name.upper())  # ST_*: the GEOGRAPHY functions geography.py lacks
        if name and name.upper() not in GOOGLESQL_FUNCTIONS:
            raise QueryError(f"Function not found: {name}")
        if name:
            _refuse_missing_arguments(node, name.upper())


def _unserved_geography(name: str) -> bool:
    return name.startswith("ST_") and name not in GOOGLESQL_FUNCTIONS


def _refuse_missing_arguments(node: exp.Func, name: str) -> None:
    """BigQuery's answer for a call short of a required argument, which sqlglot may accept."""
    required, signature = REQUIRED_ARGUMENTS.get(name, ((), ""))
    if any(node.args.get(slot) is None for slot in required):
        raise QueryError(
            f"No matching signature for function {name}. Supported signature: {signature}"
        )


def _function_name(node: exp.Func) -> str | None:
    """The name a call has in GoogleSQL: as written for a function sqlglot does not know,
    else as sqlglot writes its node back in the BigQuery dialect (IFNULL -> COALESCE, ...)."""
    if isinstance(node, exp.Anonymous):
        return node.name
    if isinstance(node, (exp.SafeFunc, exp.WeekStart, exp.Exists)):  # syntax, or SAFE.f(...)
        return None
    try:
        text = node.sql(dialect="bigquery")
    except Exception as error:  # sqlglot cannot write a call with the wrong arguments back
        raise _no_matching_signature(node) from error
    match = CALL_HEAD.match(text)
    return match.group(1) if match else None


def _statement_type(statement: exp.Expression) -> str:
    if isinstance(statement, exp.Query):
        return "SELECT"
    if isinstance(statement, exp.Create):
        kind = str(statement.args.get("kind") or "TABLE").upper()
        if kind == "VIEW":
            return "CREATE_VIEW"
        return "CREATE_TABLE_AS_SELECT" if statement.expression else "CREATE_TABLE"
    if isinstance(statement, exp.Drop):
        return "DROP_VIEW" if str(statement.args.get("kind")).upper() == "VIEW" else "DROP_TABLE"
    return type(statement).__name__.upper()  # INSERT, UPDATE, DELETE, MERGE


def _target_node(statement: exp.Expression) -> exp.Table | None:
    node = statement.this if isinstance(statement, exp.Create) else None
    if isinstance(statement, exp.Drop):
        tables = statement.args.get("tables") or [statement.this]
        if len(tables) != 1:
            raise not_supported("DROP of several tables at once")
        node = tables[0]
    if isinstance(statement, (exp.Insert, exp.Update, exp.Delete, exp.Merge)):
        node = statement.this
    if isinstance(node, exp.Schema):  # CREATE TABLE t (columns...)
        node = node.this
    return node if isinstance(node, exp.Table) else None


def _resolve(table: exp.Table, project: str, default_dataset: tuple[str, str] | None) -> TableName:
    if table.catalog:
        return TableName(table.catalog, table.db, table.name)
    if table.db:
        return TableName(project, table.db, table.name)
    if default_dataset:
        return TableName(default_dataset[0], default_dataset[1], table.name)
    raise QueryError(f'Table "{table.name}" must be qualified with a dataset (e.g. dataset.table).')


def _fix_types(statement: exp.Expression) -> None:
    """NUMERIC/BIGNUMERIC get BigQuery's precision instead of DuckDB's DECIMAL(18, 3), and
    literals like 1.5 are FLOAT64 as in BigQuery (DuckDB would make them DECIMAL)."""
    for node in list(statement.find_all(*DATE_RESULT_FUNCTIONS)):
        # BigQuery's DATE_TRUNC/DATE_ADD/DATE_SUB return DATE; DuckDB's return TIMESTAMP.
        if not isinstance(node.parent, exp.Cast):
            node.replace(exp.cast(node.copy(), exp.DataType.build("DATE")))
    for literal in list(statement.find_all(exp.Literal)):
        text = literal.this if not literal.is_string else ""
        if text and any(mark in text for mark in ".eE") and not _inside_type_literal(literal):
            literal.replace(exp.cast(literal.copy(), exp.DataType.build("DOUBLE")))
    for data_type in list(statement.find_all(exp.DataType)):
        if data_type.this == exp.DataType.Type.DECIMAL and not data_type.expressions:
            data_type.replace(exp.DataType.build(NUMERIC_TYPE, dialect="duckdb"))
        elif data_type.this == exp.DataType.Type.BIGDECIMAL:
            data_type.replace(exp.DataType.build(BIGNUMERIC_TYPE, dialect="duckdb"))
        elif data_type.this == exp.DataType.Type.GEOGRAPHY:  # stored as DuckDB's GEOMETRY
            data_type.replace(exp.DataType.build("GEOMETRY", dialect="duckdb"))


def _inside_type_literal(literal: exp.Literal) -> bool:
    """NUMERIC '1.5' is parsed as a cast of a string; only bare numbers are touched."""
    return isinstance(literal.parent, exp.Cast) and literal.parent.to.is_type(
        *exp.DataType.TEMPORAL_TYPES, exp.DataType.Type.DECIMAL, exp.DataType.Type.BIGDECIMAL
    )
