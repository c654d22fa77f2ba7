"""Input rows as the instances Vertex sends to the model, per `instanceConfig`.

A row is what the input holds: a JSON value per JSONL line, or a dict of columns per CSV line or
BigQuery row (in column order). Vertex's rules (BatchPredictionJob.InstanceConfig):

* `keyField` is taken out of the instance; the output carries `key` instead of `instance`.
* `includedFields` keeps (and orders) fields; `excludedFields` drops them.
* `instanceType` `object` sends dicts; `array` sends values (in `includedFields` order, else the
  row's column order). Unset: CSV and BigQuery rows go as arrays, JSONL lines as they are.

A row that cannot be shaped is a `RowError`: it goes to the errors output, never a crash.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

COLUMNAR = ("csv", "bigquery")


class RowError(ValueError):
    """One row that cannot become an instance; the message names the field."""


@dataclass
class Shaped:
    """One row ready to predict: the instance sent, its key (if any), its columns for BigQuery."""

    instance: Any
    key: Any = None
    columns: dict[str, Any] | None = None


@dataclass(frozen=True)
class InstanceConfig:
    instance_type: str = ""
    key_field: str = ""
    included: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()

    @classmethod
    def from_api(cls, config: dict[str, Any]) -> InstanceConfig:
        return cls(
            instance_type=config.get("instanceType") or "",
            key_field=config.get("keyField") or "",
            included=tuple(config.get("includedFields") or ()),
            excluded=tuple(config.get("excludedFields") or ()),
        )

    @property
    def reshapes(self) -> bool:
        return bool(self.key_field or self.included or self.excluded)


def shape(row: Any, config: InstanceConfig, input_format: str) -> Shaped:
    """The instance for one row, or RowError."""
    if not isinstance(row, dict):
        return _shape_value(row, config)
    fields = dict(row)
    key = _take_key(fields, config.key_field)
    fields = _select(fields, config)
    kind = config.instance_type or ("array" if input_format in COLUMNAR else "object")
    if kind == "object":
        return Shaped(fields, key, fields)
    if input_format not in COLUMNAR and not config.included:
        raise RowError(
            "instanceConfig.includedFields: required to send a JSON object line as an array "
            "(it gives the order of the values)"
        )
    return Shaped(list(fields.values()), key, fields)


def _shape_value(row: Any, config: InstanceConfig) -> Shaped:
    if config.reshapes:
        raise RowError(
            "instanceConfig: keyField, includedFields and excludedFields need a JSON object "
            f"line; got {type(row).__name__}"
        )
    if config.instance_type == "object":
        raise RowError(f"instanceConfig.instanceType: object needs a JSON object line; got {row!r}")
    return Shaped(row)


def _take_key(fields: dict[str, Any], key_field: str) -> Any:
    if not key_field:
        return None
    if key_field not in fields:
        raise RowError(f"instanceConfig.keyField: the row has no field {key_field!r}")
    return fields.pop(key_field)


def _select(fields: dict[str, Any], config: InstanceConfig) -> dict[str, Any]:
    if config.included:
        missing = [name for name in config.included if name not in fields]
        if missing:
            raise RowError(f"instanceConfig.includedFields: the row has no field {missing[0]!r}")
        return {name: fields[name] for name in config.included}
    return {name: value for name, value in fields.items() if name not in config.excluded}


# -- parsing input files -----------------------------------------------------------------------
@dataclass
class BadLine:
    """A line that is not a row at all (not JSON, wrong number of CSV values)."""

    text: str
    message: str


def jsonl_rows(text: str) -> list[Any]:
    rows: list[Any] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError as exc:
            rows.append(BadLine(line, f"line {number} is not JSON: {exc}"))
    return rows


def csv_rows(text: str) -> list[Any]:
    """The first line names the columns; values that read as numbers become numbers."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None) or []
    rows: list[Any] = []
    for number, values in enumerate(reader, 2):
        if not values:
            continue
        if len(values) != len(header):
            rows.append(
                BadLine(
                    ",".join(values),
                    f"line {number} has {len(values)} values; the header has {len(header)}",
                )
            )
            continue
        rows.append({name: csv_value(value) for name, value in zip(header, values, strict=True)})
    return rows


def csv_value(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text
