"""Units of the GoogleSQL translation: INSTR's search, the refusals the rewrites make on the
query text alone, and the types INFORMATION_SCHEMA.COLUMNS writes. Values are checked end to
end by tests/bigquery_conformance_test.py."""

from __future__ import annotations

import pytest

from vertexkit.local.bigquery.googlesql import instr
from vertexkit.local.bigquery.information_schema import data_type
from vertexkit.local.bigquery.sql import QueryError, translate

INSTR = {  # BigQuery's documented examples
    "first": (("banana", "an", 1, 1), 2),
    "second": (("banana", "an", 1, 2), 4),
    "third_missing": (("banana", "an", 1, 3), 0),
    "from_position": (("banana", "an", 3, 1), 4),
    "backwards": (("banana", "an", -1, 1), 4),
    "backwards_from_third_last": (("banana", "an", -3, 1), 4),
    "no_match": (("banana", "ann", 1, 1), 0),
    "overlapping": (("helloooo", "oo", 1, 2), 6),
}


@pytest.mark.parametrize(("args", "expected"), INSTR.values(), ids=INSTR.keys())
def test_instr(args: tuple, expected: int) -> None:
    assert instr(*args) == expected


@pytest.mark.parametrize("args", [("a", "a", 0, 1), ("a", "a", 1, 0)], ids=["zero", "occurrence"])
def test_instr_rejects_position_zero_and_occurrence_below_one(args: tuple) -> None:
    with pytest.raises(ValueError, match="INSTR"):
        instr(*args)


REFUSED = {
    "format_element": ("SELECT FORMAT_DATE('%J', CURRENT_DATE())", "format element %J"),
    "format_not_literal": ("SELECT FORMAT_DATE(x, CURRENT_DATE()) FROM t", "not a string literal"),
    "zone_offset": (
        "SELECT FORMAT_TIMESTAMP('%H', CURRENT_TIMESTAMP(), '+08:00')",
        "time zone '+08:00'",
    ),
    "json_query_of_column": ("SELECT JSON_QUERY(s, '$.a') FROM t", "JSON_QUERY of a value"),
    "bare_subscript": ("SELECT a[0] FROM t", "a subscript without OFFSET/ORDINAL"),
    "safe_over_failing_argument": ("SELECT SAFE.SUBSTR(s, 1 / 0) FROM t", "SAFE. with an argument"),
    "printf_t": ("SELECT FORMAT('%t', 1)", "FORMAT specifier %t"),
    "unnest_offset_without_alias": (
        "SELECT * FROM UNNEST([STRUCT(1 AS a)]) WITH OFFSET",
        "WITH OFFSET without an alias",
    ),
}


@pytest.mark.parametrize(("sql", "construct"), REFUSED.values(), ids=REFUSED.keys())
def test_refusals_name_the_construct(sql: str, construct: str) -> None:
    with pytest.raises(QueryError, match="not supported by the local BigQuery") as refused:
        translate(sql, "local-project", ("local-project", "ds"))
    assert construct in refused.value.message
    assert refused.value.reason == "invalidQuery"


DATA_TYPES = {
    "int64": ({"name": "a", "type": "INTEGER"}, "INT64"),
    "array": ({"name": "a", "type": "FLOAT", "mode": "REPEATED"}, "ARRAY<FLOAT64>"),
    "struct": (
        {"name": "a", "type": "RECORD", "fields": [
            {"name": "x", "type": "BOOLEAN"},
            {"name": "y", "type": "STRING", "mode": "REPEATED"},
        ]},
        "STRUCT<x BOOL, y ARRAY<STRING>>",
    ),
}  # fmt: skip


@pytest.mark.parametrize(("field", "expected"), DATA_TYPES.values(), ids=DATA_TYPES.keys())
def test_information_schema_data_type(field: dict, expected: str) -> None:
    assert data_type(field) == expected
