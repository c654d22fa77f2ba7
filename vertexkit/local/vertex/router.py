"""URL templates for the Vertex AI REST surface (`/v1/...` and the SDK's `/ui/...`).

Vertex paths are resource names with an optional `:verb`, e.g.
`projects/{project}/locations/{location}/customJobs/{job}:cancel`. Handlers register a
template; `dispatch` matches the request path segment by segment.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from vertexkit.local import partial_response
from vertexkit.local.errors import ApiError, bad_request, not_served
from vertexkit.local.vertex.core.ids import check_numeric_id
from vertexkit.local.vertex.core.names import ProjectNames
from vertexkit.specs.errors import SpecError

Handler = Callable[["VertexRequest"], Any]
# Google's answer (400 INVALID_ARGUMENT) to a body that is JSON but not an object.
NOT_A_MESSAGE = 'Invalid JSON payload received. Unknown name "": Root element must be a message.'
# A matcher answers whole sub-collections no template lists (every resource's `operations`):
# (method, path segments, verb, served) -> a handler or None; `served(family)` says whether a
# collection under a location (`customJobs`) has handlers of its own.
Matcher = Callable[[str, list[str], "str | None", Callable[[str], bool]], "Handler | None"]


@dataclass
class VertexRequest:
    """What a handler sees: path parameters, query string and the parsed JSON body."""

    method: str
    path: str
    params: dict[str, str]
    query: dict[str, str]
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    repeated: dict[str, list[str]] = field(default_factory=dict)  # every value of each query key

    def query_list(self, key: str) -> list[str]:
        """A repeated query parameter (`?permissions=a&permissions=b`), all its values."""
        return self.repeated.get(key) or ([self.query[key]] if key in self.query else [])

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
    def __init__(self, names: ProjectNames | None = None) -> None:
        self._templates: list[_Template] = []
        self._matchers: list[Matcher] = []
        self.names = names or ProjectNames([])

    def add_matcher(self, matcher: Matcher) -> None:
        """Tried, in order, for a path no template matches."""
        self._matchers.append(matcher)

    def serves_family(self, family: str) -> bool:
        """Whether some template is for `projects/{project}/locations/{location}/<family>...`."""
        return any(
            len(t.segments) > 4 and t.segments[2] == "locations" and t.segments[4] == family
            for t in self._templates
        )

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
        for matcher in self._matchers:
            handler = matcher(method, segments, verb, self.serves_family)
            if handler is not None:
                return handler, {"project": segments[1], "location": segments[3]}
        return None

    async def dispatch(self, request: Request) -> Response:
        """Reads the request as the store keys names (`core.names`: resource names, never a
        user's free-form data), runs its handler, and answers with Google's names; a create's
        operation is answered pending (below), and the answer holds only what `fields` selects
        (`vertexkit.local.partial_response`; errors are answered whole)."""
        path = self.names.inward_text(request.path_params["path"].lstrip("/"))
        resolved = self.resolve(request.method, path)
        if resolved is None:
            raise not_served(request.method, path)
        try:
            check_numeric_id(path)  # a malformed ID is a 400 on Vertex, not a 404
        except SpecError as exc:
            raise self._named_error(exc) from exc
        handler, params = resolved
        # `fields` (the system's partial response) is read here, before the handler runs: a
        # selector that does not parse is a 400 and nothing is done; handlers never see it.
        selection = partial_response.requested(request.query_params)
        vertex_request = VertexRequest(
            method=request.method,
            path=path,
            params=params,
            query={
                key: self.names.inward_text(v)
                for key, v in partial_response.without_fields(request.query_params).items()
            },
            body=self._body(await request.body()),
            headers=dict(request.headers),
            repeated=_repeated(
                (key, self.names.inward_text(value))
                for key, value in request.query_params.multi_items()
                if key != partial_response.FIELDS
            ),
        )
        try:
            result = await run_in_threadpool(handler, vertex_request)
        except (ApiError, SpecError) as exc:  # answered by the app's handlers, named as Google
            raise self._named_error(exc) from exc
        if isinstance(result, Response):  # rawPredict's: the body is the model's own
            return self._named_headers(result)
        if request.method == "POST" and not _is_operations_path(path):
            result = pending_view(result)
        named = self._named_selection(result if result is not None else {}, selection)
        text = json.dumps(named, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return Response(text, media_type="application/json")

    def _named_selection(self, result: Any, selection: partial_response.Selection | None) -> Any:
        """The answer with Google's names, holding only what `fields` selects. Trimmed before
        it is named: a pipeline job is ~100 KB, most of it its pipelineSpec, and `outward`
        walks every string. `outward` tells a kept key's Any (an operation's `metadata` or
        `response`: walked) from a Struct (kept) by its `@type`, so `@type` stays through the
        naming, and goes after it unless it was selected (a second pass, over the small part)."""
        if selection is None:
            return self.names.outward(result)
        named = self.names.outward(partial_response.select(result, selection, keep="@type"))
        return partial_response.select(named, selection)

    def _named_error(self, exc: ApiError | SpecError) -> ApiError | SpecError:
        if isinstance(exc, SpecError):
            named = self.names.outward_text
            return type(exc)(named(exc.field), named(exc.reason))
        exc.message = self.names.outward_text(exc.message)
        return exc

    def _named_headers(self, response: Response) -> Response:
        """Headers that carry a resource name (rawPredict's `X-Vertex-AI-Model`), with the
        project's number."""
        for key, value in list(response.headers.items()):
            if value.startswith("projects/"):
                response.headers[key] = self.names.outward_text(value)
        return response

    def _body(self, raw: bytes) -> dict[str, Any]:
        try:
            body = json.loads(raw.decode()) if raw else {}
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise bad_request(f"Invalid JSON payload received. {exc}") from exc
        if not isinstance(body, dict):  # `[]`, `"x"`, `1`: no request message is a JSON value
            raise bad_request(NOT_A_MESSAGE)
        return self.names.inward(body)


def _is_operations_path(path: str) -> bool:
    return "/operations" in path


def pending_view(result: Any) -> Any:
    """A long-running operation as Vertex answers the request that started it: pending, with
    its name and metadata, whatever the local cloud has done by then (recorded Vertex traffic,
    k8s-config-connector's `vertexaitensorboard/_http.log`: the create's answer has no `done`;
    the first poll of the operation says `done: true`). Code that forgets to wait for it fails
    here as it would on Vertex; a poll answers the operation as it is."""
    if not (isinstance(result, dict) and "/operations/" in str(result.get("name", ""))):
        return result
    if "done" not in result or "metadata" not in result:
        return result
    return {key: value for key, value in result.items() if key in ("name", "metadata")}


def _repeated(items: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for key, value in items:
        values.setdefault(key, []).append(value)
    return values
