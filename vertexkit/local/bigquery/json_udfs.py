"""GoogleSQL JSON functions DuckDB has no faithful form of, in Python (registered by udfs.py):
JSON_KEYS, JSON_SET, JSON_REMOVE, JSON_STRIP_NULLS, the strict INT64/FLOAT64/BOOL/STRING of a
JSON value and the LAX_* conversions, each as
https://cloud.google.com/bigquery/docs/reference/standard-sql/json_functions describes it.

Values travel as JSON text; JSON results are written compact, as BigQuery writes them.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# BigQuery's JSONPath steps: .name, ."quoted name", [index], ['name'] (after a leading $).
PATH_STEP = re.compile(r"""\.([A-Za-z0-9_]+)|\."([^"]*)"|\[(\d+)\]|\['([^']*)'\]""")
SIMPLE_KEY = re.compile(r"^[A-Za-z0-9_]+$")


def _load(text: str) -> Any:
    return json.loads(text, parse_float=Decimal)  # exact numbers, as BigQuery keeps them


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_number)


def _number(value: Any) -> Any:
    if isinstance(value, Decimal):  # json.dumps has no Decimal: written through float
        return float(value)
    raise TypeError(type(value).__name__)


def _path(path: str, function: str) -> list[str | int]:
    if not path.startswith("$"):
        raise ValueError(f"{function}: JSONPath must start with '$': {path}")
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        match = PATH_STEP.match(path, position)
        if match is None:
            raise ValueError(f"{function}: invalid JSONPath: {path}")
        name, quoted, index, bracketed = match.groups()
        steps.append(int(index) if index is not None else next(
            part for part in (name, quoted, bracketed) if part is not None))  # fmt: skip
        position = match.end()
    return steps


# -- JSON_KEYS -------------------------------------------------------------------------------------
def json_keys(text: str, max_depth: int) -> list[str]:
    """The object keys down to `max_depth`, nested ones as `a.b`, sorted ('strict' mode:
    arrays are not entered)."""
    if max_depth < 1:
        raise ValueError(f"JSON_KEYS: max_depth must be positive: {max_depth}")
    keys: set[str] = set()
    _collect_keys(_load(text), "", max_depth, keys)
    return sorted(keys)


def _collect_keys(value: Any, prefix: str, depth: int, keys: set[str]) -> None:
    if not isinstance(value, dict) or depth == 0:
        return
    for key, item in value.items():
        if not SIMPLE_KEY.match(key):  # BigQuery quotes such keys; its exact form is not known
            raise ValueError(f"not supported by the local BigQuery: JSON_KEYS of the key {key!r}")
        keys.add(prefix + key)
        _collect_keys(item, f"{prefix}{key}.", depth - 1, keys)


# -- JSON_SET / JSON_REMOVE / JSON_STRIP_NULLS -----------------------------------------------------
def json_set(text: str, pairs: list[str], create_if_missing: bool) -> str:
    """`pairs`: path, value-as-JSON, path, value, ...: applied in order."""
    document = _load(text)
    for path, value in zip(pairs[::2], pairs[1::2], strict=True):
        document = _set(document, _path(path, "JSON_SET"), _load(value), create_if_missing)
    return _dump(document)


def _set(node: Any, steps: list[str | int], value: Any, create: bool) -> Any:
    if not steps:
        return value
    step, rest = steps[0], steps[1:]
    if node is None and create:  # a JSON null on the path becomes the container it needs
        node = [] if isinstance(step, int) else {}
    if isinstance(step, int) and isinstance(node, list):
        if step >= len(node):
            if not create:
                return node
            node.extend([None] * (step + 1 - len(node)))
        node[step] = _set(node[step], rest, value, create)
    elif isinstance(step, str) and isinstance(node, dict):
        if step not in node and not create:
            return node
        node[step] = _set(node.get(step), rest, value, create)
    return node  # a step that does not fit the value there is ignored, as BigQuery does


def json_remove(text: str, paths: list[str]) -> str:
    document = _load(text)
    for path in paths:
        steps = _path(path, "JSON_REMOVE")
        if not steps:
            raise ValueError("JSON_REMOVE: the JSONPath $ cannot be removed")
        parent = document
        for step in steps[:-1]:
            parent = _child(parent, step)
        last = steps[-1]
        if isinstance(parent, dict) and isinstance(last, str):
            parent.pop(last, None)
        elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
            del parent[last]
    return _dump(document)


def _child(node: Any, step: str | int) -> Any:
    if isinstance(node, dict) and isinstance(step, str):
        return node.get(step)
    if isinstance(node, list) and isinstance(step, int) and step < len(node):
        return node[step]
    return None


def json_strip_nulls(text: str, path: str, include_arrays: bool, remove_empty: bool) -> str:
    document = _load(text)
    steps = _path(path, "JSON_STRIP_NULLS")
    target = document
    for step in steps:
        target = _child(target, step)
    stripped = _strip(target, include_arrays, remove_empty)
    if not steps:
        return _dump(stripped)
    return _dump(_set(document, steps, stripped, create=False))


def _strip(value: Any, arrays: bool, remove_empty: bool) -> Any:
    if isinstance(value, dict):
        items = {k: _strip(v, arrays, remove_empty) for k, v in value.items()}
        kept = {k: v for k, v in items.items() if v is not None}
        return None if remove_empty and not kept else kept
    if isinstance(value, list):  # entered only with include_arrays; an empty one still goes
        kept = value
        if arrays:
            kept = [v for v in (_strip(v, arrays, remove_empty) for v in value) if v is not None]
        return None if remove_empty and not kept else kept
    return value


# -- INT64 / FLOAT64 / BOOL / STRING of JSON (strict) and the LAX_* conversions ----------------
def _scalar(text: str) -> Any:
    return _load(text)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, Decimal)) and not isinstance(value, bool)


def strict_int64(text: str) -> int:
    value = _scalar(text)
    if not _is_number(value) or Decimal(value) != Decimal(value).to_integral_value():
        raise ValueError(f"The provided JSON input is not an integer: {text}")
    if not INT64_MIN <= int(value) <= INT64_MAX:
        raise ValueError(f"The provided JSON number is out of the INT64 range: {text}")
    return int(value)


def strict_float64(text: str, wide_number_mode: str) -> float:
    value = _scalar(text)
    if not _is_number(value):
        raise ValueError(f"The provided JSON input is not a number: {text}")
    if wide_number_mode not in ("exact", "round"):
        raise ValueError(
            f"FLOAT64: wide_number_mode must be 'exact' or 'round': {wide_number_mode}"
        )
    result = float(value)
    # 'exact': the number must survive FLOAT64 unchanged (its shortest form is the same number)
    if wide_number_mode == "exact" and Decimal(repr(result)) != Decimal(value):
        raise ValueError(f"The provided JSON number cannot be converted to FLOAT64 exactly: {text}")
    return result


def strict_bool(text: str) -> bool:
    value = _scalar(text)
    if not isinstance(value, bool):
        raise ValueError(f"The provided JSON input is not a boolean: {text}")
    return value


def strict_string(text: str) -> str:
    value = _scalar(text)
    if not isinstance(value, str):
        raise ValueError(f"The provided JSON input is not a string: {text}")
    return value


def lax_bool(text: str) -> bool | None:
    value = _scalar(text)
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return {"true": True, "false": False}.get(value.lower())
    if _is_number(value):
        return value != 0
    return None


def _lax_decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return Decimal(int(value))
    if _is_number(value):
        return Decimal(value)
    if isinstance(value, str):
        try:
            number = Decimal(value)
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None


def lax_int64(text: str) -> int | None:
    number = _lax_decimal(_scalar(text))
    if number is None:
        return None
    # rounded half away from zero, as BigQuery's conversions round
    rounded = int(number.to_integral_value(rounding="ROUND_HALF_UP"))
    return rounded if INT64_MIN <= rounded <= INT64_MAX else None


def lax_float64(text: str) -> float | None:
    value = _scalar(text)
    if isinstance(value, bool):
        return None
    if _is_number(value):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        if not math.isfinite(number):  # DuckDB's UDF bridge answers NULL for a NaN
            raise ValueError(f"not supported by the local BigQuery: LAX_FLOAT64 of {value!r}")
        return number
    return None


def lax_string(text: str) -> str | None:
    value = _scalar(text)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        number = float(value)
        if math.isfinite(number) and number == int(number) and abs(number) < 1e15:
            return str(int(number))
        return repr(number)
    return None


UDFS = [
    ("bq_json_keys", json_keys, ["JSON", "BIGINT"], "VARCHAR[]"),
    ("bq_json_set", json_set, ["JSON", "VARCHAR[]", "BOOLEAN"], "JSON"),
    ("bq_json_remove", json_remove, ["JSON", "VARCHAR[]"], "JSON"),
    ("bq_json_strip_nulls", json_strip_nulls, ["JSON", "VARCHAR", "BOOLEAN", "BOOLEAN"], "JSON"),
    ("bq_json_int64", strict_int64, ["JSON"], "BIGINT"),
    ("bq_json_float64", strict_float64, ["JSON", "VARCHAR"], "DOUBLE"),
    ("bq_json_bool", strict_bool, ["JSON"], "BOOLEAN"),
    ("bq_json_string", strict_string, ["JSON"], "VARCHAR"),
    ("bq_lax_bool", lax_bool, ["JSON"], "BOOLEAN"),
    ("bq_lax_int64", lax_int64, ["JSON"], "BIGINT"),
    ("bq_lax_float64", lax_float64, ["JSON"], "DOUBLE"),
    ("bq_lax_string", lax_string, ["JSON"], "VARCHAR"),
]
