"""List requests as the KFP API server answers them: a JSON `filter` (backend/api/v2beta1/
filter.proto: predicates ANDed, each an operation on a key), `sort_by` ("field" or "field desc"),
and `page_size` / `page_token` paging with `total_size` and `next_page_token`. The token carries
the sort and the filter it was made for, as KFP's does."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from vertexkit.local.kfp.errors import invalid

DEFAULT_PAGE_SIZE = 20  # the KFP API server's default
MAX_PAGE_SIZE = 200
OPERATIONS = (
    "OPERATION_UNSPECIFIED",
    "EQUALS",
    "NOT_EQUALS",
    "GREATER_THAN",
    "GREATER_THAN_EQUALS",
    "LESS_THAN",
    "LESS_THAN_EQUALS",
    "IN",
    "IS_SUBSTRING",
)
VALUE_KINDS = (
    "int_value",
    "long_value",
    "string_value",
    "timestamp_value",
    "int_values",
    "long_values",
    "string_values",
)
Item = dict[str, Any]
Fields = dict[str, Callable[[Item], Any]]  # key -> the item's value (str, int, or epoch seconds)


def epoch(value: str | None) -> int | None:
    """An RFC 3339 time as whole epoch seconds (what KFP stores and compares)."""
    if not value:
        return None
    text = re.sub(r"\.\d+", "", value.strip()).replace("Z", "+00:00")
    try:
        return int(datetime.fromisoformat(text).astimezone(timezone.utc).timestamp())
    except ValueError:
        raise invalid(f"{value!r} is not an RFC 3339 time") from None


def _snake(name: str) -> str:
    out = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
    return out.lstrip("_")


def parse_filter(text: str, fields: Fields) -> list[tuple[str, str, Any]]:
    if not text:
        return []
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise invalid(f"filter: not a JSON Filter ({exc.msg})") from None
    if not isinstance(document, dict) or set(document) - {"predicates"}:
        raise invalid('filter: expected {"predicates": [...]} (filter.proto)')
    terms = []
    for index, raw in enumerate(document.get("predicates") or []):
        where = f"filter.predicates[{index}]"
        predicate = {_snake(key): value for key, value in (raw or {}).items()}
        unknown = set(predicate) - {"operation", "key", *VALUE_KINDS}
        if unknown:
            raise invalid(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        operation = predicate.get("operation", 0)
        if isinstance(operation, int) and 0 <= operation < len(OPERATIONS):
            operation = OPERATIONS[operation]
        if operation not in OPERATIONS[1:]:
            raise invalid(f"{where}.operation: {operation!r} is not one of {OPERATIONS[1:]}")
        key = predicate.get("key", "")
        if key not in fields:
            raise invalid(
                f"{where}.key: {key!r} is not a field to filter on "
                f"(allowed: {', '.join(sorted(fields))})"
            )
        kinds = [kind for kind in VALUE_KINDS if kind in predicate]
        if len(kinds) != 1:
            raise invalid(f"{where}: exactly one value is required ({', '.join(VALUE_KINDS)})")
        value = _value(kinds[0], predicate[kinds[0]], where)
        listed = isinstance(value, list)
        if (operation == "IN") != listed:
            raise invalid(
                f"{where}: IN takes a list value (int_values, long_values, "
                "string_values); the other operations a single value"
            )
        if operation == "IS_SUBSTRING" and not isinstance(value, str):
            raise invalid(f"{where}: IS_SUBSTRING takes a string_value")
        terms.append((key, operation, value))
    return terms


def _value(kind: str, raw: Any, where: str) -> Any:
    try:
        if kind == "string_value":
            return str(raw)
        if kind in ("int_value", "long_value"):
            return int(raw)
        if kind == "timestamp_value":
            return epoch(str(raw))
        values = (raw or {}).get("values") or []
        return [str(v) if kind == "string_values" else int(v) for v in values]
    except (TypeError, ValueError, AttributeError):
        raise invalid(f"{where}.{kind}: {raw!r} is not a valid {kind}") from None


def matches(item: Item, terms: list[tuple[str, str, Any]], fields: Fields) -> bool:
    for key, operation, wanted in terms:
        actual = fields[key](item)
        if isinstance(wanted, int) and not isinstance(actual, int) and actual is not None:
            try:
                actual = int(actual)
            except (TypeError, ValueError):
                return False
        if isinstance(wanted, str) and actual is not None:
            actual = str(actual)
        if not _holds(operation, actual, wanted):
            return False
    return True


def _holds(operation: str, actual: Any, wanted: Any) -> bool:
    if operation == "EQUALS":
        return actual == wanted
    if operation == "NOT_EQUALS":
        return actual != wanted
    if operation == "IN":
        return actual in wanted
    if operation == "IS_SUBSTRING":
        return actual is not None and wanted in actual
    if actual is None:
        return False
    return {
        "GREATER_THAN": actual > wanted,
        "GREATER_THAN_EQUALS": actual >= wanted,
        "LESS_THAN": actual < wanted,
        "LESS_THAN_EQUALS": actual <= wanted,
    }[operation]


def page(
    items: list[Item], query: dict[str, str], fields: Fields, key: str, id_key: str
) -> dict[str, Any]:
    """One page of `items` filtered and sorted as the query asks, in KFP's list shape."""
    token = query.get("page_token") or ""
    sort_by, filter_text, offset = query.get("sort_by") or "", query.get("filter") or "", 0
    if token:
        try:
            state = json.loads(base64.urlsafe_b64decode(token.encode()))
            offset = int(state["offset"])
        except (ValueError, KeyError, TypeError):
            raise invalid(f"page_token: {token!r} is not a token this server gave out") from None
        if (sort_by and sort_by != state["sort_by"]) or (
            filter_text and filter_text != state["filter"]
        ):
            raise invalid("page_token: made for another sort_by or filter")
        sort_by, filter_text = state["sort_by"], state["filter"]
    try:
        size = int(query.get("page_size") or 0) or DEFAULT_PAGE_SIZE
    except ValueError:
        raise invalid(f"page_size: {query.get('page_size')!r} is not a number") from None
    if size < 0:
        raise invalid(f"page_size: must be positive, got {size}")
    size = min(size, MAX_PAGE_SIZE)
    terms = parse_filter(filter_text, fields)
    chosen = [item for item in items if matches(item, terms, fields)]
    chosen = _sorted(chosen, sort_by, fields)
    body: dict[str, Any] = {key: chosen[offset : offset + size], "total_size": len(chosen)}
    if offset + size < len(chosen):
        state = {"offset": offset + size, "sort_by": sort_by, "filter": filter_text}
        body["next_page_token"] = base64.urlsafe_b64encode(json.dumps(state).encode()).decode()
    else:
        body["next_page_token"] = ""
    if not body[key]:
        del body[key]  # grpc-gateway leaves an empty repeated field out
    return body


def _sorted(items: list[Item], sort_by: str, fields: Fields) -> list[Item]:
    words = sort_by.split()
    if len(words) > 2 or (len(words) == 2 and words[1] not in ("asc", "desc")):
        raise invalid(f'sort_by: {sort_by!r}; use "field", "field asc" or "field desc"')
    field = words[0] if words else "created_at"
    if field not in fields:
        raise invalid(
            f"sort_by: {field!r} is not a field to sort on (allowed: {', '.join(sorted(fields))})"
        )
    descending = len(words) == 2 and words[1] == "desc"
    # ties in creation order (the items come as they were stored; created_at has one-second
    # resolution, as KFP stores it)
    order = {id(item): index for index, item in enumerate(items)}

    def key(item: Item) -> tuple:
        value = fields[field](item)
        if value is not None and not isinstance(value, (int, str)):
            value = str(value)
        return (value is not None, value if value is not None else 0, order[id(item)])

    try:
        return sorted(items, key=key, reverse=descending)
    except TypeError:  # a column holding numbers and strings: compared as text
        return sorted(
            items, key=lambda i: (str(fields[field](i)), order[id(i)]), reverse=descending
        )
