"""Request helpers every storage route shares: the JSON body, the base URL, integer queries."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from vertexkit.local.errors import ApiError, bad_request
from vertexkit.local.storage.responses import decode_page_token, encode_page_token


def base_url(request: Request) -> str:
    return str(request.base_url).rstrip("/")


async def json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as error:
        raise bad_request(f"The request body is not valid JSON: {error}.") from None
    if not isinstance(body, dict):
        raise bad_request("The request body must be a JSON object.")
    return body


def int_query(request: Request, name: str) -> int | None:
    value = request.query_params.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise bad_request(f"Query parameter {name} must be an integer; got {value!r}.") from None


def bool_query(request: Request, name: str) -> bool:
    value = request.query_params.get(name, "false").lower()
    if value not in ("true", "false"):
        raise bad_request(f"Query parameter {name} must be true or false; got {value!r}.")
    return value == "true"


def check_metageneration(request: Request, current: int, what: str, prefix: str = "if") -> None:
    """if[Source]MetagenerationMatch / ...NotMatch against `current`: 412 when one fails."""
    match = int_query(request, f"{prefix}MetagenerationMatch")
    not_match = int_query(request, f"{prefix}MetagenerationNotMatch")
    if (match is not None and match != current) or (not_match is not None and not_match == current):
        raise ApiError(
            412,
            f"At least one of the pre-conditions you specified did not hold (the {what}'s "
            f"metageneration is {current}).",
            reason="conditionNotMet",
        )


def page_of(
    keyed: list[tuple[str, Any]], request: Request, size_param: str = "pageSize", limit: int = 1000
) -> tuple[list[Any], str | None]:
    """One page of (key, item) pairs sorted by key, and the token of the next page (or None).

    The page token is the last key answered, base64: stable while records come and go."""
    size = int_query(request, size_param) or limit
    if size < 0:
        raise bad_request(f"Invalid argument: {size_param} must not be negative; got {size}.")
    after = decode_page_token(request.query_params.get("pageToken"))
    remaining = [(key, item) for key, item in keyed if after is None or key > after]
    chosen = remaining[: min(size, limit)]
    more = len(remaining) > len(chosen)
    return [item for _, item in chosen], (encode_page_token(chosen[-1][0]) if more else None)
