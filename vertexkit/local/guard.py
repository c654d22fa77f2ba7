"""The local cloud's front door: it answers only its own clients on this machine.

The local cloud runs commands (a custom job is a process), so a request it accepts is code run
on the user's machine. A web page the user visits can send requests to 127.0.0.1 too: a
cross-site `POST` with `Content-Type: text/plain` needs no CORS preflight, and a DNS-rebinding
page (evil.example resolving to 127.0.0.1) can even read the answers. The Google client
libraries never send `Origin` or `Sec-Fetch-*` and always name the loopback address in `Host`;
browsers always send `Origin` on cross-origin writes and `Sec-Fetch-Site` on everything. So:

* `Host` must be a loopback name (127.0.0.1, localhost, [::1]): a rebinding page's Host is its
  own domain;
* a request with an `Origin` other than the local cloud's own (its console), or marked
  `Sec-Fetch-Site: cross-site`/`same-site` by the browser, is refused;
* JSON APIs take only `application/json` bodies (what Google's JSON APIs require), which a
  browser cannot send cross-origin without a preflight, and there is no CORS to pass one;
  media uploads keep their own content types (the Origin rule covers them);
* JSON bodies are capped, as Google's front end caps them, before any handler reads them.

No per-home token: the Google clients use anonymous credentials against the local cloud and
would need code changes to carry one; the rules above close the browser's ways in without that.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from vertexkit.local.errors import ApiError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
JSON_API_PREFIXES = ("/v1/", "/ui/", "/storage/v1/", "/bigquery/v2/")
# BigQuery documents 10 MB as its maximum API request size; Google's front end answers a
# bigger body with 413. (Online prediction's own 1.5 MB limit is the endpoint's rule.)
MAX_JSON_BYTES = 10 * 1024 * 1024
FOREIGN_FETCH_SITES = frozenset({"cross-site", "same-site"})


class RequestGuard:
    """ASGI middleware that refuses requests not from the local cloud's own clients."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            check_origin(scope)
            if is_json_api(scope["path"]):
                receive = await buffered_json_body(scope, receive)
        except ApiError as error:
            await answer(send, error)
            return
        await self.app(scope, receive, send)


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def own_origins(scope: Scope) -> set[str]:
    port = (scope.get("server") or ("", 0))[1]
    return {f"http://{host}:{port}" for host in LOOPBACK_HOSTS}


def host_name(host: str) -> str:
    """`Host` without its port: `127.0.0.1:8080` → `127.0.0.1`, `[::1]:80` → `[::1]`."""
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if ":" in host else host


def check_origin(scope: Scope) -> None:
    host = header(scope, b"host")
    if host is None or host_name(host).lower() not in LOOPBACK_HOSTS:
        raise forbidden(f"Host {host!r} is not this machine's loopback address.")
    origin = header(scope, b"origin")
    if origin is not None and origin not in own_origins(scope):
        raise forbidden(f"Origin {origin!r} may not call the local cloud.")
    site = header(scope, b"sec-fetch-site")
    if site in FOREIGN_FETCH_SITES and origin not in own_origins(scope):
        raise forbidden(f"Sec-Fetch-Site {site!r}: requests from other sites are refused.")


def is_json_api(path: str) -> bool:
    return path.startswith(JSON_API_PREFIXES)


async def buffered_json_body(scope: Scope, receive: Receive) -> Receive:
    """Reads the whole body (capped), checks its type, and replays it to the app."""
    body = await read_capped(receive, MAX_JSON_BYTES)
    if body:
        check_json_type(header(scope, b"content-type"))
    return replay(body, receive)


async def read_capped(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ApiError(
                413, f"Request payload size exceeds the limit: {limit} bytes.", reason="invalid"
            )
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def check_json_type(content_type: str | None) -> None:
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise ApiError(
            400,
            f"Content-Type {content_type!r} is not supported here: the body must be "
            "application/json.",
        )


def replay(body: bytes, downstream: Receive) -> Receive:
    """The body once, then the real channel (a streaming answer listens on it for disconnect)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await downstream()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def forbidden(message: str) -> ApiError:
    return ApiError(403, message, reason="forbidden")


async def answer(send: Send, error: ApiError) -> None:
    payload = json.dumps(error.body()).encode()
    await send(
        {
            "type": "http.response.start",
            "status": error.code,
            "headers": [
                (b"content-type", b"application/json; charset=UTF-8"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
