"""The GoogleSQL allow-list on the parsed tree: DuckDB-only functions, table functions and
statements are refused with BigQuery's answer; GoogleSQL functions translate."""

from __future__ import annotations

import pytest

from vertexkit.local.bigquery.functions import FAMILIES, GOOGLESQL_FUNCTIONS
from vertexkit.local.bigquery.sql import QueryError, translate

REFUSED = {
    "current_setting": (
        "SELECT current_setting('allowed_directories')",
        "Function not found: current_setting",
    ),
    "read_blob": ("SELECT * FROM read_blob('bigquery.duckdb')", "Function not found: read_blob"),
    "read_text": ("SELECT content FROM read_text('x.csv')", "Function not found: read_text"),
    "read_csv": ("SELECT * FROM read_csv('/etc/passwd')", "Function not found: read_csv"),
    "read_parquet": ("SELECT * FROM read_parquet('x')", "Function not found: read_parquet"),
    "read_json": ("SELECT * FROM read_json('x')", "Function not found: read_json"),
    "pragma_version": ("SELECT * FROM pragma_version()", "Function not found: pragma_version"),
    "duckdb_settings": ("SELECT * FROM duckdb_settings()", "Function not found: duckdb_settings"),
    "query_table_function": ("SELECT * FROM query('SELECT 1')", "Function not found: query"),
    "getvariable": ("SELECT getvariable('x')", "Function not found: getvariable"),
    "regexp_matches": ("SELECT regexp_matches('a', 'b')", "Function not found: regexp_matches"),
    "nested_in_where": (
        "SELECT 1 FROM UNNEST([1]) AS x WHERE length(current_setting('threads')) > 0",
        "Function not found: current_setting",
    ),
    "wrong_arguments": ("SELECT REGEXP_REPLACE('a', 'b')", "No matching signature"),
    "glob": ("SELECT * FROM glob('*')", "Syntax error"),
    "pragma": ("PRAGMA version", "not supported by the local BigQuery: statement PRAGMA"),
    "attach": ("ATTACH 'other.duckdb' AS other", "Syntax error"),
    "copy": ("COPY t TO 'out.csv'", "not supported by the local BigQuery: statement COPY"),
    "install": ("INSTALL httpfs", "not supported by the local BigQuery: statement INSTALL"),
    "load": ("LOAD httpfs", "not supported by the local BigQuery: statement LOAD"),
    "set": ("SET threads = 1", "not supported by the local BigQuery: statement SET"),
}

GOOGLESQL = {
    "math_and_conditional": "SELECT SAFE_DIVIDE(1, 2), IFNULL(NULL, 1), ROUND(2.5), MOD(5, 2)",
    "string": "SELECT SUBSTR('abc', 2), STRPOS('abc', 'b'), CONCAT('a', 'b'), SPLIT('a,b')",
    "safe_prefix": "SELECT SAFE.SUBSTR('abc', 2)",
    "date_time": (
        "SELECT DATE_DIFF(CURRENT_DATE(), DATE '2020-01-01', DAY), "
        "FORMAT_DATE('%Y', CURRENT_DATE()), TIMESTAMP_TRUNC(CURRENT_TIMESTAMP(), DAY), "
        "EXTRACT(YEAR FROM CURRENT_DATE())"
    ),
    "array_and_struct": (
        "SELECT ARRAY_LENGTH([1, 2]), [1, 2][OFFSET(0)], STRUCT(1 AS a), "
        "x FROM UNNEST(GENERATE_ARRAY(1, 3)) AS x"
    ),
    "aggregate_and_window": (
        "SELECT COUNTIF(x > 1), APPROX_QUANTILES(x, 4)[OFFSET(2)], STRING_AGG(CAST(x AS STRING)), "
        "ANY_VALUE(x) FROM UNNEST([1, 2, 3]) AS x"
    ),
    "window": "SELECT ROW_NUMBER() OVER (ORDER BY x), NTILE(2) OVER () FROM UNNEST([1, 2]) AS x",
    "hash_and_json": (
        "SELECT FARM_FINGERPRINT('a'), TO_JSON_STRING(STRUCT(1 AS a)), JSON_VALUE('{}', '$.a')"
    ),
    "case_and_cast": "SELECT CASE WHEN TRUE THEN CAST(1 AS STRING) END, SAFE_CAST('x' AS INT64)",
}


@pytest.mark.parametrize(("sql", "message"), REFUSED.values(), ids=REFUSED.keys())
def test_duckdb_surface_is_refused(sql: str, message: str) -> None:
    with pytest.raises(QueryError, match=message) as refused:
        translate(sql, "local-project", ("local-project", "ds"))
    assert refused.value.reason == "invalidQuery"


@pytest.mark.parametrize("sql", GOOGLESQL.values(), ids=GOOGLESQL.keys())
def test_googlesql_functions_translate(sql: str) -> None:
    assert translate(sql, "local-project").statement_type == "SELECT"


def test_every_name_is_listed_once_in_upper_case() -> None:
    names = [name for family in FAMILIES.values() for name in family.split()]
    assert len(names) == len(set(names)) == len(GOOGLESQL_FUNCTIONS)
    assert all(name == name.upper() for name in names)


# BigQuery's function reference: REGEXP_REPLACE(value, regexp, replacement),
# REPLACE(original_value, from_pattern, to_pattern), and SUBSTR(value, position[, length])
# have no shorter form; BigQuery answers "No matching signature".
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT REGEXP_REPLACE('a', 'b')",
        "SELECT REPLACE('a', 'b')",
        "SELECT SUBSTR('abc')",
    ],
)
def test_a_call_short_of_a_required_argument_is_refused(sql: str) -> None:
    with pytest.raises(QueryError, match="No matching signature for function"):
        translate(sql, "local-project")


def test_the_full_calls_still_run() -> None:
    for sql in ("SELECT REGEXP_REPLACE('a', 'b', 'c')", "SELECT SUBSTR('abc', 2)"):
        assert translate(sql, "local-project").sql
