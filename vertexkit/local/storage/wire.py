"""Request helpers every storage route shares: the JSON body, the base URL, integer queries."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from vertexkit.local import partial_response
from vertexkit.local.errors import ApiError, bad_request, refused
from vertexkit.local.storage.models import PRECONDITION_FAILED
from vertexkit.local.storage.responses import decode_page_token, encode_page_token
from vertexkit.specs.errors import NotServedLocally, SpecError

Endpoint = Callable[[Request], Awaitable[Response]]


def storage_errors(routes: list[BaseRoute]) -> list[BaseRoute]:
    """The routes with Cloud Storage's error JSON: `{"error": {code, message, errors}}`, no
    `status` field (recorded storage traffic: a 404 bucket get). The app-wide handlers answer
    Vertex's and BigQuery's errors with `status`, so Storage's are caught here, at its routes.
    Every JSON answer of the JSON API is trimmed here too, to what the request's `fields`
    selects (`vertexkit.local.partial_response`); media (`alt=media`, `/download/`) never is."""
    shaped: list[BaseRoute] = []
    for route in routes:
        if isinstance(route, Route):
            methods = sorted(route.methods or ())
            route = Route(route.path, _storage_shaped(route.endpoint), methods=methods)
        shaped.append(route)
    return shaped


def _storage_shaped(endpoint: Endpoint) -> Endpoint:
    async def answer(request: Request) -> Response:
        try:
            # read before the handler runs: a selector that does not parse is a 400, nothing done
            selection = (
                None if is_media(request) else partial_response.requested(request.query_params)
            )
            return partial_response.trimmed(await endpoint(request), selection)
        except ApiError as error:
            return storage_error(error)
        except SpecError as exc:  # as the app's spec handler would, in Storage's shape
            return storage_error(refused(str(exc)) if isinstance(exc, NotServedLocally)
                                 else bad_request(str(exc)))  # fmt: skip

    return answer


def is_media(request: Request) -> bool:
    """A download: the object's own bytes, which `fields` does not select in."""
    return request.query_params.get("alt") == "media" or request.url.path.startswith("/download/")


def storage_error(error: ApiError) -> JSONResponse:
    return JSONResponse(error.body(with_status=False), status_code=error.code)


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
        raise ApiError(412, PRECONDITION_FAILED, reason="conditionNotMet")


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
