"""GoogleSQL semantics on DuckDB: the rewrites of the parsed tree and the DuckDB macros they call,
organised by function family. `sql.translate` parses with sqlglot's BigQuery dialect, checks
names against functions.py, then calls `rewrite`.

Each rewrite makes DuckDB give BigQuery's answer (values, types, NULLs, errors, column names);
where that is not possible the construct is refused with `not_supported`, never answered
differently. Macros are named `bq_*`: user SQL cannot call them (the allow-list refuses names
that are not GoogleSQL), only the rewrites emit them.
"""

from __future__ import annotations

import contextvars
import decimal
import re
from collections.abc import Callable

import duckdb
import sqlglot
from sqlglot import exp

from vertexkit.local.bigquery import (
    functions,
    geography,
    geography_checks,
    intervals,
    json_udfs,
    udfs,
)
from vertexkit.local.bigquery.formats import format_call, parse_call
from vertexkit.local.bigquery.query_error import QueryError, not_supported

# -- DuckDB macros, by family ---------------------------------------------------------------------
CONVERSION_MACROS = {
    # FLOAT64 -> INT64 rounds half away from zero (DuckDB rounds half to even); a STRING must
    # be an integer literal ('2.5' is "Bad int64 value").
    "bq_int64(x)": """CASE
        WHEN typeof(x) IN ('DOUBLE', 'FLOAT') THEN CAST(round(TRY_CAST(x AS DOUBLE)) AS BIGINT)
        WHEN typeof(x) = 'VARCHAR' AND regexp_full_match(TRY_CAST(x AS VARCHAR),
            '\\s*[+-]?0[xX][0-9a-fA-F]+\\s*') THEN error('not supported by the local BigQuery: '
            || 'CAST of a hexadecimal STRING to INT64')
        WHEN typeof(x) = 'VARCHAR' AND NOT regexp_full_match(TRY_CAST(x AS VARCHAR),
            '\\s*[+-]?[0-9]+\\s*') THEN error('Bad int64 value: ' || TRY_CAST(x AS VARCHAR))
        ELSE CAST(x AS BIGINT) END""",
    # STRING -> BYTES is the UTF-8 bytes (DuckDB's cast refuses non-ASCII text and reads
    # an escape such as \xAA in it as one byte).
    "bq_bytes(x)": """CASE WHEN typeof(x) = 'VARCHAR' THEN encode(TRY_CAST(x AS VARCHAR))
        ELSE TRY_CAST(x AS BLOB) END""",
    "bq_safe_int64(x)": """CASE
        WHEN typeof(x) IN ('DOUBLE', 'FLOAT') THEN TRY_CAST(round(TRY_CAST(x AS DOUBLE)) AS BIGINT)
        WHEN typeof(x) = 'VARCHAR' AND NOT regexp_full_match(TRY_CAST(x AS VARCHAR),
            '\\s*[+-]?[0-9]+\\s*') THEN NULL
        ELSE TRY_CAST(x AS BIGINT) END""",
    # FLOAT64 -> STRING has no '.0' on whole numbers; NUMERIC -> STRING no trailing zeros.
    "bq_string(x)": """CASE
        WHEN typeof(x) = 'GEOMETRY' THEN error('not supported by the local BigQuery: CAST of a '
            || 'GEOGRAPHY to STRING (use ST_ASTEXT)')
        WHEN typeof(x) = 'INTERVAL' THEN bq_interval_string(TRY_CAST(x AS INTERVAL))
        WHEN typeof(x) IN ('DOUBLE', 'FLOAT')
            THEN regexp_replace(TRY_CAST(x AS VARCHAR), '\\.0$', '')
        WHEN typeof(x) LIKE 'DECIMAL%'
            THEN regexp_replace(regexp_replace(TRY_CAST(x AS VARCHAR), '(\\.[0-9]*?)0+$', '\\1'),
                '\\.$', '')
        ELSE CAST(x AS VARCHAR) END""",
}
MATHEMATICAL_MACROS = {
    "bq_divide(a, b)": """CASE WHEN b = 0 THEN error('division by zero: ' || CAST(a AS VARCHAR)
        || ' / ' || CAST(b AS VARCHAR)) ELSE a / b END""",
    # NUMERIC / NUMERIC (or INT64) is NUMERIC, exact to 9 digits and rounded half away from
    # zero; DuckDB divides decimals as doubles. Scaled to integers (a value too large for that
    # overflows loudly), divided, rounded, and written back through its decimal text.
    "bq_scaled(x)": "CAST(CAST(x AS DECIMAL(38, 9)) * 1000000000 AS HUGEINT)",
    "bq_rounded_quotient(n, d)": """sign(n) * sign(d) * ((abs(n) * 2 + abs(d)) // (abs(d) * 2))""",
    "bq_numeric_of_scaled(q)": """CAST(CASE WHEN q < 0 THEN '-' ELSE '' END
        || CAST(abs(q) // 1000000000 AS VARCHAR) || '.'
        || lpad(CAST(abs(q) % 1000000000 AS VARCHAR), 9, '0') AS DECIMAL(38, 9))""",
    "bq_numeric_divide(a, b)": """CASE WHEN b = 0 THEN error('division by zero: '
        || CAST(a AS VARCHAR) || ' / ' || CAST(b AS VARCHAR))
        ELSE bq_numeric_of_scaled(bq_rounded_quotient(bq_scaled(a) * 1000000000, bq_scaled(b)))
        END""",
    "bq_mod(a, b)": """CASE WHEN b = 0 THEN error('division by zero: MOD(' || CAST(a AS VARCHAR)
        || ', ' || CAST(b AS VARCHAR) || ')') ELSE a % b END""",
    "bq_div(a, b)": """CASE WHEN b = 0 THEN error('division by zero: DIV(' || CAST(a AS VARCHAR)
        || ', ' || CAST(b AS VARCHAR) || ')') ELSE a // b END""",
    # LN / SQRT of a negative number are errors in BigQuery (DuckDB answers NaN).
    "bq_ln(x)": "CASE WHEN x < 0 THEN error('Argument to LN cannot be negative') ELSE ln(x) END",
    "bq_sqrt(x)": """CASE WHEN x < 0 THEN error('Argument to SQRT cannot be negative: ' ||
        CAST(x AS VARCHAR)) ELSE sqrt(x) END""",
    "bq_ieee_divide(a, b)": "CAST(a AS DOUBLE) / CAST(b AS DOUBLE)",
    "bq_range_bucket(x, arr)": """CASE WHEN x IS NULL OR arr IS NULL THEN NULL
        ELSE len([e FOR e IN arr IF e <= x]) END""",
}
STRING_MACROS = {
    "bq_byte_length(x)": """CASE WHEN typeof(x) = 'BLOB' THEN octet_length(TRY_CAST(x AS BLOB))
        ELSE strlen(TRY_CAST(x AS VARCHAR)) END""",
}
DATE_AND_TIME_MACROS = {
    # Named so that sqlglot passes them through untouched (formats.py writes their formats).
    "bq_strftime(x, f)": "strftime(x, f)",
    "bq_strptime(x, f)": "strptime(x, f)",
    "bq_timezone(z, x)": "timezone(z, x)",
    "bq_date_from_unix_date(n)": "CAST(DATE '1970-01-01' + CAST(n AS INTEGER) AS DATE)",
    # BigQuery's WEEK(<weekday>): weeks start on `first` (0 = Sunday); days before the first
    # such day of the year are week 0.
    "bq_week(d, first)": "(dayofyear(d) + 6 - ((dayofweek(d) - first + 7) % 7)) // 7",
}
JSON_MACROS = {
    # The JSON-only functions (json_udfs.py) take a JSON value; another type would be read
    # as JSON text by DuckDB, an answer BigQuery does not give.
    "bq_require_json(x, name)": """CASE WHEN typeof(x) = 'JSON' THEN CAST(x AS JSON)
        ELSE error('not supported by the local BigQuery: ' || name || ' of a ' || typeof(x)
            || ' value (JSON only)') END""",
    # BigQuery's JSON_TYPE names JSON's own types, not DuckDB's.
    "bq_json_type(j)": """CASE json_type(j)
        WHEN 'OBJECT' THEN 'object' WHEN 'ARRAY' THEN 'array' WHEN 'VARCHAR' THEN 'string'
        WHEN 'BOOLEAN' THEN 'boolean' WHEN 'NULL' THEN 'null'
        WHEN 'BIGINT' THEN 'number' WHEN 'UBIGINT' THEN 'number' WHEN 'DOUBLE' THEN 'number'
        WHEN 'HUGEINT' THEN 'number' END""",
}
APPROXIMATE_AGGREGATE_MACROS = {
    # APPROX_TOP_COUNT / APPROX_TOP_SUM over list(x) (NULLs kept: BigQuery counts NULL as a
    # value). Exact counts, largest first; ties by value (BigQuery leaves their order open).
    "bq_with_null(values, l)": """list_distinct(values)
        || CASE WHEN list_count(values) < len(values) THEN [NULL] ELSE [] END""",
    "bq_top_count(l, n)": """[{'value': s.value, 'count': -s.c} FOR s IN list_slice(list_sort(
        [{'c': -len([e FOR e IN l IF e IS NOT DISTINCT FROM v]), 'value': v}
            FOR v IN bq_with_null(l, l)]), 1, n)]""",
    # l: list({'v': value, 'w': weight}); NULL weights are left out, a value with none sums NULL
    "bq_weights(l, v)": "[e.w FOR e IN l IF e.v IS NOT DISTINCT FROM v AND e.w IS NOT NULL]",
    "bq_weight_sum(ws)": """CASE WHEN len(ws) = 0 THEN NULL
        ELSE list_reduce(ws, lambda a, b: a + b) END""",
    "bq_top_sum(l, n)": """[{'value': s.value, 'sum': s.total} FOR s IN list_slice(list_sort(
        [{'missing': bq_weight_sum(bq_weights(l, v)) IS NULL,
          'neg': -bq_weight_sum(bq_weights(l, v)), 'value': v,
          'total': bq_weight_sum(bq_weights(l, v))}
            FOR v IN bq_with_null([e.v FOR e IN l], [e.v FOR e IN l])]), 1, n)]""",
    # HLL_COUNT.INIT: the distinct non-NULL values as JSON, and their type, to udfs.hll_init.
    "bq_hll_values(l)": "CAST(to_json(list_sort(list_distinct(l))) AS VARCHAR)",
}
ARRAY_MACROS = {
    "bq_array_at(arr, i, shown)": """CASE WHEN arr IS NULL OR i IS NULL THEN NULL
        WHEN i < 0 THEN error('Array index ' || CAST(shown AS VARCHAR)
            || ' is out of bounds (underflow)')
        WHEN i >= len(arr) THEN error('Array index ' || CAST(shown AS VARCHAR)
            || ' is out of bounds (overflow)')
        ELSE arr[i + 1] END""",
    # ARRAY_SLICE counts from 0 (negative: from the end, -1 the last); list_slice from 1.
    "bq_array_slice(arr, s, e)": """list_slice(arr, CASE WHEN s >= 0 THEN s + 1 ELSE s END,
        CASE WHEN e >= 0 THEN e + 1 ELSE e END)""",
    "bq_safe_array_at(arr, i)": "CASE WHEN i < 0 OR i >= len(arr) THEN NULL ELSE arr[i + 1] END",
}
MACROS = {
    # The result type of `f` widened as BigQuery's ROUND/TRUNC of INT64 are: FLOAT64 for
    # INT64 (DuckDB's ceil() of an integer is a DOUBLE), unchanged for NUMERIC and FLOAT64.
    "bq_as_ceil_type(x, v)": "CASE WHEN FALSE THEN ceil(x) ELSE v END",
    **CONVERSION_MACROS,
    **MATHEMATICAL_MACROS,
    **STRING_MACROS,
    **DATE_AND_TIME_MACROS,
    **ARRAY_MACROS,
    **APPROXIMATE_AGGREGATE_MACROS,
    **JSON_MACROS,
    **intervals.MACROS,
    **geography_checks.MACROS,
}


def install_macros(connection: duckdb.DuckDBPyConnection) -> None:
    udfs.install(connection, intervals.UDFS)  # before the macros that call them
    for signature, body in MACROS.items():
        connection.execute(f"CREATE OR REPLACE MACRO {signature} AS {body}")
    connection.create_function(
        "bq_instr",
        instr,
        [duckdb.sqltype(t) for t in ("VARCHAR", "VARCHAR", "BIGINT", "BIGINT")],
        duckdb.sqltype("BIGINT"),
    )
    udfs.install(connection, udfs.UDFS)
    udfs.install(connection, json_udfs.UDFS)
    udfs.install(connection, geography.UDFS)


def instr(source: str, search: str, position: int, occurrence: int) -> int:
    """BigQuery's INSTR: 1-based; a negative position searches backwards from the end."""
    if position == 0:
        raise ValueError("INSTR: position must not be 0")
    if occurrence < 1:
        raise ValueError("INSTR: occurrence must be positive")
    found = 0
    if position > 0:
        index = position - 1
        while (index := source.find(search, index)) >= 0:
            found += 1
            if found == occurrence:
                return index + 1
            index += 1
        return 0
    end = len(source) + position + len(search)
    while (index := source.rfind(search, 0, end)) >= 0:
        found += 1
        if found == occurrence:
            return index + 1
        end = index + len(search) - 1
    return 0


# -- helpers ---------------------------------------------------------------------------------------
def call(name: str, *args: exp.Expression) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def duck(template: str, **parts: exp.Expression) -> exp.Expression:
    """An expression written in DuckDB SQL with `{part}` holes filled by rewritten nodes."""
    text = template.format(**{k: v.sql(dialect="duckdb") for k, v in parts.items()})
    return sqlglot.parse_one(text, read="duckdb")


def literal_string(node: exp.Expression | None, what: str) -> str:
    if not isinstance(node, exp.Literal) or not node.is_string:
        raise not_supported(f"{what} that is not a string literal")
    return node.this


# The type of a column reference as the catalog gives it (sql.translate sets one per statement;
# jobs run in threads, each with its own context).
COLUMN_TYPE: contextvars.ContextVar[Callable[[exp.Column], str | None]] = contextvars.ContextVar(
    "COLUMN_TYPE", default=lambda column: None
)
MACRO_TYPES = {"bq_string": "STRING", "bq_int64": "INT64", "bq_safe_int64": "INT64"}


def static_type(node: exp.Expression) -> str | None:
    """The GoogleSQL type of `node` when the query text (or the catalog, for a column of a
    table) says it, else None."""
    if isinstance(node, exp.Column):
        return COLUMN_TYPE.get()(node)
    if isinstance(node, (exp.Sum, exp.Min, exp.Max, exp.AnyValue)):  # the argument's type
        return static_type(node.this)
    if isinstance(node, exp.Anonymous) and node.name in MACRO_TYPES:  # a rewritten CAST
        return MACRO_TYPES[node.name]
    if isinstance(node, exp.Literal):
        return "STRING" if node.is_string else "INT64" if node.is_int else None
    if isinstance(node, (exp.Cast, exp.TryCast)):
        if node.to.is_type(exp.DataType.Type.JSON):
            return "JSON"
        if node.to.is_type(exp.DataType.Type.DECIMAL):
            return "NUMERIC"
        if node.to.is_type(exp.DataType.Type.BIGINT):
            return "INT64"
        if node.to.is_type(exp.DataType.Type.DOUBLE):
            return "FLOAT64"
        if node.to.is_type(*exp.DataType.TEXT_TYPES):
            return "STRING"
    if isinstance(node, (exp.ParseJSON, exp.JSONObject, exp.JSONArray)):
        return "JSON"
    if isinstance(node, exp.Anonymous) and node.name.upper() in ("TO_JSON", "JSON_ARRAY"):
        return "JSON"
    if isinstance(node, (exp.Concat, exp.Upper, exp.Lower, exp.Trim)):
        return "STRING"
    return _temporal_type(node)


def _temporal_type(node: exp.Expression) -> str | None:
    """DATE, DATETIME, TIMESTAMP, TIME or INTERVAL, where the query text says it: what
    INTERVAL arithmetic (intervals.py) needs to know of its operands."""
    if isinstance(node, exp.Paren):
        return static_type(node.this)
    if isinstance(node, exp.Neg):
        return "INTERVAL" if static_type(node.this) == "INTERVAL" else None
    if isinstance(node, (exp.Add, exp.Sub)):
        kinds = {static_type(node.this), static_type(node.expression)}
        if kinds == {"INTERVAL"}:
            return "INTERVAL"
        if "INTERVAL" in kinds and kinds & {"DATE", "DATETIME"}:
            return "DATETIME"  # DATE + INTERVAL is a DATETIME in BigQuery
        if kinds == {"INTERVAL", "TIMESTAMP"}:
            return "TIMESTAMP"
        return None
    return intervals.temporal_type(node)


# -- conversion ------------------------------------------------------------------------------------
# BIGNUMERIC is DuckDB's widest decimal locally (sql.BIGNUMERIC_TYPE): 20 digits before the point
# and 18 after, where BigQuery's has 38 and 38.
LOCAL_BIGNUMERIC = exp.DataType.build("DECIMAL(38, 18)", dialect="duckdb")
WIDE = decimal.Context(prec=200)


def bignumeric_refusal(text: str) -> str | None:
    """Why the number `text` cannot be a local BIGNUMERIC exactly, or None (also for text that
    is no number: that is BigQuery's own error)."""
    try:
        value = decimal.Decimal(text.strip(), context=WIDE)
    except decimal.InvalidOperation:
        return None
    if not value.is_finite() or value.is_zero():
        return None
    fraction_digits = max(0, -value.normalize(WIDE).as_tuple().exponent)
    if value.adjusted() < 20 and fraction_digits <= 18:
        return None
    return (
        f"BIGNUMERIC value {text}: the local BIGNUMERIC holds 20 digits before the point and 18"
        " after (BigQuery's 38 and 38)"
    )


def _cast(node: exp.Cast) -> exp.Expression | None:
    safe = isinstance(node, exp.TryCast)
    interval = intervals.cast(node, static_type)
    if interval is not None:
        return interval
    if node.to == LOCAL_BIGNUMERIC and isinstance(node.this, exp.Literal) and node.this.is_string:
        refusal = bignumeric_refusal(node.this.this)
        if refusal:
            raise not_supported(refusal)
    if node.to == LOCAL_BIGNUMERIC and safe:
        # A number the local BIGNUMERIC cannot hold is BigQuery's value, not NULL.
        return duck(
            "CASE WHEN TRY_CAST({x} AS DECIMAL(38, 18)) IS NULL AND TRY_CAST({x} AS DOUBLE)"
            " IS NOT NULL THEN error('not supported by the local BigQuery: SAFE_CAST to"
            " BIGNUMERIC of a number beyond the local BIGNUMERIC (20 digits before the point)')"
            " ELSE TRY_CAST({x} AS DECIMAL(38, 18)) END",
            x=node.this,
        )
    if isinstance(node.this, exp.Literal) and node.this.is_int:
        return None  # an integer literal: nothing to round (widen_integer_literals writes these)
    if node.to.is_type(exp.DataType.Type.BIGINT):
        return call("bq_safe_int64" if safe else "bq_int64", node.this)
    if node.to.is_type(exp.DataType.Type.BINARY, exp.DataType.Type.VARBINARY):
        if isinstance(node.this, exp.Literal) and node.this.is_string:
            return call("encode", node.this)
        return call("bq_bytes", node.this)
    if node.to.is_type(*exp.DataType.TEXT_TYPES) and not safe:
        if isinstance(node.this, exp.Literal) and node.this.is_string:
            return None
        return call("bq_string", node.this)
    return None


# -- mathematical ----------------------------------------------------------------------------------
def _div(node: exp.Div) -> exp.Expression:
    interval = intervals.division(node, static_type)
    if interval is not None:
        return interval
    if _numeric_operands(node.this, node.expression):
        return call("bq_numeric_divide", node.this, node.expression)
    if _nonzero_literal(node.expression):
        return None  # cannot fail (see _mod)
    return call("bq_divide", node.this, node.expression)


def _nonzero_literal(node: exp.Expression) -> bool:
    """An integer literal other than 0 (widen_integer_literals has cast it to BIGINT)."""
    if isinstance(node, exp.Neg):
        node = node.this
    if isinstance(node, exp.Cast):
        node = node.this
    return isinstance(node, exp.Literal) and node.is_int and int(node.this) != 0


def _mod(node: exp.Mod) -> exp.Expression | None:
    """MOD by a nonzero literal cannot fail: plain %, which DuckDB also takes in a window's
    PARTITION BY (the macro's error() is volatile, which DuckDB refuses there)."""
    if _nonzero_literal(node.expression):
        return None
    return call("bq_mod", node.this, node.expression)


def _int_div(node: exp.IntDiv) -> exp.Expression | None:
    if _nonzero_literal(node.expression):
        return None
    return call("bq_div", node.this, node.expression)


def _log(node: exp.Log) -> exp.Expression:
    """LOG / LOG10 of a negative number, or to a base <= 0 or 1, is an error (DuckDB: NaN)."""
    return duck(
        "CASE WHEN ({v}) < 0 OR ({b}) <= 0 OR ({b}) = 1 THEN "
        "error('Argument to LOG is out of range: LOG(' || CAST({v} AS VARCHAR) || ', ' || "
        "CAST({b} AS VARCHAR) || ')') ELSE {log} END",
        v=node.expression,
        b=node.this,
        log=node.copy(),
    )


def _pow(node: exp.Pow) -> exp.Expression:
    """POW of a negative number to a fraction, or of 0 to a negative power, is an error."""
    return duck(
        "CASE WHEN (({x}) < 0 AND ({y}) <> floor({y})) OR (({x}) = 0 AND ({y}) < 0) THEN "
        "error('Floating point error in function: POW(' || CAST({x} AS VARCHAR) || ', ' || "
        "CAST({y} AS VARCHAR) || ')') ELSE {pow} END",
        x=node.this,
        y=node.expression,
        pow=node.copy(),
    )


DOMAINS = {  # inverse trigonometry outside its domain: DuckDB answers NaN
    exp.Acos: ("acos", "({x}) < -1 OR ({x}) > 1", "outside [-1, 1]"),
    exp.Asin: ("asin", "({x}) < -1 OR ({x}) > 1", "outside [-1, 1]"),
    exp.Acosh: ("acosh", "({x}) < 1", "below 1"),
    exp.Atanh: ("atanh", "({x}) <= -1 OR ({x}) >= 1", "outside (-1, 1)"),
}


def _inverse_trigonometry(node: exp.Func) -> exp.Expression:
    """Refused, loudly, outside the domain, rather than a NaN BigQuery may not give."""
    name, outside, words = DOMAINS[type(node)]
    message = f"not supported by the local BigQuery: {name.upper()} of a value {words}"
    return duck(f"CASE WHEN {outside} THEN error('{message}') ELSE {name}({{x}}) END", x=node.this)


def _mul(node: exp.Mul) -> exp.Expression | None:
    """NUMERIC * NUMERIC is NUMERIC rounded to 9 digits (DuckDB keeps 18, which reads as
    BIGNUMERIC); known where the operands' types are (literals, CASTs, table columns)."""
    interval = intervals.multiplication(node, static_type)
    if interval is not None:
        return interval
    if [static_type(node.this), static_type(node.expression)] != ["NUMERIC", "NUMERIC"]:
        return None
    return duck("CAST(({a}) * ({b}) AS DECIMAL(38, 9))", a=node.this, b=node.expression)


def _numeric_operands(*operands: exp.Expression) -> bool:
    """NUMERIC arithmetic: a NUMERIC operand and no FLOAT64 (or unknown) one."""
    kinds = [static_type(operand) for operand in operands]
    return "NUMERIC" in kinds and all(kind in ("NUMERIC", "INT64") for kind in kinds)


def _avg(node: exp.Avg) -> exp.Expression | None:
    """AVG of NUMERIC is NUMERIC (DuckDB's is a double)."""
    if not _numeric_operands(node.this) or node.find(exp.Distinct):
        return None
    return duck(
        "CASE WHEN count({x}) = 0 THEN NULL ELSE bq_numeric_divide(sum({x}), count({x})) END",
        x=node.this,
    )


def may_fail(node: exp.Expression) -> bool:
    """Whether evaluating `node` can raise: DuckDB's TRY would turn that error into NULL too."""
    failing = node.find_all(exp.Func, exp.Div, exp.Bracket, exp.Cast, exp.Mod, exp.IntDiv)
    # A number literal is cast to FLOAT64 by sql._fix_types: that cannot fail. bq_subtract
    # fails only where DuckDB binds a date/time subtraction, before any row: TRY cannot hide it.
    return any(
        not (isinstance(n, exp.Cast) and isinstance(n.this, exp.Literal))
        and not (isinstance(n, exp.Anonymous) and n.name == "bq_subtract")
        for n in failing
    )


def _safe_arithmetic(node: exp.Expression) -> exp.Expression:
    if any(may_fail(arg) for arg in node.iter_expressions()):
        raise not_supported(f"{node.sql_name()} with an argument that can fail")
    operator = {
        exp.SafeAdd: exp.Add,
        exp.SafeSubtract: exp.Sub,
        exp.SafeMultiply: exp.Mul,
    }.get(type(node))
    if operator is None:  # SAFE_NEGATE
        inner: exp.Expression = exp.Neg(this=exp.paren(node.this))
    else:
        inner = operator(this=exp.paren(node.this), expression=exp.paren(node.expression))
    return call("TRY", inner)


# -- strings ---------------------------------------------------------------------------------------
PRINTF_SPEC = re.compile(r"%(?:%|[-+ #0]*(?:\d+)?(?:\.\d+)?([a-zA-Z]))")
PRINTF_CONVERSIONS = set("dixXofFeEgGs")


def _format(node: exp.Format) -> exp.Expression:
    pattern = literal_string(node.this, "FORMAT with a format")
    for match in PRINTF_SPEC.finditer(pattern):
        if match.group(1) and match.group(1) not in PRINTF_CONVERSIONS:
            raise not_supported(f"FORMAT specifier %{match.group(1)}")
    if re.search(r"%[-+ #0]*'", pattern):
        raise not_supported("FORMAT with the ' flag")
    return call("printf", node.this, *node.expressions)


# CONCAT casts its other values to STRING (the page's CONCAT('Summer', ' ', 1923) is
# 'Summer 1923'), except these, which have no cast to STRING.
NOT_CASTABLE_TO_STRING = ("JSON", "ARRAY", "STRUCT", "GEOGRAPHY")


def _concat(node: exp.Concat) -> exp.Expression:
    """CONCAT of BYTES values is BYTES; otherwise each value is a STRING or cast to one as CAST
    does (a value of a type the query does not state is left to DuckDB's ||)."""
    args = node.expressions
    kinds = [_concat_kind(a) for a in args]
    if "BYTES" in kinds:
        others = sorted({k for k in kinds if k not in (None, "BYTES")})
        if others:
            raise QueryError(
                "No matching signature for function CONCAT: BYTES and "
                f"{', '.join(others)}; all values must be BYTES, or castable to STRING"
            )
        typed = [exp.cast(a, "BLOB") if isinstance(a, exp.Null) else a for a in args]
    else:
        typed = [_concat_string(a, kind) for a, kind in zip(args, kinds, strict=True)]
    result = typed[0]
    for arg in typed[1:]:
        result = exp.DPipe(this=result, expression=arg)
    return exp.paren(result)


def _concat_kind(node: exp.Expression) -> str | None:
    if isinstance(node, exp.ByteString) or (
        isinstance(node, exp.Cast)
        and node.to.is_type(exp.DataType.Type.BINARY, exp.DataType.Type.VARBINARY)
    ):
        return "BYTES"
    return static_type(node)


def _concat_string(node: exp.Expression, kind: str | None) -> exp.Expression:
    if isinstance(node, exp.Null):
        return exp.cast(node, "VARCHAR")
    if kind is None or kind == "STRING":
        return node
    if kind.startswith(NOT_CASTABLE_TO_STRING):
        raise QueryError(
            f"No matching signature for function CONCAT for argument type {kind}: values must"
            " be BYTES, or castable to STRING"
        )
    return call("bq_string", node)


def _instr(node: exp.StrPosition) -> exp.Expression | None:
    position = node.args.get("position")
    occurrence = node.args.get("occurrence")
    if position is None and occurrence is None:
        return None
    return call(
        "bq_instr",
        node.this,
        node.args["substr"],
        position or exp.Literal.number(1),
        occurrence or exp.Literal.number(1),
    )


# -- date and time ---------------------------------------------------------------------------------
WEEKDAYS = ("SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY")
EXTRACT_PARTS: dict[str, str] = {
    "YEAR": "year({x})",
    "ISOYEAR": "isoyear({x})",
    "QUARTER": "quarter({x})",
    "MONTH": "month({x})",
    "DAY": "day({x})",
    "DAYOFYEAR": "dayofyear({x})",
    "DAYOFWEEK": "(dayofweek({x}) + 1)",  # BigQuery: Sunday is 1
    "WEEK": "bq_week({x}, 0)",
    "ISOWEEK": "week({x})",
    "HOUR": "hour({x})",
    "MINUTE": "minute({x})",
    "SECOND": "second({x})",
    "MILLISECOND": "(millisecond({x}) % 1000)",  # DuckDB counts from the minute
    "MICROSECOND": "(microsecond({x}) % 1000000)",
    "DATE": "CAST({x} AS DATE)",
    "TIME": "CAST({x} AS TIME)",
    "DATETIME": "CAST({x} AS TIMESTAMP)",
}


def _extract(node: exp.Extract) -> exp.Expression:
    part = node.this
    value = node.expression
    if isinstance(value, exp.AtTimeZone):
        zone = literal_string(value.args.get("zone"), "AT TIME ZONE with a zone")
        value = duck(
            "bq_timezone({z}, CAST({x} AS TIMESTAMPTZ))", z=exp.Literal.string(zone), x=value.this
        )
    if isinstance(part, exp.WeekStart):
        day = part.this.name.upper()
        if day not in WEEKDAYS:
            raise not_supported(f"EXTRACT(WEEK({day}))")
        return duck(f"bq_week({{x}}, {WEEKDAYS.index(day)})", x=value)
    name = part.name.upper()
    if static_type(value) == "INTERVAL":
        intervals.check_extract_part(name)
    template = EXTRACT_PARTS.get(name)
    if template is None:
        raise not_supported(f"EXTRACT({name})")
    return duck(template, x=value)


MICROSECONDS = {
    "MICROSECOND": 1,
    "MILLISECOND": 1000,
    "SECOND": 10**6,
    "MINUTE": 60 * 10**6,
    "HOUR": 3600 * 10**6,
    "DAY": 86400 * 10**6,
}


def _timestamp_diff(node: exp.TimestampDiff) -> exp.Expression:
    """Whole units elapsed, truncated toward zero (DuckDB counts unit boundaries crossed)."""
    unit = node.unit.name.upper() if node.unit else "DAY"
    if unit not in MICROSECONDS:
        raise not_supported(f"TIMESTAMP_DIFF in {unit}")
    return duck(
        f"((epoch_us(CAST({{a}} AS TIMESTAMPTZ)) - epoch_us(CAST({{b}} AS TIMESTAMPTZ)))"
        f" // {MICROSECONDS[unit]})",
        a=node.this,
        b=node.expression,
    )


def _unix_to_time(node: exp.UnixToTime) -> exp.Expression | None:
    """TIMESTAMP_MILLIS / TIMESTAMP_MICROS return TIMESTAMP (DuckDB's epoch_ms a naive one)."""
    scale = node.args.get("scale")
    digits = int(scale.name) if isinstance(scale, exp.Literal) else 0
    if digits == 0:
        return None
    if digits not in (3, 6):
        raise not_supported("this TIMESTAMP_* conversion")
    function = "epoch_ms" if digits == 3 else "make_timestamp"
    return duck(f"CAST({function}({{x}}) AS TIMESTAMPTZ)", x=node.this)


# Functions of one date/time type: a string literal there is coerced to it, as BigQuery's
# literal coercion does (DuckDB cannot choose between date_trunc's signatures for text, and
# TIMESTAMP_ADD of text was a DATETIME).
LITERAL_COERCED_TO = {
    exp.TimestampTrunc: "TIMESTAMPTZ",
    exp.TimestampAdd: "TIMESTAMPTZ",
    exp.TimestampSub: "TIMESTAMPTZ",
    exp.DateTrunc: "DATE",
}


def _coerce_string_literal(node: exp.Func) -> None:
    value = node.this
    if isinstance(value, exp.Literal) and value.is_string:
        value.replace(exp.cast(value.copy(), LITERAL_COERCED_TO[type(node)]))


def _date_from_unix_date(node: exp.DateFromUnixDate) -> exp.Expression:
    return call("bq_date_from_unix_date", node.this)


# -- arrays ----------------------------------------------------------------------------------------
def _bracket(node: exp.Bracket) -> exp.Expression:
    offset = node.args.get("offset")
    if offset is None:
        raise not_supported(
            "a subscript without OFFSET/ORDINAL (or a JSON subscript); write arr[OFFSET(n)]"
            " or use JSON_QUERY"
        )
    if len(node.expressions) != 1:
        raise not_supported("a subscript with several indexes")
    index = node.expressions[0]
    zero_based = exp.Sub(this=exp.paren(index.copy()), expression=exp.Literal.number(offset))
    if node.args.get("safe"):
        return call("bq_safe_array_at", node.this, zero_based)
    return call("bq_array_at", node.this, zero_based, index)


def _unnest(node: exp.Unnest) -> exp.Expression | None:
    if node.args.get("offset"):
        return _unnest_with_offset(node)
    if not isinstance(node.parent, (exp.From, exp.Join)) or len(node.expressions) != 1:
        return None
    if isinstance(node.expressions[0], exp.Array):
        return None  # a literal array: sqlglot binds a STRUCT's fields as below
    alias = node.args.get("alias")
    columns = alias.columns if alias else []
    if not columns:
        return _struct_fields_as_columns(node)
    if len(columns) == 1 and _star_over(node, columns[0].name):
        return _struct_fields_as_columns(node, columns[0].name)
    return None


def _struct_fields_as_columns(node: exp.Unnest, name: str = "unnest") -> exp.Expression:
    """`FROM t, UNNEST(t.structs)`: "For input ARRAYs of STRUCTs, UNNEST returns a row for each
    STRUCT, with a separate column for each field in the STRUCT" (query syntax page). DuckDB's
    UNNEST(..., max_depth => 2) in a (lateral) subquery makes those columns; an array of other
    values keeps one column, `name`. With an alias (`AS e`, only under `SELECT *`, which
    expands the fields), `e` names the subquery, whose row is the STRUCT."""
    subquery = duck(
        f"(SELECT UNNEST({{a}}, max_depth => 2) AS {quote(name)})", a=node.expressions[0]
    )
    if name != "unnest":
        subquery.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
    join = node.parent
    if isinstance(join, exp.Join) and join.side and not join.args.get("on"):
        join.set("on", exp.true())  # LEFT JOIN UNNEST(...): a row of NULLs for an empty array
    return subquery


def _star_over(node: exp.Unnest, name: str) -> bool:
    """Whether the SELECT that reads `UNNEST(...) AS name` has `*` or `name.*`. A bare `name`
    there too is refused: the subquery's row is not NULL for a NULL element, as BigQuery's is."""
    select = node.find_ancestor(exp.Select)
    if select is None:
        return False
    star = any(
        isinstance(item, exp.Star)
        or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star)
            and item.table.lower() == name.lower())
        for item in select.expressions
    )  # fmt: skip
    if star and any(
        not column.table and column.name.lower() == name.lower()
        for column in select.find_all(exp.Column)
    ):
        raise not_supported(f"SELECT * beside the whole UNNEST element {name} (name its fields)")
    return star


def _unnest_with_offset(node: exp.Unnest) -> exp.Expression | None:
    """WITH OFFSET counts from 0 (DuckDB's WITH ORDINALITY from 1): the element and its
    subscript, unnested side by side (a correlated array joins laterally, as in BigQuery)."""
    offset = node.args.get("offset")
    if not offset:
        return None
    alias = node.args.get("alias")
    columns = alias.columns if alias else []
    if len(columns) != 1 or len(node.expressions) != 1:
        raise not_supported("UNNEST ... WITH OFFSET without an alias for the element")
    element = quote(columns[0].name)
    offset_name = quote(offset.name if isinstance(offset, exp.Identifier) else "offset")
    subquery = duck(
        f"(SELECT UNNEST({{a}}) AS {element}, GENERATE_SUBSCRIPTS({{a}}, 1) - 1 AS {offset_name})",
        a=node.expressions[0],
    )
    subquery.set("alias", exp.TableAlias(this=exp.to_identifier(f"_bq_{columns[0].name}")))
    return subquery


# -- aggregates ------------------------------------------------------------------------------------
def _aggregate_with_limit(node: exp.Expression) -> exp.Expression | None:
    """STRING_AGG / ARRAY_AGG ([DISTINCT] ... ORDER BY ... LIMIT n): DuckDB has no LIMIT there;
    the aggregated list is sliced instead."""
    limited = node.this
    if not isinstance(limited, exp.Limit):
        return None
    ordered = limited.this
    value = ordered.this if isinstance(ordered, exp.Order) else ordered
    distinct = ""
    if isinstance(value, exp.Distinct):
        distinct, value = "DISTINCT ", value.expressions[0]
    order = ""
    if isinstance(ordered, exp.Order):
        order = " ORDER BY " + ", ".join(o.sql(dialect="duckdb") for o in ordered.expressions)
    limit = limited.expression
    if isinstance(node, exp.GroupConcat):
        separator = node.args.get("separator") or exp.Literal.string(",")
        return duck(
            f"CASE WHEN COUNT({{v}}) = 0 THEN NULL ELSE array_to_string(list_slice("
            f"list({distinct}{{v}}{order}) FILTER (WHERE ({{v}}) IS NOT NULL), 1, {{n}}), "
            f"{{s}}) END",
            v=value,
            n=limit,
            s=separator,
        )
    ignore_nulls = isinstance(node.parent, exp.IgnoreNulls)
    keep = " FILTER (WHERE ({v}) IS NOT NULL)" if ignore_nulls else ""
    sliced = duck(
        f"list_slice(array_agg({distinct}{{v}}{order}){keep}, 1, {{n}})", v=value, n=limit
    )
    if ignore_nulls:  # the IGNORE NULLS around the call is now the FILTER
        node.parent.replace(sliced)
        return None
    return sliced


def _approx_quantiles(node: exp.ApproxQuantiles) -> exp.Expression:
    """BigQuery's quantile boundaries are exact on inputs this small; DuckDB's approx_quantile
    (a t-digest) interpolates, so the exact nearest-rank quantiles are used."""
    count = node.expression
    if not (isinstance(count, exp.Literal) and count.is_int and int(count.this) > 0):
        raise not_supported("APPROX_QUANTILES with a number of quantiles that is not a literal")
    n = int(count.this)
    fractions = ", ".join(repr(i / n) for i in range(n + 1))
    return duck(f"quantile_disc({{x}}, [{fractions}])", x=node.this)


# -- SAFE. prefix ----------------------------------------------------------------------------------
def _safe_prefix(node: exp.SafeFunc) -> exp.Expression:
    """SAFE.f(args): NULL where f itself fails. DuckDB's TRY would also swallow an error in
    an argument, so arguments must be plain values."""
    if any(may_fail(arg) for arg in node.this.iter_expressions()):
        raise not_supported("SAFE. with an argument that can fail")
    if isinstance(node.this, exp.Anonymous) and node.this.name.startswith("bq_"):
        # DuckDB's TRY cannot catch the error() these macros raise.
        raise not_supported(f"SAFE. on {node.this.name[3:].upper()}")
    if "error(" in node.this.sql(dialect="duckdb").lower():
        raise not_supported("SAFE. on a function that raises BigQuery's errors locally")
    return call("TRY", node.this)


# -- result shape ----------------------------------------------------------------------------------
def name_columns(statement: exp.Expression) -> None:
    """Unnamed result columns are f0_, f1_, ... (counted over the unnamed ones); a bare NULL is
    INT64 as in BigQuery."""
    for select in statement.find_all(exp.Select):
        if select.args.get("kind") == "STRUCT":
            _name_struct_columns(statement, select)
            continue
        unnamed = 0
        for index, projection in enumerate(select.expressions):
            target = projection.this if isinstance(projection, exp.Alias) else projection
            if isinstance(target, exp.Null):
                target.replace(exp.cast(exp.null(), "BIGINT"))
                projection = select.expressions[index]
            if isinstance(projection, exp.Dot):  # STRUCT(...).a, arr[OFFSET(0)].a: named `a`
                select.expressions[index] = exp.alias_(projection, projection.name)
                continue
            if isinstance(projection, (exp.Alias, exp.Column, exp.Star)):
                continue
            select.expressions[index] = exp.alias_(projection, f"f{unnamed}_")
            unnamed += 1
        select.set("expressions", select.expressions)


def _name_struct_columns(statement: exp.Expression, select: exp.Select) -> None:
    """SELECT AS STRUCT makes its columns the fields of one STRUCT: an unnamed one is an
    anonymous field, `_field_N` by its position as in STRUCT(1, 2), not a column's f0_. As the
    query's own result (a value table), DuckDB answers one column named after its struct_pack
    call, where BigQuery gives the value table's row type: refused."""
    if _is_result(statement, select):
        raise not_supported("SELECT AS STRUCT as the query's result; select the columns plainly")
    for index, projection in enumerate(select.expressions):
        if not isinstance(projection, (exp.Alias, exp.Column, exp.Star, exp.Dot)):
            select.expressions[index] = exp.alias_(projection, f"_field_{index + 1}")
    select.set("expressions", select.expressions)


def _is_result(statement: exp.Expression, select: exp.Select) -> bool:
    """Whether `select` gives the statement's rows: the statement, or a branch of its set
    operations."""
    node: exp.Expression = select
    while node is not statement:
        parent = node.parent
        if not isinstance(parent, (exp.SetOperation, exp.Subquery)) or parent is None:
            return False
        node = parent
    return True


def _unpivot_order(table: exp.Expression) -> None:
    """BigQuery's UNPIVOT puts the value column(s) after the other columns and before the name
    column; DuckDB puts the name column first: the unpivoted source is wrapped to reorder."""
    pivots = table.args.get("pivots") or []
    if len(pivots) != 1 or not pivots[0].args.get("unpivot"):
        return
    pivot = pivots[0]
    fields = pivot.args.get("fields") or []
    if len(fields) != 1 or not isinstance(fields[0], exp.In):
        raise not_supported("this UNPIVOT form")
    name = fields[0].this.name
    values = [v.name for v in pivot.expressions]
    alias = pivot.args.get("alias")
    pivot.set("alias", None)
    moved = [name, *values]
    columns = ", ".join(quote(c) for c in [*values, name])
    select = sqlglot.parse_one(
        f"SELECT * EXCLUDE ({', '.join(quote(c) for c in moved)}), {columns} FROM _bq_source",
        read="duckdb",
    )
    select.set("from_", exp.From(this=table.copy()))
    table.replace(
        exp.Subquery(
            this=select, alias=alias or exp.TableAlias(this=exp.to_identifier("_bq_unpivot"))
        )
    )


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _normalize(node: exp.Normalize) -> exp.Expression:
    """NORMALIZE / NORMALIZE_AND_CASEFOLD(value[, NFC | NFKC | NFD | NFKD]), NFC by default."""
    form = node.args.get("form") or None  # sqlglot writes False for a missing mode
    mode = (form.name if isinstance(form, (exp.Var, exp.Column)) else "NFC").upper()
    name = "NORMALIZE_AND_CASEFOLD" if node.args.get("is_casefold") else "NORMALIZE"
    if form is not None and not isinstance(form, (exp.Var, exp.Column)):
        raise QueryError(f"{name}: the normalization mode must be NFC, NFKC, NFD or NFKD")
    if mode not in udfs.NORMALIZATION_MODES:
        raise QueryError(f"Unrecognized name: {mode}; {name} takes NFC, NFKC, NFD or NFKD")
    return call(f"bq_{name.lower()}", node.this, exp.Literal.string(mode))


# -- NET (sql.py names a `NET.X(...)` call "NET.X") -----------------------------------------------
NET_FUNCTIONS = [name.removeprefix("NET.") for name in functions.NET.split()]


def _net_call(name: str) -> Callable[[exp.Anonymous], exp.Expression]:
    return lambda node: call(f"bq_net_{name.lower()}", *node.expressions)


# -- approximate aggregates -----------------------------------------------------------------------
def _approx_top(node: exp.ApproxTopK | exp.ApproxTopSum) -> exp.Expression:
    if isinstance(node, exp.ApproxTopSum):
        value, weight, number = node.this, node.expression, node.args["count"]
        pairs = exp.Struct(
            expressions=[
                exp.PropertyEQ(this=exp.to_identifier("v"), expression=value),
                exp.PropertyEQ(this=exp.to_identifier("w"), expression=weight),
            ]
        )
        name, values = "APPROX_TOP_SUM", call("bq_top_sum", call("list", pairs), number)
    else:
        name, number = "APPROX_TOP_COUNT", node.expression
        values = call("bq_top_count", call("list", node.this), number)
    if not (isinstance(number, exp.Literal) and number.is_int and int(number.this) > 0):
        raise QueryError(f"{name}: the number of results must be a positive INT64 literal")
    return values


def _hll_init(node: exp.Anonymous) -> exp.Expression:
    """HLL_COUNT.INIT(input [, precision]): an aggregate of the group's values (udfs.py)."""
    value, *rest = node.expressions
    precision = rest[0] if rest else exp.Literal.number(15)
    values = call("list", value)
    kind = call("typeof", values.copy())
    return call("bq_hll_init", call("bq_hll_values", values), kind, precision)


HLL_COUNT = {
    "HLL_COUNT.INIT": _hll_init,
    "HLL_COUNT.MERGE": lambda n: call("bq_hll_merge", call("list", *n.expressions)),
    "HLL_COUNT.MERGE_PARTIAL": lambda n: call("bq_hll_merge_partial", call("list", *n.expressions)),
    # HLL_COUNT.EXTRACT(NULL) is 0, as BigQuery documents.
    "HLL_COUNT.EXTRACT": lambda n: exp.Coalesce(
        this=call("bq_hll_extract", *n.expressions), expressions=[exp.Literal.number(0)]
    ),
}


# -- GEOGRAPHY (geography.py) ---------------------------------------------------------------------
# name -> (arguments, BigQuery's signature); a trailing `use_spheroid` is taken where BigQuery
# takes it, and only as FALSE (its default): TRUE measures on the WGS84 spheroid.
GEOGRAPHY_SIGNATURES = {
    "ST_GEOGPOINT": (2, "ST_GEOGPOINT(FLOAT64, FLOAT64)"),
    "ST_GEOGFROMTEXT": (1, "ST_GEOGFROMTEXT(STRING)"),
    "ST_GEOGFROMGEOJSON": (1, "ST_GEOGFROMGEOJSON(STRING)"),
    "ST_ASTEXT": (1, "ST_ASTEXT(GEOGRAPHY)"),
    "ST_X": (1, "ST_X(GEOGRAPHY)"),
    "ST_Y": (1, "ST_Y(GEOGRAPHY)"),
    "ST_DISTANCE": (2, "ST_DISTANCE(GEOGRAPHY, GEOGRAPHY[, BOOL])"),
    "ST_DWITHIN": (3, "ST_DWITHIN(GEOGRAPHY, GEOGRAPHY, FLOAT64[, BOOL])"),
    "ST_CONTAINS": (2, "ST_CONTAINS(GEOGRAPHY, GEOGRAPHY)"),
    "ST_INTERSECTS": (2, "ST_INTERSECTS(GEOGRAPHY, GEOGRAPHY)"),
    "ST_EQUALS": (2, "ST_EQUALS(GEOGRAPHY, GEOGRAPHY)"),
    "ST_AREA": (1, "ST_AREA(GEOGRAPHY[, BOOL])"),
    "ST_LENGTH": (1, "ST_LENGTH(GEOGRAPHY[, BOOL])"),
}
USE_SPHEROID = {"ST_DISTANCE", "ST_DWITHIN", "ST_AREA", "ST_LENGTH"}


def _geography_call(name: str) -> Callable[[exp.Expression], exp.Expression]:
    count, signature = GEOGRAPHY_SIGNATURES[name]

    def rewrite_call(node: exp.Expression) -> exp.Expression:
        arguments = list(node.expressions) if isinstance(node, exp.Anonymous) else [
            node.this, node.expression, *([node.args["use_spheroid"]]
                                          if node.args.get("use_spheroid") else [])]  # fmt: skip
        for argument in arguments:
            if isinstance(argument, exp.Kwarg):  # oriented =>, planar =>, make_valid =>
                raise not_supported(f"{name} with {argument.this.name} =>")
        if name in USE_SPHEROID and len(arguments) == count + 1:
            _use_spheroid(name, arguments.pop())
        if len(arguments) != count:
            raise QueryError(
                f"No matching signature for function {name}. Supported signature: {signature}"
            )
        return call(f"bq_{name.lower()}", *arguments)

    return rewrite_call


def _use_spheroid(name: str, flag: exp.Expression) -> None:
    if isinstance(flag, exp.Boolean) and not flag.this:
        return
    if name == "ST_DISTANCE":
        raise not_supported("ST_DISTANCE with use_spheroid (the WGS84 spheroid)")
    raise QueryError(f"{name}: use_spheroid supports only the value FALSE")


GEOGRAPHY = {name: _geography_call(name) for name in GEOGRAPHY_SIGNATURES}


ANONYMOUS = {
    "IEEE_DIVIDE": lambda n: call("bq_ieee_divide", *n.expressions),
    **GEOGRAPHY,
    **{f"NET.{name}": _net_call(name) for name in NET_FUNCTIONS},
    **HLL_COUNT,
}


def _anonymous(node: exp.Anonymous) -> exp.Expression | None:
    rewrite_call = ANONYMOUS.get(node.name.upper())
    return rewrite_call(node) if rewrite_call else None


# -- JSON ------------------------------------------------------------------------------------------
def _json_extract(node: exp.Expression) -> exp.Expression:
    """JSON_QUERY / JSON_EXTRACT give JSON for a JSON value and STRING for a STRING: the type
    must be known from the query text (a column's type is not)."""
    kind = static_type(node.this)
    if kind not in (None, "STRING", "JSON"):
        name = node.sql(dialect="bigquery").split("(")[0]
        raise QueryError(f"No matching signature for function {name} for argument types: {kind}")
    if kind is None:
        raise not_supported(
            f"{node.sql(dialect='bigquery').split('(')[0]} of a value whose type the query does"
            " not state (a column of a subquery, CTE or UNNEST); wrap it in PARSE_JSON(...)"
            " or CAST(... AS STRING)"
        )
    path = node.expression.sql(dialect="duckdb")
    if isinstance(node, exp.JSONExtractArray):  # NULL unless the path selects an array
        found = f"json_extract({{x}}, {path})"
        # Invalid JSON text is NULL too (the page's JSON_EXTRACT_ARRAY examples).
        items = (
            f"CASE WHEN json_valid({{x}}) AND json_type({found}) = 'ARRAY'"
            f" THEN CAST({found} AS JSON[]) END"
        )
        if kind == "JSON":
            return duck(items, x=node.this)
        return duck(f"[CAST(e AS VARCHAR) FOR e IN {items}]", x=node.this)
    if kind == "JSON":
        return duck(f"CAST(json_extract({{x}}, {path}) AS JSON)", x=node.this)
    # From a STRING, a JSON null at the path is SQL NULL, not the text 'null' (the page's
    # JSON_EXTRACT('{"a": null}', "$.a") example); from JSON it stays JSON 'null'.
    found = f"json_extract({{x}}, {path})"
    return duck(
        f"CASE WHEN json_type({found}) <> 'NULL' THEN CAST({found} AS VARCHAR) END", x=node.this
    )


def _json_value_array(node: exp.JSONValueArray) -> exp.Expression:
    """JSON_VALUE_ARRAY / JSON_EXTRACT_STRING_ARRAY: the array's scalars as STRINGs (a JSON
    null as NULL). NULL for invalid JSON text, a path that selects no array, or an array with
    an object or array in it (the page's examples); sqlglot's cast to VARCHAR[] answered the
    objects' text."""
    found = f"json_extract({{x}}, {node.expression.sql(dialect='duckdb')})"
    items = f"CAST({found} AS JSON[])"
    return duck(
        f"CASE WHEN json_valid({{x}}) THEN CASE WHEN json_type({found}) = 'ARRAY'"
        f" AND len([e FOR e IN {items} IF json_type(e) IN ('OBJECT', 'ARRAY')]) = 0"
        f" THEN [json_extract_string(e, '$') FOR e IN {items}] END END",
        x=node.this,
    )


def _to_json(node: exp.JSONFormat) -> exp.Expression:
    """TO_JSON returns JSON; TO_JSON_STRING a STRING, both compact."""
    if node.args.get("options") is not None:
        raise not_supported("TO_JSON_STRING with pretty_print")
    value = call("bq_no_interval", node.this, exp.Literal.string("TO_JSON"))
    if node.args.get("to_json"):
        return duck("CAST(to_json({x}) AS JSON)", x=value)
    return duck("CAST(to_json({x}) AS VARCHAR)", x=value)


def _json_argument(node: exp.Func, name: str) -> exp.Expression:
    kind = static_type(node.this)
    if kind not in (None, "JSON"):
        raise not_supported(f"{name} of a {kind} value (JSON only)")
    return call("bq_require_json", node.this, exp.Literal.string(name))


def _keyword(node: exp.Expression | None, name: str, default: exp.Expression) -> exp.Expression:
    """A named argument (`name => value`) of a JSON function, or its default."""
    if node is None:
        return default
    if not isinstance(node, exp.Kwarg) or node.this.name.lower() != name:
        raise QueryError(f"Unexpected argument {node.sql(dialect='bigquery')}; expected {name}")
    return node.expression


def _json_keys(node: exp.JSONKeysAtDepth) -> exp.Expression:
    depth = node.args.get("expression")
    if isinstance(depth, exp.Kwarg) or node.args.get("mode") is not None:
        raise not_supported("JSON_KEYS with a mode")
    depth = depth if depth is not None else exp.Literal.number(2**62)
    return call("bq_json_keys", _json_argument(node, "JSON_KEYS"), depth)


def _json_set(node: exp.JSONSet) -> exp.Expression:
    arguments = list(node.expressions)
    create = exp.true()
    if arguments and isinstance(arguments[-1], exp.Kwarg):
        create = _keyword(arguments.pop(), "create_if_missing", create)
    if len(arguments) % 2:
        raise QueryError("JSON_SET takes pairs of a JSONPath and a value")
    pairs = []
    for path, value in zip(arguments[::2], arguments[1::2], strict=True):
        pairs += [path, duck("CAST(to_json({v}) AS VARCHAR)", v=value)]
    return call(
        "bq_json_set", _json_argument(node, "JSON_SET"), exp.Array(expressions=pairs), create
    )


def _json_remove(node: exp.JSONRemove) -> exp.Expression:
    paths = exp.Array(expressions=list(node.expressions))
    return call("bq_json_remove", _json_argument(node, "JSON_REMOVE"), paths)


def _json_strip_nulls(node: exp.JSONStripNulls) -> exp.Expression:
    path = node.args.get("expression") or exp.Literal.string("$")
    arrays = _keyword(node.args.get("include_arrays"), "include_arrays", exp.true())
    empty = _keyword(node.args.get("remove_empty"), "remove_empty", exp.false())
    argument = _json_argument(node, "JSON_STRIP_NULLS")
    return call("bq_json_strip_nulls", argument, path, arrays, empty)


def _json_float64(node: exp.Float64) -> exp.Expression:
    mode = _keyword(node.args.get("expression"), "wide_number_mode", exp.Literal.string("exact"))
    return call("bq_json_float64", _json_argument(node, "FLOAT64"), mode)


def _json_string(node: exp.String) -> exp.Expression:
    if node.args.get("zone") is not None:
        raise not_supported("STRING of a TIMESTAMP")
    return call("bq_json_string", _json_argument(node, "STRING"))


def _json_conversion(name: str) -> Callable[[exp.Func], exp.Expression]:
    return lambda node: call(f"bq_{name.lower()}", _json_argument(node, name.upper()))


# -- the rewrite table -----------------------------------------------------------------------------
REWRITES: dict[type[exp.Expression], Callable[..., exp.Expression | None]] = {
    # conversion
    exp.Cast: _cast,
    exp.TryCast: _cast,
    # mathematical
    exp.Div: _div,
    exp.Mod: _mod,
    exp.IntDiv: _int_div,
    exp.SafeAdd: _safe_arithmetic,
    exp.SafeSubtract: _safe_arithmetic,
    exp.SafeMultiply: _safe_arithmetic,
    exp.SafeNegate: _safe_arithmetic,
    exp.Ln: lambda n: call("bq_ln", n.this),
    exp.Sqrt: lambda n: call("bq_sqrt", n.this),
    exp.Mul: _mul,
    exp.Log: _log,
    exp.Acos: _inverse_trigonometry,
    exp.Asin: _inverse_trigonometry,
    exp.Acosh: _inverse_trigonometry,
    exp.Atanh: _inverse_trigonometry,
    exp.Pow: _pow,
    exp.Round: lambda n: call("bq_as_ceil_type", n.this.copy(), n.copy()),
    exp.Trunc: lambda n: call("bq_as_ceil_type", n.this.copy(), n.copy()),
    # SIGN keeps its argument's type (DuckDB's is TINYINT).
    exp.Sign: lambda n: duck("CASE WHEN FALSE THEN {x} ELSE sign({x}) END", x=n.this),
    exp.RangeBucket: lambda n: call("bq_range_bucket", n.this, n.expression),
    # strings
    exp.Format: _format,
    exp.Concat: _concat,
    exp.StrPosition: _instr,
    exp.ByteLength: lambda n: call("bq_byte_length", n.this),
    exp.Normalize: _normalize,
    exp.ToBase32: lambda n: call("bq_to_base32", n.this),
    # sqlglot's INITCAP puts the delimiters in a regex class unescaped ('' is "missing ]").
    # Its parser fills in BigQuery's default delimiters when the call has none.
    exp.Initcap: lambda n: call("bq_initcap", n.this, n.expression),
    exp.FromBase32: lambda n: call("bq_from_base32", n.this),
    exp.Chr: lambda n: duck("CASE WHEN ({x}) = 0 THEN '' ELSE chr({x}) END", x=n.expressions[0]),
    # date and time
    exp.Extract: _extract,
    exp.DateFromUnixDate: _date_from_unix_date,
    **dict.fromkeys(LITERAL_COERCED_TO, _coerce_string_literal),
    exp.CurrentDatetime: lambda n: duck("CAST(current_timestamp AS TIMESTAMP)"),
    exp.CurrentTime: lambda n: duck("CAST(CAST(current_timestamp AS TIMESTAMP) AS TIME)"),
    exp.TimestampDiff: _timestamp_diff,
    # intervals (intervals.py)
    exp.Interval: intervals.literal,
    exp.MakeInterval: intervals.make_interval_call,
    exp.JustifyDays: intervals.justify("justify_days"),
    exp.JustifyHours: intervals.justify("justify_hours"),
    exp.JustifyInterval: intervals.justify("justify_interval"),
    exp.Add: lambda n: intervals.addition(n, static_type),
    exp.Sub: lambda n: intervals.subtraction(n, static_type),
    exp.UnixToTime: _unix_to_time,
    exp.TimeToStr: format_call,
    exp.StrToTime: parse_call,
    exp.StrToDate: parse_call,
    exp.ParseDatetime: parse_call,
    exp.ParseTime: parse_call,
    # arrays
    exp.Bracket: _bracket,
    exp.ArraySlice: lambda n: call("bq_array_slice", n.this, n.args["start"], n.args["end"]),
    exp.GenerateTimestampArray: lambda n: duck("CAST({x} AS TIMESTAMPTZ[])", x=n),
    exp.Unnest: _unnest,
    # aggregates
    exp.CountIf: lambda n: duck("COUNT(CASE WHEN {x} THEN 1 END)", x=n.this),
    exp.GroupConcat: _aggregate_with_limit,
    exp.Avg: _avg,
    exp.ApproxQuantiles: _approx_quantiles,
    exp.ApproxTopK: _approx_top,
    exp.ApproxTopSum: _approx_top,
    exp.ArrayAgg: _aggregate_with_limit,
    # JSON
    exp.JSONExtract: _json_extract,
    exp.JSONExtractArray: _json_extract,
    exp.JSONValueArray: _json_value_array,
    exp.JSONType: lambda n: call("bq_json_type", n.this),
    exp.JSONFormat: _to_json,
    exp.JSONKeysAtDepth: _json_keys,
    exp.JSONSet: _json_set,
    exp.JSONRemove: _json_remove,
    exp.JSONStripNulls: _json_strip_nulls,
    exp.Int64: lambda n: call("bq_json_int64", _json_argument(n, "INT64")),
    exp.Float64: _json_float64,
    exp.JSONBool: lambda n: call("bq_json_bool", _json_argument(n, "BOOL")),
    exp.String: _json_string,
    exp.LaxBool: _json_conversion("LAX_BOOL"),
    exp.LaxInt64: _json_conversion("LAX_INT64"),
    exp.LaxFloat64: _json_conversion("LAX_FLOAT64"),
    exp.LaxString: _json_conversion("LAX_STRING"),
    # geography
    exp.StDistance: GEOGRAPHY["ST_DISTANCE"],
    # SAFE.
    exp.SafeFunc: _safe_prefix,
    exp.Anonymous: _anonymous,
}


ARITHMETIC = (
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.IntDiv,
    exp.Mod,
    exp.BitwiseAnd,
    exp.BitwiseOr,
    exp.BitwiseXor,
    exp.BitwiseNot,
    exp.BitwiseLeftShift,
    exp.BitwiseRightShift,
    exp.BitwiseCount,
)
INT64_MAX = 2**63 - 1


def widen_integer_literals(statement: exp.Expression) -> None:
    """Integer literals are INT64 in GoogleSQL, INTEGER (32 bits) in DuckDB: as operands of
    arithmetic they are cast, so 100000 * 100000 is 10000000000, not an INT32 overflow."""
    for node in list(statement.find_all(*ARITHMETIC)):
        operands = [node.this, node.args.get("expression")]
        operands += [o.this for o in operands if isinstance(o, exp.Neg)]  # x + -5
        for operand in operands:
            if (
                isinstance(operand, exp.Literal)
                and operand.is_int
                and int(operand.this) <= INT64_MAX
            ):
                operand.replace(exp.cast(operand.copy(), "BIGINT"))


def date_day_arithmetic(statement: exp.Expression) -> None:
    """`date + n`, `n + date` and `date - n` add or take n days (BigQuery's date arithmetics
    operators). DuckDB adds an INTEGER to a DATE but has no DATE + BIGINT, which INT64 is, so
    the day count is cast to INTEGER (a count beyond its range is beyond DATE's too)."""
    for node in list(statement.find_all(exp.Add, exp.Sub)):
        pairs = [(node.this, node.expression)]
        if isinstance(node, exp.Add):
            pairs.append((node.expression, node.this))
        for date, days in pairs:
            if _is_date(date) and _is_int64(days):
                days.replace(exp.cast(days.copy(), "INT"))
                break


def _is_date(node: exp.Expression) -> bool:
    if isinstance(node, exp.Cast):
        return node.to.is_type(exp.DataType.Type.DATE)
    if isinstance(node, exp.Column):
        return COLUMN_TYPE.get()(node) == "DATE"
    return isinstance(node, (exp.CurrentDate, exp.DateFromParts))


def _is_int64(node: exp.Expression) -> bool:
    if isinstance(node, exp.Neg):
        node = node.this
    return (isinstance(node, exp.Literal) and node.is_int) or static_type(node) == "INT64"


def name_struct_fields(statement: exp.Expression) -> None:
    """An unnamed STRUCT field is `_field_1`, `_field_2`, ... in BigQuery (DuckDB: `_0`, ...),
    unless the struct's context names it by position: `STRUCT<a INT64, b INT64>(1, 3)`,
    `ARRAY<STRUCT<a INT64, b INT64>>[STRUCT(1, 3)]`, or `[STRUCT(1 AS a, 3 AS b), STRUCT(2, 3)]`
    (an array's elements are coerced to one struct type, the first named one's). DuckDB matches
    struct fields by name, so leaving `_field_N` there made `s.a` NULL for such elements."""
    for struct in list(statement.find_all(exp.Struct)):
        fields = struct.expressions
        if _has_named_fields(struct):
            continue
        names = _positional_names(struct) or []
        if names and len(names) != len(fields):
            raise QueryError(
                f"Struct of {len(fields)} fields cannot be coerced to STRUCT<"
                f"{', '.join(names)}> ({len(names)} fields)"
            )
        names = names or [f"_field_{i}" for i in range(1, len(fields) + 1)]
        named = [
            exp.PropertyEQ(this=exp.to_identifier(name), expression=f.copy())
            for name, f in zip(names, fields, strict=True)
        ]
        struct.set("expressions", named)


def align_struct_elements(statement: exp.Expression) -> None:
    """`[STRUCT(1 AS a, 3 AS b), STRUCT(2 AS x, 3 AS y)]`: BigQuery coerces an array's struct
    elements to one type, by position, with the first element's field names. DuckDB matches
    struct fields by name, so the second element's `a` and `b` were NULL and a SUM(a * b) over
    its UNNEST answered 3 for BigQuery's 9: each later element is renamed by position."""
    for array in list(statement.find_all(exp.Array)):
        structs = [e for e in array.expressions if isinstance(e, exp.Struct)]
        if len(structs) < 2 or len(structs) != len(array.expressions):
            continue
        names = _field_names(structs[0])
        if names is None:
            continue
        for struct in structs[1:]:
            own = _field_names(struct)
            if own is None or own == names:
                continue
            if len(own) != len(names):
                raise QueryError(
                    f"Array elements of types STRUCT<{', '.join(names)}> and "
                    f"STRUCT<{', '.join(own)}> do not have a common supertype"
                )
            struct.set(
                "expressions",
                [
                    exp.PropertyEQ(this=exp.to_identifier(name), expression=_field_value(f))
                    for name, f in zip(names, struct.expressions, strict=True)
                ],
            )


def _field_names(struct: exp.Struct) -> list[str] | None:
    """The field names of a STRUCT(... AS name) whose every field is named, else None."""
    names = []
    for f in struct.expressions:
        if isinstance(f, exp.PropertyEQ):
            names.append(f.this.name)
        elif isinstance(f, exp.Alias):
            names.append(f.alias)
        else:
            return None
    return names


def _field_value(f: exp.Expression) -> exp.Expression:
    return (f.expression if isinstance(f, exp.PropertyEQ) else f.this).copy()


def _has_named_fields(struct: exp.Struct) -> bool:
    return any(isinstance(f, (exp.PropertyEQ, exp.Alias)) for f in struct.expressions)


def _struct_type_names(kind: exp.Expression | None) -> list[str] | None:
    if isinstance(kind, exp.DataType) and kind.this == exp.DataType.Type.STRUCT:
        names = [column.name for column in kind.expressions if isinstance(column, exp.ColumnDef)]
        return names if len(names) == len(kind.expressions) else None
    return None


def _positional_names(struct: exp.Struct) -> list[str] | None:
    """The field names an unnamed STRUCT takes from where it stands, or None."""
    parent = struct.parent
    if isinstance(parent, exp.Cast):
        return _struct_type_names(parent.args.get("to"))
    if not isinstance(parent, exp.Array):
        return None
    array_type = parent.parent.args.get("to") if isinstance(parent.parent, exp.Cast) else None
    if isinstance(array_type, exp.DataType) and array_type.this == exp.DataType.Type.ARRAY:
        return _struct_type_names(array_type.expressions[0] if array_type.expressions else None)
    for element in parent.expressions:
        typed = isinstance(element, exp.Cast) and _struct_type_names(element.args.get("to"))
        if typed:
            return typed
        if isinstance(element, exp.Struct) and _has_named_fields(element):
            return [
                f.this.name if isinstance(f, exp.PropertyEQ) else f.alias
                for f in element.expressions
            ]
    return None


def using_columns_first(statement: exp.Expression) -> None:
    """`SELECT *` over `JOIN ... USING (k)` lists k first on BigQuery (DuckDB: where the left
    side has it)."""
    for select in list(statement.find_all(exp.Select)):
        using = [j.args.get("using") for j in select.args.get("joins") or [] if j.args.get("using")]
        if not using:
            continue
        stars = [p for p in select.expressions if isinstance(p, exp.Star)]
        if not stars:
            continue
        if (
            len(using) > 1
            or len(select.expressions) > 1
            or stars[0].args.get("except_")
            or (stars[0].args.get("replace"))
        ):
            raise not_supported("SELECT * over several JOIN ... USING, or with EXCEPT/REPLACE")
        keys = [exp.column(key.name) for key in using[0]]
        star = exp.Star(except_=[key.copy() for key in keys])
        select.set("expressions", [*keys, star])


def positional_structs(statement: exp.Expression) -> None:
    """INSERT ... VALUES (STRUCT(1.5, 'a')) fills a STRUCT column by position, as BigQuery
    does: DuckDB casts an unnamed ROW by position (its named {'_0': ...} by name)."""
    if not isinstance(statement, exp.Insert):
        return
    for values in statement.find_all(exp.Values):
        for struct in list(values.find_all(exp.Struct)):
            if not any(isinstance(e, (exp.PropertyEQ, exp.Alias)) for e in struct.expressions):
                struct.replace(call("row", *struct.expressions))


def rewrite(
    statement: exp.Expression, column_type: Callable[[exp.Column], str | None] | None = None
) -> exp.Expression:
    """Applies REWRITES bottom-up (arguments before the call that holds them)."""
    token = COLUMN_TYPE.set(column_type or (lambda column: None))
    try:
        return _rewrite(statement)
    finally:
        COLUMN_TYPE.reset(token)


def _rewrite(statement: exp.Expression) -> exp.Expression:
    positional_structs(statement)
    name_struct_fields(statement)
    align_struct_elements(statement)
    using_columns_first(statement)
    date_day_arithmetic(statement)
    widen_integer_literals(statement)
    name_columns(statement)
    geography_checks.check(statement, static_type)
    for node in list(statement.find_all(exp.Pivot)):
        if node.args.get("unpivot") and node.parent is not None:
            _unpivot_order(node.parent)
    for node in reversed(list(statement.find_all(*REWRITES, bfs=False))):
        if isinstance(node, exp.SafeFunc):
            continue
        replacement = REWRITES[type(node)](node)
        if replacement is not None and replacement is not node:
            node.replace(replacement)
    for node in list(statement.find_all(exp.SafeFunc)):
        node.replace(_safe_prefix(node))
    return statement
