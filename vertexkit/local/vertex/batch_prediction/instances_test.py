"""Rows shaped into instances as Vertex's `instanceConfig` says, and rows refused per row."""

from __future__ import annotations

from typing import Any

import pytest

from vertexkit.local.vertex.batch_prediction.instances import (
    BadLine,
    InstanceConfig,
    RowError,
    csv_rows,
    jsonl_rows,
    shape,
)

ROW = {"id": "a", "x": 1.0, "y": 2}

SHAPED = {
    "jsonl-array-as-is": ([1, 2], {}, "jsonl", [1, 2], None),
    "jsonl-object-as-is": (ROW, {}, "jsonl", ROW, None),
    "bigquery-row-is-an-array": (ROW, {}, "bigquery", ["a", 1.0, 2], None),
    "bigquery-row-as-object": (ROW, {"instanceType": "object"}, "bigquery", ROW, None),
    "key-taken-out": (ROW, {"keyField": "id"}, "jsonl", {"x": 1.0, "y": 2}, "a"),
    "included-orders-array": (
        ROW, {"instanceType": "array", "includedFields": ["y", "x"]}, "jsonl", [2, 1.0], None
    ),
    "excluded-dropped": (ROW, {"excludedFields": ["id"]}, "bigquery", [1.0, 2], None),
}  # fmt: skip


@pytest.mark.parametrize(("row", "config", "fmt", "instance", "key"), SHAPED.values(), ids=SHAPED)
def test_shape(row: Any, config: dict, fmt: str, instance: Any, key: Any) -> None:
    shaped = shape(row, InstanceConfig.from_api(config), fmt)
    assert (shaped.instance, shaped.key) == (instance, key)


REFUSED = {
    "key-on-array-line": ([1, 2], {"keyField": "id"}, "instanceConfig"),
    "object-type-on-array": ([1, 2], {"instanceType": "object"}, "instanceConfig.instanceType"),
    "missing-key": ({"x": 1}, {"keyField": "id"}, "instanceConfig.keyField"),
    "missing-included": ({"x": 1}, {"includedFields": ["x", "z"]}, "instanceConfig.includedFields"),
    "object-line-as-array-unordered": ({"x": 1}, {"instanceType": "array"},
                                       "instanceConfig.includedFields"),
}  # fmt: skip


@pytest.mark.parametrize(("row", "config", "field"), REFUSED.values(), ids=REFUSED)
def test_rows_refused_name_the_field(row: Any, config: dict, field: str) -> None:
    with pytest.raises(RowError, match=field):
        shape(row, InstanceConfig.from_api(config), "jsonl")


def test_files_parse_row_by_row() -> None:
    assert jsonl_rows('[1]\n\n{"a": 2}\n') == [[1], {"a": 2}]
    [bad] = jsonl_rows("{oops\n")
    assert isinstance(bad, BadLine) and "line 1" in bad.message
    rows = csv_rows("a,b,c\n1,2.5,x\n1,2\n")
    assert rows[0] == {"a": 1, "b": 2.5, "c": "x"}
    assert isinstance(rows[1], BadLine) and "2 values" in rows[1].message
