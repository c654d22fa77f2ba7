"""tabledata.insertAll (the client's `insert_rows_json` / `insert_rows`): rows checked one by one
against the table's schema, per-row errors as BigQuery reports them, and best-effort
de-duplication on `insertId` (BigQuery remembers an id for at least a minute).

Without `skipInvalidRows` one bad row stops the request and nothing is written; the other rows
are reported `stopped`, as BigQuery does. With it, the good rows are written and the bad ones
reported `invalid`.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from vertexkit.local.bigquery import geography, intervals
from vertexkit.local.bigquery.query_error import QueryError
from vertexkit.local.bigquery.sql import TableName

DEDUP_WINDOW_S = 60.0
REQUEST_FIELDS = {
    "kind",
    "skipInvalidRows",
    "ignoreUnknownValues",
    "templateSuffix",
    "rows",
    "traceId",
}


class RowError(Exception):
    def __init__(self, location: str, message: str) -> None:
        super().__init__(message)
        self.location = location
        self.message = message


def _integer(value: Any) -> int:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(value)
    return int(str(value).strip()) if isinstance(value, str) else int(value)


def _float(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(value)
    return float(value)


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text not in ("true", "false", "1", "0"):
        raise ValueError(value)
    return text in ("true", "1")


def _string(value: Any) -> str:
    if isinstance(value, (dict, list)):
        raise ValueError(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _timestamp(value: Any) -> datetime.datetime:
    if isinstance(value, (int, float)) and not isinstance(value, bool):  # epoch seconds
        return datetime.datetime.fromtimestamp(value, tz=datetime.UTC)
    text = str(value).strip().replace(" UTC", "+00:00").replace("Z", "+00:00")
    parsed = datetime.datetime.fromisoformat(text.replace(" ", "T", 1))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "INTEGER": _integer,
    "INT64": _integer,
    "FLOAT": _float,
    "FLOAT64": _float,
    "NUMERIC": lambda v: decimal.Decimal(str(v)),
    "BIGNUMERIC": lambda v: decimal.Decimal(str(v)),
    "BOOLEAN": _boolean,
    "BOOL": _boolean,
    "STRING": _string,
    "BYTES": lambda v: base64.b64decode(str(v), validate=True),
    "DATE": lambda v: datetime.date.fromisoformat(str(v)),
    "DATETIME": lambda v: datetime.datetime.fromisoformat(str(v).replace(" ", "T", 1)),
    "TIME": lambda v: datetime.time.fromisoformat(str(v)),
    "TIMESTAMP": _timestamp,
    "JSON": lambda v: v if isinstance(v, str) else json.dumps(v),
    "GEOGRAPHY": geography.canonical_text,
    "INTERVAL": lambda v: intervals.parameter(str(v)),
}
TYPE_WORDS = {
    "INTEGER": "integer",
    "INT64": "integer",
    "FLOAT": "double",
    "FLOAT64": "double",
    "BOOLEAN": "boolean",
    "BOOL": "boolean",
}


def convert_row(row: Any, fields: list[dict], ignore_unknown: bool, prefix: str = "") -> dict:
    """One JSON row -> Python values by column name, or RowError naming the field."""
    if not isinstance(row, dict):
        raise RowError(prefix.rstrip("."), "Row must be a JSON object")
    by_name = {f["name"].lower(): f for f in fields}
    unknown = [key for key in row if key.lower() not in by_name]
    if unknown and not ignore_unknown:
        raise RowError(prefix + unknown[0], f"no such field: {prefix}{unknown[0]}.")
    given = {key.lower(): value for key, value in row.items()}
    values = {}
    for field in fields:
        value = given.get(field["name"].lower())
        values[field["name"]] = _field_value(value, field, ignore_unknown, prefix)
    return values


def _field_value(value: Any, field: dict, ignore_unknown: bool, prefix: str) -> Any:
    where = prefix + field["name"]
    mode = str(field.get("mode") or "NULLABLE").upper()
    if value is None:
        if mode == "REQUIRED":
            raise RowError(where, f"Missing required field: {where}.")
        return [] if mode == "REPEATED" else None
    if mode == "REPEATED":
        if not isinstance(value, list):
            raise RowError(where, f"Array specified for non-repeated field: {where}.")
        single = {**field, "mode": "NULLABLE"}
        return [_field_value(item, single, ignore_unknown, prefix) for item in value]
    if isinstance(value, list):
        raise RowError(where, f"Array specified for non-repeated field: {where}.")
    kind = str(field["type"]).upper()
    if kind in ("RECORD", "STRUCT"):
        return convert_row(value, field.get("fields") or [], ignore_unknown, where + ".")
    try:
        return CONVERTERS[kind](value)
    except (ValueError, TypeError, decimal.InvalidOperation, binascii.Error, OverflowError):
        word = TYPE_WORDS.get(kind, kind.lower())
        raise RowError(where, f"Cannot convert value to {word} (bad value): {value}") from None


class StreamingInserts:
    """insertIds seen in the last DEDUP_WINDOW_S seconds, per table."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._seen: dict[tuple[str, str, str, str], float] = {}
        self._lock = threading.Lock()

    def unseen(self, name: TableName, insert_ids: list[str | None]) -> list[bool]:
        """Whether each row is new: an id seen within the window (or earlier in the same
        request) is a duplicate and is not written again."""
        now = self.clock()
        with self._lock:
            self._seen = {k: t for k, t in self._seen.items() if now - t < DEDUP_WINDOW_S}
            answer, this_request = [], set()
            for insert_id in insert_ids:
                key = (name.project, name.dataset, name.table, insert_id or "")
                new = insert_id is None or (key not in self._seen and key not in this_request)
                answer.append(new)
                this_request.add(key)
            return answer

    def remember(self, name: TableName, insert_ids: list[str | None]) -> None:
        """Called once the rows are written: a request that failed may be retried."""
        now = self.clock()
        with self._lock:
            for insert_id in insert_ids:
                if insert_id is not None:
                    self._seen.setdefault((name.project, name.dataset, name.table, insert_id), now)


def check_request(body: Any) -> list[dict]:
    """The request's rows, after BigQuery's own checks of the request (400 before anything)."""
    if not isinstance(body, dict):
        raise QueryError("insertAll: the request body must be a JSON object", "invalid")
    unknown = sorted(set(body) - REQUEST_FIELDS)
    if unknown:
        allowed = ", ".join(sorted(REQUEST_FIELDS))
        raise QueryError(f"insertAll: unknown field {unknown[0]!r}; allowed: {allowed}", "invalid")
    if body.get("templateSuffix"):
        raise QueryError("not supported by the local BigQuery: insertAll templateSuffix")
    rows = body.get("rows")
    if not isinstance(rows, list) or not rows:
        raise QueryError("insertAll: rows must be a non-empty list", "invalid")
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("json"), dict):
            raise QueryError(f"insertAll: rows[{index}].json must be a JSON object", "invalid")
        if row.get("insertId") is not None and not isinstance(row["insertId"], str):
            raise QueryError(f"insertAll: rows[{index}].insertId must be a string", "invalid")
    return rows


def row_error(index: int, reason: str, location: str = "", message: str = "") -> dict:
    error = {"reason": reason, "location": location, "debugInfo": "", "message": message}
    return {"index": index, "errors": [error]}
