"""URL templates for the Vertex AI REST surface (`/v1/...` and the SDK's `/ui/...`).

Vertex paths are resource names with an optional `:verb`, e.g.
`projects/{project}/locations/{location}/customJobs/{job}:cancel`. Handlers register a
template; `dispatch` matches the request path segment by segment.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from vertexkit.local.errors import bad_request, not_served

Handler = Callable[["VertexRequest"], Any]


@dataclass
class VertexRequest:
    """What a handler sees: path parameters, query string and the parsed JSON body."""

    method: str
    path: str
    params: dict[str, str]
    query: dict[str, str]
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    # Every value of a repeated query parameter (`?timeSeries=a&timeSeries=b`); `query` keeps
    # only the last one.
    query_lists: dict[str, list[str]] = field(default_factory=dict)

    @property
    def parent(self) -> str:
        return f"projects/{self.params['project']}/locations/{self.params['location']}"


@dataclass(frozen=True)
class _Template:
    method: str
    segments: tuple[str, ...]
    verb: str | None
    handler: Handler

    def match(self, method: str, segments: list[str], verb: str | None) -> dict[str, str] | None:
        if method != self.method or verb != self.verb or len(segments) != len(self.segments):
            return None
        params: dict[str, str] = {}
        for expected, actual in zip(self.segments, segments, strict=True):
            if expected.startswith("{") and expected.endswith("}"):
                if not actual:
                    return None
                params[expected[1:-1]] = actual
            elif expected != actual:
                return None
        return params


def _split(path: str) -> tuple[list[str], str | None]:
    path = path.strip("/")
    verb = None
    last_slash = path.rfind("/")
    colon = path.find(":", last_slash + 1)
    if colon != -1:
        path, verb = path[:colon], path[colon + 1 :]
    return path.split("/"), verb


class VertexRouter:
    def __init__(self) -> None:
        self._templates: list[_Template] = []

    def route(self, method: str, template: str) -> Callable[[Handler], Handler]:
        """Registers a handler: `@router.route("POST", "projects/{project}/.../customJobs")`."""
        segments, verb = _split(template)

        def register(handler: Handler) -> Handler:
            self._templates.append(_Template(method, tuple(segments), verb, handler))
            return handler

        return register

    def resolve(self, method: str, path: str) -> tuple[Handler, dict[str, str]] | None:
        segments, verb = _split(path)
        for template in self._templates:
            params = template.match(method, segments, verb)
            if params is not None:
                return template.handler, params
        return None

    async def dispatch(self, request: Request) -> Response:
        path = request.path_params["path"]
        resolved = self.resolve(request.method, path)
        if resolved is None:
            raise not_served(request.method, path)
        handler, params = resolved
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError as exc:
            raise bad_request(f"Invalid JSON payload received. {exc}") from exc
        vertex_request = VertexRequest(
            method=request.method,
            path=path,
            params=params,
            query=dict(request.query_params),
            body=body if isinstance(body, dict) else {},
            headers=dict(request.headers),
            query_lists={key: request.query_params.getlist(key) for key in request.query_params},
        )
        result = await run_in_threadpool(handler, vertex_request)
        if isinstance(result, Response):
            return result
        return JSONResponse(result if result is not None else {})
