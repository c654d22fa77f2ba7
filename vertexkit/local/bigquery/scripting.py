"""Multi-statement GoogleSQL scripts: DECLARE, SET, IF ... END IF, BEGIN ... END, temporary
tables (CREATE TEMP TABLE) and temporary SQL functions (CREATE TEMP FUNCTION).

As on BigQuery, a script is a parent job (statementType SCRIPT) and each SQL statement it runs
is a child job (`script_job_<parent>_<n>`, `statistics.parentJobId`) committed on its own; the
parent's result is its last statement's. Every statement runs on the parent job's DuckDB
connection, which is what keeps temporary tables and functions alive for the script's length
and no longer. Variables are substituted into each statement as GoogleSQL literals.
https://cloud.google.com/bigquery/docs/reference/standard-sql/procedural-language
"""

from __future__ import annotations

import base64
import datetime
import decimal
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from vertexkit.local.bigquery import script_text
from vertexkit.local.bigquery.responses import LOCATION, duckdb_to_field
from vertexkit.local.bigquery.running import RunningJob
from vertexkit.local.bigquery.sql import QueryError, ScriptScope, translate

if TYPE_CHECKING:
    from vertexkit.local.bigquery.jobs import JobRunner

GOOGLESQL_TYPES = {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL"}
VARIABLE_TYPES = (
    "INT64", "FLOAT64", "NUMERIC", "BIGNUMERIC", "BOOL", "STRING", "BYTES",
    "DATE", "DATETIME", "TIME", "TIMESTAMP",
)  # fmt: skip


class Script:
    """One script's run: its variables, temporary objects and child jobs."""

    def __init__(self, runner: JobRunner, project: str, config: dict, parent: RunningJob):
        self.runner = runner
        self.project = project
        self.config = config
        self.parent = parent
        self.scope = ScriptScope()
        self.types: dict[str, str] = {}  # variable -> its GoogleSQL type
        self.children = 0
        self.last: tuple[dict, dict] | None = None  # (child config, stats) of the last run

    # -- the script -------------------------------------------------------------------------------
    def run(self, sql: str) -> dict:
        self.run_nodes(script_text.parse(sql))
        stats: dict[str, Any] = {
            "statementType": "SCRIPT",
            "totalBytesProcessed": "0",
            "totalBytesBilled": "0",
            "cacheHit": False,
        }
        if self.last is not None and self.last[1].get("statementType") == "SELECT":
            child_config, child_stats = self.last
            self.config["destinationTable"] = child_config["destinationTable"]
            stats["schema"] = child_stats["schema"]
            stats["totalRows"] = child_stats["totalRows"]
        self.parent.extra_statistics["numChildJobs"] = str(self.children)
        return stats

    def run_nodes(self, nodes: list[script_text.Node]) -> None:
        for node in nodes:
            self.parent.raise_if_stopped()
            if isinstance(node, script_text.Block):
                self.run_nodes(node.body)
            elif isinstance(node, script_text.If):
                self.run_nodes(self._branch(node))
            else:
                self.statement(node.sql)

    def _branch(self, node: script_text.If) -> list[script_text.Node]:
        for condition, body in node.branches:
            if self.evaluate(f"CAST(({condition}) AS BOOL)")[0] is True:
                return body
        return node.otherwise

    def statement(self, sql: str) -> None:
        first = script_text.tokens(sql)[0].word
        if first in ("DECLARE", "SET"):
            parsed = _parse_one(sql)
            self.declare(parsed) if first == "DECLARE" else self.assign(parsed)
            return
        if first == "CREATE":
            parsed = _parse_one(sql)
            if _temporary(parsed):
                self.create_temporary(sql, parsed)
                return
        self.child_query(sql)

    # -- variables --------------------------------------------------------------------------------
    def declare(self, statement: exp.Expression) -> None:
        for item in statement.expressions:
            names = item.this if isinstance(item.this, list) else [item.this]
            declared = item.args.get("kind")
            default = item.args.get("default")
            if declared is None and not isinstance(default, exp.Expression):
                raise QueryError("Syntax error: DECLARE needs a type or a DEFAULT value")
            if isinstance(default, exp.Expression):
                expression = default.sql(dialect="bigquery")
            else:
                expression = "NULL"
            type_sql = declared.sql(dialect="bigquery") if declared is not None else None
            if type_sql is not None:
                expression = f"CAST(({expression}) AS {type_sql})"
            value, field = self.evaluate(expression)
            for name in names:
                if name.name.lower() in self.types:
                    raise QueryError(f"Variable {name.name} is already declared")
                self._bind(name.name, value, field)

    def assign(self, statement: exp.Expression) -> None:
        for item in statement.expressions:
            equality = item.this
            if not isinstance(equality, exp.EQ) or not isinstance(equality.this, exp.Column):
                raise script_text.not_supported("SET of several variables at once")
            name = equality.this.name
            if name.lower() not in self.types:
                raise QueryError(f"Undeclared variable: {name}")
            expression = equality.expression.sql(dialect="bigquery")
            value, field = self.evaluate(f"CAST(({expression}) AS {self.types[name.lower()]})")
            self._bind(name, value, field)

    def evaluate(self, expression: str) -> tuple[Any, dict]:
        """The value of a GoogleSQL expression (with the variables so far) and its field."""
        translation = self._translate(f"SELECT {expression} AS v")
        for name in translation.read_tables:
            self.runner.warehouse.require_table(self.parent.cursor, name)
        cursor = self.parent.cursor.execute(translation.sql, self._params())
        field = duckdb_to_field("v", cursor.description[0][1], True)
        rows = cursor.fetchall()
        if len(rows) != 1:
            raise QueryError("Scalar subquery produced more than one element")
        return rows[0][0], field

    def _bind(self, name: str, value: Any, field: dict) -> None:
        type_name = GOOGLESQL_TYPES.get(field["type"], field["type"])
        if field.get("mode") == "REPEATED" or type_name not in VARIABLE_TYPES:
            kind = "ARRAY" if field.get("mode") == "REPEATED" else type_name
            raise script_text.not_supported(f"script variables of type {kind}")
        self.types[name.lower()] = type_name
        self.scope.variables[name.lower()] = literal(type_name, value)

    # -- temporary tables and functions -----------------------------------------------------------
    def create_temporary(self, sql: str, statement: exp.Expression) -> None:
        kind = str(statement.args.get("kind") or "").upper()
        if kind == "FUNCTION":
            self.create_function(statement)
            self._record_child(sql, {"statementType": "CREATE_FUNCTION"})
            return
        if kind != "TABLE":
            raise script_text.not_supported(f"CREATE TEMP {kind}")
        target = statement.this.this if isinstance(statement.this, exp.Schema) else statement.this
        name = target.name.lower()
        if name in self.scope.temp_tables and not statement.args.get("replace"):
            if statement.args.get("exists"):
                return
            raise QueryError(f"Already Exists: Table {target.name}")
        self.scope.temp_tables[name] = set()
        try:
            translation = self._translate(sql)
            sql_text = translation.sql
            if statement.args.get("replace"):
                sql_text = sql_text.replace("CREATE TEMPORARY", "CREATE OR REPLACE TEMPORARY", 1)
            self.parent.cursor.execute(sql_text, self._params())
        except BaseException:
            self.scope.temp_tables.pop(name, None)
            raise
        described = self.parent.cursor.execute(f'SELECT * FROM temp.main."{name}" LIMIT 0')
        self.scope.temp_tables[name] = {column[0].lower() for column in described.description}
        described.fetchall()
        self._record_child(sql, {"statementType": translation.statement_type})

    def create_function(self, statement: exp.Expression) -> None:
        udf = statement.this
        if not isinstance(udf, exp.UserDefinedFunction) or not isinstance(
            statement.expression, exp.Expression
        ):
            raise script_text.not_supported("CREATE TEMP FUNCTION other than a SQL expression")
        properties = statement.args.get("properties")
        returns = None
        for prop in properties.expressions if properties else []:
            if isinstance(prop, exp.LanguageProperty):
                raise script_text.not_supported("JavaScript UDFs (LANGUAGE js)")
            if isinstance(prop, exp.ReturnsProperty):
                returns = prop.this.sql(dialect="bigquery")
        body = statement.expression.copy()
        parameters = []
        for argument in udf.expressions:
            kind = argument.args.get("kind")
            if kind is None or "ANY TYPE" in kind.sql(dialect="bigquery").upper():
                raise script_text.not_supported("templated UDF arguments (ANY TYPE)")
            parameters.append(argument.name)
            # BigQuery coerces each argument to its declared type (1 -> 1.0 for FLOAT64)
            for column in list(body.find_all(exp.Column)):
                if not column.table and column.name.lower() == argument.name.lower():
                    column.replace(exp.cast(exp.column(argument.name), kind.copy()))
        text = body.sql(dialect="bigquery")
        if returns:
            text = f"CAST(({text}) AS {returns})"
        translated = self._translate(f"SELECT {text} AS v").sql
        expression = sqlglot.parse_one(translated, read="duckdb").selects[0].unalias()
        name = udf.this.name.lower()
        self.parent.cursor.execute(
            f'CREATE OR REPLACE TEMP MACRO "{name}"({", ".join(parameters)}) AS '
            f"({expression.sql(dialect='duckdb')})"
        )
        self.scope.functions.add(name)

    # -- child jobs -------------------------------------------------------------------------------
    def child_query(self, sql: str) -> None:
        child = self._child_job(sql)
        run = RunningJob(
            self.project, child, self.parent.cursor, self.parent.table_locks, parent=self.parent
        )
        run.scope = self.scope
        run.extra_statistics = self._child_statistics()
        config = child["configuration"]["query"]
        try:
            stats = self.runner._query(self.project, config, run, None)
        except BaseException as error:
            self.runner.record_failed(run, error)
            raise
        self.last = (config, stats)

    def _record_child(self, sql: str, stats: dict) -> None:
        """A statement run outside a child transaction (temporary objects): stored DONE."""
        child = self._child_job(sql)
        run = RunningJob(
            self.project, child, self.parent.cursor, self.parent.table_locks, parent=self.parent
        )
        run.extra_statistics = self._child_statistics()
        self.runner.record_done(run, {"totalBytesProcessed": "0", "cacheHit": False, **stats})
        self.last = (child["configuration"]["query"], stats)

    def _child_job(self, sql: str) -> dict:
        job_id = f"script_job_{self.parent.job_id.removeprefix('job_')}_{self.children}"
        self.children += 1
        config = {
            key: self.config[key]
            for key in ("defaultDataset", "queryParameters", "parameterMode")
            if key in self.config
        }
        return {
            "kind": "bigquery#job",
            "id": f"{self.project}:{LOCATION}.{job_id}",
            "jobReference": {"projectId": self.project, "jobId": job_id, "location": LOCATION},
            "configuration": {
                "query": {"query": sql, "useLegacySql": False, **config},
                "jobType": "QUERY",
            },
            "status": {"state": "RUNNING"},
            "statistics": {},
        }

    def _child_statistics(self) -> dict:
        return {
            "parentJobId": self.parent.job_id,
            "scriptStatistics": {"evaluationKind": "STATEMENT"},
        }

    # -- helpers ----------------------------------------------------------------------------------
    def _translate(self, sql: str) -> Any:
        default = self.config.get("defaultDataset") or None
        dataset = None
        if default:
            dataset = (default.get("projectId") or self.project, default["datasetId"])
        return translate(sql, self.project, dataset, self.runner._column_types, self.scope)

    def _params(self) -> Any:
        from vertexkit.local.bigquery.jobs import query_parameters

        return query_parameters(self.config)


def _parse_one(sql: str) -> exp.Expression:
    try:
        return sqlglot.parse_one(sql, read="bigquery")
    except sqlglot.errors.ParseError as error:
        raise QueryError(f"Syntax error: {str(error).splitlines()[0]}") from error


def _temporary(statement: exp.Expression) -> bool:
    properties = statement.args.get("properties")
    return bool(properties) and any(
        isinstance(prop, exp.TemporaryProperty) for prop in properties.expressions
    )


def literal(type_name: str, value: Any) -> str:
    """A variable's value written back as a GoogleSQL literal of its type."""
    if value is None:
        return f"CAST(NULL AS {type_name})"
    if type_name == "INT64":
        return str(int(value))
    if type_name == "FLOAT64":
        return f"CAST('{float(value)!r}' AS FLOAT64)"
    if type_name in ("NUMERIC", "BIGNUMERIC"):
        return f"{type_name} '{decimal.Decimal(value)}'"
    if type_name == "BOOL":
        return "TRUE" if value else "FALSE"
    if type_name == "STRING":
        return exp.Literal.string(str(value)).sql(dialect="bigquery")
    if type_name == "BYTES":
        return f"FROM_BASE64('{base64.b64encode(bytes(value)).decode()}')"
    if type_name == "TIMESTAMP":
        moment = value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
        return f"TIMESTAMP '{moment.isoformat(sep=' ')}'"
    if type_name == "DATETIME":
        return f"DATETIME '{value.isoformat(sep=' ')}'"
    return f"{type_name} '{value.isoformat()}'"  # DATE, TIME
