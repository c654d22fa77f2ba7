"""A statement's rows as Arrow in one engine call, for the small results of anonymous queries.

DuckDB 2's relation API (`cursor.sql(text).to_arrow_table()`) parses and binds a statement in
Python-side steps of its own (parameter markers, a bind for the schema) and then runs it, which
parses and binds it again: 0.65 ms of a `SELECT 1` job's 1.2 ms of CPU
(`benchmarks/bigquery_small_query.py`). `duckdb._seam.submit` is the one call the relation layer
makes to run a statement, and it answers the names and types beside the rows: 0.33 ms. It is
private to the duckdb package, so it is reached only here; requirements.lock pins the version,
and a duckdb that changes it fails every query test at once, never silently.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa
from duckdb import _seam


def arrow_rows(
    cur: duckdb.DuckDBPyConnection, sql: str, params: Any
) -> tuple[pa.Table, list[str], list[duckdb.typing.DuckDBPyType]]:
    """Runs one SELECT with its parameter values (a list, a dict or None): its rows, as DuckDB's
    Arrow export writes them, with each column's name and DuckDB type."""
    result = _seam.submit(cur, sql, params or None, "arrow")
    names = [column[0] for column in result.description]
    kinds = [column[1] for column in result.description]
    return result.arrow_table(), names, kinds
