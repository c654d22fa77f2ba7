"""A part of the local cloud built once, when first needed, so the server answers at once.

`vertexkit local up` must be ready in well under a second, and the heavy parts of its services
(BigQuery's DuckDB, pyarrow and pandas; every `aiplatform_v1` type behind Vertex's areas) take
seconds to import. Such a part is a `Deferred`: the local cloud's warm-up thread builds it right
after the port is open, and a request that needs it first waits for that build. A failed build
is kept and raised again to every later caller, like a start that failed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Match, Route, Router
from starlette.types import Receive, Scope, Send

from vertexkit.local.errors import not_served
from vertexkit.local.lifecycle import Lifecycle

T = TypeVar("T")
S = TypeVar("S", bound=Lifecycle)
EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


class Once(Generic[T]):
    """`build()` run at most once, whichever thread asks first; the others wait for it."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._done = False
        self._value: T | None = None
        self._error: BaseException | None = None

    def get(self) -> T:
        with self._lock:
            if not self._done:
                try:
                    self._value = self._build()
                except BaseException as exc:
                    self._error = exc
                finally:
                    self._done = True
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def finished(self) -> bool:
        """The build has run (built or failed): `get` will not wait."""
        return self._done

    def built(self) -> T | None:
        """The value once built (waiting for a build in progress), else None: for `close`."""
        with self._lock:
            return self._value


class Deferred(Once[S], Lifecycle):
    """A service built when first needed; its routes answer every path under `prefixes`."""

    def __init__(self, build: Callable[[], S], prefixes: tuple[str, ...]) -> None:
        super().__init__(build)
        self.prefixes = prefixes
        self._router: Router | None = None

    def start(self) -> None:
        self.get()

    def warm(self) -> None:
        built = self.built()
        if built is not None:
            built.warm()

    def close(self) -> None:
        built = self.built()
        if built is not None:
            built.close()

    def routes(self) -> list[BaseRoute]:
        return [_PrefixRoute(self.prefixes, self._dispatch)]

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Once built (or failed), `get` returns at once: no worker thread to hand it to, which
        # was a thread round trip on every request.
        service = self.get() if self.finished() else await run_in_threadpool(self.get)
        if self._router is None:
            # The same matching as when the service's routes stood in the app: a path it does
            # not serve, or a method it does not take, reaches the catch-all (a JSON 404).
            catch_all = Route("/{path:path}", _not_served, methods=EVERY_METHOD)
            self._router = Router(routes=[*service.routes(), catch_all])  # type: ignore[attr-defined]
        await self._router(scope, receive, send)


class _PrefixRoute(BaseRoute):
    """Claims every HTTP request whose path starts with one of `prefixes`."""

    def __init__(self, prefixes: tuple[str, ...], app: Callable[..., Any]) -> None:
        self.prefixes = prefixes
        self.app = app

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and scope["path"].startswith(self.prefixes):
            return Match.FULL, {}
        return Match.NONE, {}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        from starlette.routing import NoMatchFound

        raise NoMatchFound(name, path_params)


async def _not_served(request: Request) -> JSONResponse:
    raise not_served(request.method, request.url.path)
