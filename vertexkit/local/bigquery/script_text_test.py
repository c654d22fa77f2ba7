"""Splitting GoogleSQL scripts into statements and blocks."""

from __future__ import annotations

import pytest

from vertexkit.local.bigquery.query_error import QueryError
from vertexkit.local.bigquery.script_text import Block, If, Statement, is_script, parse


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT 1", False),
        ("SELECT 1;", False),
        ("SELECT ';' AS s -- ; a comment", False),
        ("SELECT 1; SELECT 2", True),
        ("DECLARE x INT64", True),
        ("BEGIN TRANSACTION", True),
        ("SELECT `a;b` FROM t /* ; */", False),
    ],
    ids=["one", "trailing_semicolon", "quoted_and_commented", "two", "declare", "begin", "names"],
)
def test_is_script(sql: str, expected: bool) -> None:
    assert is_script(sql) is expected


def test_blocks_and_branches_nest() -> None:
    script = (
        "DECLARE s STRING DEFAULT 'END IF; ELSE'; "
        "IF CASE WHEN s = 'x' THEN TRUE ELSE FALSE END THEN BEGIN SELECT 1; END; "
        "ELSEIF s IS NULL THEN SELECT CASE WHEN TRUE THEN 2 END; ELSE SELECT 3; END IF; SELECT 4"
    )
    assert parse(script) == [
        Statement("DECLARE s STRING DEFAULT 'END IF; ELSE'"),
        If(
            branches=[
                ("CASE WHEN s = 'x' THEN TRUE ELSE FALSE END", [Block([Statement("SELECT 1")])]),
                ("s IS NULL", [Statement("SELECT CASE WHEN TRUE THEN 2 END")]),
            ],
            otherwise=[Statement("SELECT 3")],
        ),
        Statement("SELECT 4"),
    ]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("IF TRUE THEN SELECT 1;", "Expected END but got end of script"),
        ("BEGIN SELECT 1;", "Expected END but got end of script"),
        ("IF TRUE SELECT 1; END IF", "Expected THEN"),
        ("IF TRUE THEN SELECT 1; END", "Expected IF but got end of script"),
        ("REPEAT SET x = 1; UNTIL TRUE END REPEAT", "not supported by the local BigQuery: REPEAT"),
        ("BEGIN SELECT 1; EXCEPTION WHEN ERROR THEN SELECT 2; END", "BEGIN ... EXCEPTION"),
    ],
    ids=["unclosed_if", "unclosed_block", "no_then", "end_without_if", "repeat", "exception"],
)
def test_malformed_or_unsupported_scripts_are_refused(sql: str, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        parse(sql)
