"""The local cloud's HTTP server: one port, three APIs, state under one home directory.

Cloud Storage answers under `/storage/v1`, `/upload/storage/v1` and `/download/storage/v1`,
BigQuery under `/bigquery/v2` and `/upload/bigquery/v2`, Vertex AI under `/v1` and `/ui` (the
path the SDK polls long-running operations on), the KFP v2beta1 API under `/apis/v2beta1`
(`kfp.Client(host=<url>)`). Each service lives in its own folder with its models (state),
responses (wire format) and routes.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import sqlite3
import threading
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from vertexkit.context import CloudContext
from vertexkit.local import cloud_sdk
from vertexkit.local.bigquery.storage_api.server import BigQueryStorageServer
from vertexkit.local.bigquery.warehouse_file import DATABASE_FILE, check_warehouse_file
from vertexkit.local.deferred import Deferred
from vertexkit.local.discovery import DiscoveryService
from vertexkit.local.errors import ApiError, api_error_handler, not_served, spec_error_handler
from vertexkit.local.guard import RequestGuard
from vertexkit.local.handles import CloudHandles
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.metadata_server import MetadataServer
from vertexkit.local.projects import DEFAULT_PROJECT
from vertexkit.local.state import disk_full_handler
from vertexkit.local.vertex.backend import VertexState
from vertexkit.local.vertex.pipelines.standby import LAZY, WARM
from vertexkit.local_up import HOME_ENV, IN_PROCESS, HomeClaim, HomeUse, home_or_default
from vertexkit.specs.errors import SpecError

if TYPE_CHECKING:
    from vertexkit.local.bigquery.routes import BigQueryService
    from vertexkit.local.console.routes import ConsoleService
    from vertexkit.local.kfp.routes import KfpService
    from vertexkit.local.storage.routes import StorageService
    from vertexkit.local.vertex.routes import VertexService

EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
log = logging.getLogger(__name__)


def default_home() -> Path:
    return home_or_default(None)


class LocalCloud:
    """Serves the local cloud on 127.0.0.1, in-process, until `stop()`."""

    def __init__(
        self,
        home: str | Path | None = None,
        port: int = 0,
        project: str = DEFAULT_PROJECT,
        region: str = "us-central1",
        standby_driver: bool = False,
        standby_workers: str = WARM,
        use: HomeUse = IN_PROCESS,
    ) -> None:
        """`standby_driver`: start a pipeline driver and its task workers at once, for a
        pipeline job that is about to be created (`vertex/pipelines/standby.py`);
        `standby_workers`: what its task workers do before the job comes (`standby.WARM`,
        `CLIENTS`, `LAZY`); `use`: who this cloud serves, as the home's claim records it
        (`vertexkit.local_up`: a home another cloud serves is refused, or waited for)."""
        self.home = Path(home).resolve() if home else default_home()
        self._use = use
        self._claim: HomeClaim | None = None
        self._standby_driver = standby_driver
        self._standby_workers = standby_workers
        self.project = project
        self.region = region
        self._requested_port = port
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.services: list[Lifecycle] = []
        self._warm_up: threading.Thread | None = None
        self._started = threading.Event()  # the warm-up has started every service
        self._bigquery: Deferred[BigQueryService] | None = None
        self._bigquery_storage: BigQueryStorageServer | None = None
        self.storage: StorageService
        self.vertex: VertexService
        self.kfp: KfpService

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, wait: bool = True) -> LocalCloud:
        """Serves on the port at once; the services' heavy parts (BigQuery, Vertex's areas and
        the `aiplatform_v1` types) load in a warm-up thread, and a request waits for the part it
        needs. `wait=False` returns before they have loaded: `ready()` then raises what the
        warm-up raised (a refused state file), as `start()` itself does by default. A home
        another local cloud serves raises HomeServed before any state file is opened."""
        self._claim = HomeClaim.take(self.home, self._use)
        # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say so; without it
        # every keep-alive response waits ~40 ms for a delayed ACK (Nagle).
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._socket.bind(("127.0.0.1", self._requested_port))  # loopback only, by design
            app = self._build_app()
        except BaseException:  # a port in use, a refused state file: free the port, the
            # opened services and the home's claim
            self.stop()
            raise
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._socket]},
            daemon=True,
            name="vertexkit-local-cloud",
        )
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                self.stop()
                raise RuntimeError("the local cloud failed to start; see the log above")
            threading.Event().wait(0.01)
        self._claim.announce(self.url, self.env())
        cloud_sdk.write_config(self.home, self.url, self.project)  # before any process starts
        if self._standby_driver:
            self.vertex.backend.driver_standby.start(self._standby_workers)
        # The deployed models' processes have imported only their framework so far (they
        # started with Vertex's state): their models, the first code of the user's that they
        # run, are asked for here, once the config above seals what that code may reach.
        self.vertex.backend.start_deployed_models()
        self._started = threading.Event()  # new for each start: a restart waits again
        self._warm_up = threading.Thread(target=self._start_services, daemon=True,
                                         name="vertexkit-warm-up")  # fmt: skip
        self._warm_up.start()
        if wait:
            self._ready_or_stopped()
        return self

    def _start_services(self) -> None:
        """The warm-up: each service's `start` loads what it deferred (an error is kept by the
        service and raised again to whoever asks for it: `ready()` or a request); the cloud is
        ready then. Each `warm` then starts what a request is likely to need, while the first
        requests are answered."""
        try:
            for service in reversed(self.services):  # Vertex first: most requests are Vertex's
                with contextlib.suppress(Exception):
                    service.start()
        finally:
            self._started.set()
        # Then what is only likely to be asked for (a deployed model's framework, pandas), once
        # no service is importing any more: two threads importing modules that import each other
        # can deadlock. A request importing what a warm imports waits for that import.
        for service in self.services:
            with contextlib.suppress(Exception):
                service.warm()

    def ready(self) -> None:
        """Waits for the warm-up to start every service; raises what a service's start raised
        (a refused state file)."""
        if self._warm_up:
            self._started.wait()
        for service in self.services:
            service.start()  # idempotent: raises the kept error, or returns at once

    def _ready_or_stopped(self) -> None:
        try:
            self.ready()
        except BaseException:
            self.stop()
            raise

    @property
    def bigquery(self) -> BigQueryService:
        if self._bigquery is None:
            raise RuntimeError("the local cloud is not running")
        return self._bigquery.get()

    def stop(self, process_exits: bool = False) -> None:
        """Stops the server and closes every service (their jobs and processes end).
        `process_exits`: the caller's process ends right after, which closes the port and every
        connection; waiting for uvicorn's own shutdown (0.1-0.2 s of ticks) would only delay it."""
        if self._server:  # first: no new request reaches a closing service, and the server's
            self._server.should_exit = True  # exit (up to a 0.1 s tick) overlaps the closes
        if self._warm_up:
            self._warm_up.join()
        for service in reversed(self.services):
            with contextlib.suppress(Exception):
                service.close()
        if process_exits:
            return  # the claim goes with the process
        if self._thread:
            self._thread.join(timeout=10)
        if self._socket:
            self._socket.close()
        if self._claim:
            self._claim.release()  # last: the home is free once nothing of ours writes to it
        self._server = self._thread = self._socket = self._warm_up = self._claim = None
        self._bigquery_storage = None

    def __enter__(self) -> LocalCloud:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------------------
    @property
    def port(self) -> int:
        if not self._socket:
            raise RuntimeError("the local cloud is not running")
        return self._socket.getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def kfp_url(self) -> str:
        """Where `kfp.Client(host=...)` finds the KFP v2beta1 API: the cloud's own port."""
        return self.url

    def context(self) -> CloudContext:
        return CloudContext(
            project=self.project,
            region=self.region,
            storage_endpoint=self.url,
            bigquery_endpoint=self.url,
            vertex_endpoint=self.url,
            bigquery_storage_endpoint=(
                self._bigquery_storage.address if self._bigquery_storage else None
            ),
        )

    def env(self) -> dict[str, str]:
        """`export` variables that point the Google clients (and vertexkit) at this cloud."""
        return {**self.context().env(), HOME_ENV: str(self.home)}

    # -- app ---------------------------------------------------------------------------------
    def _build_app(self) -> Starlette:
        # Vertex's state first, before the services import: the processes of the models
        # deployed before this start begin importing their framework now (`VertexState`).
        vertex_state = VertexState(self.home / "vertex", self.project)
        try:
            return self._build_app_on(vertex_state)
        except BaseException:  # no service owns the state yet: its processes end here
            vertex_state.close()
            raise

    def _build_app_on(self, vertex_state: VertexState) -> Starlette:
        from vertexkit.local.kfp.routes import KfpService
        from vertexkit.local.projects import ProjectsService
        from vertexkit.local.storage.routes import StorageService
        from vertexkit.local.vertex.pipeline_jobs_api import PipelineJobsApi
        from vertexkit.local.vertex.routes import VertexService

        storage = StorageService(self.home / "storage", project=self.project)
        check_warehouse_file(self.home / "bigquery" / DATABASE_FILE)  # before any export
        # BigQuery (DuckDB, pyarrow, pandas, sqlglot: about a second to import) is built by the
        # warm-up thread, or by the first request that needs it, whichever comes first.
        bigquery = Deferred(self._build_bigquery, ("/bigquery/", "/upload/bigquery/"))
        # The Storage Read/Write APIs: gRPC on a port of their own, bound now so that the
        # exports name it; they get the warehouse, waiting for BigQuery's build on a first call.
        self._bigquery_storage = BigQueryStorageServer(lambda: self.bigquery.warehouse)
        vertex = VertexService(vertex_state, storage=storage, cloud=self._handles())
        # The KFP API: its runs are Vertex pipeline jobs, reached through that one handle.
        jobs = PipelineJobsApi(
            vertex.router, vertex.start, f"projects/{self.project}/locations/{self.region}"
        )
        kfp = KfpService(self.home / "kfp", jobs)
        self.storage, self._bigquery, self.vertex, self.kfp = storage, bigquery, vertex, kfp
        # closed in reverse: KFP's firing stops before Vertex's jobs end
        self.services = [storage, bigquery, self._bigquery_storage, vertex, kfp]
        # BigQuery's paths first: a small query's round trip is the call most sensitive to
        # overhead, and no other route claims a path under its prefixes, so no answer changes.
        routes = [*bigquery.routes(), Route("/", _health), Route("/healthz", _health)]
        # Before Vertex's `/v1/{path}`: `/v1/projects/{project}` alone is Resource Manager's.
        routes.extend(ProjectsService([self.project, DEFAULT_PROJECT]).routes())
        routes.extend(MetadataServer(self.project, self.region).routes())
        routes.extend(DiscoveryService().routes())
        for service in self.services:
            if service is not bigquery:
                routes.extend(service.routes())
        console = Deferred(self._build_console, ("/console",))  # imports sqlglot: deferred too
        routes.extend(console.routes())  # reads the services' state
        routes.extend(cloud_sdk.not_redirected_routes())
        routes.append(Route("/{path:path}", _not_served, methods=EVERY_METHOD))
        handlers = {
            ApiError: api_error_handler,
            SpecError: spec_error_handler,  # the one place a broken rule becomes a 400
            OSError: disk_full_handler,  # a full disk is a 507 with the reason, not a bare 500
            sqlite3.OperationalError: disk_full_handler,
        }
        app = Starlette(routes=routes, exception_handlers=handlers)
        app.add_middleware(RequestGuard)
        return app

    def _handles(self) -> CloudHandles:
        """What a service may know of this cloud (`vertexkit.local.handles`)."""
        return CloudHandles(env=self.env, context=self.context,
                            warehouse=lambda: self.bigquery.warehouse)  # fmt: skip

    def _build_console(self) -> ConsoleService:
        from vertexkit.local.console.routes import ConsoleService
        from vertexkit.local.console.sources import ConsoleSources

        vertex = self.vertex
        return ConsoleService(
            ConsoleSources(
                project=self.project,
                vertex_store=vertex.backend.store,
                vertex_home=vertex.backend.home,
                storage=self.storage,
                registry=vertex.registry,
                warehouse=lambda: self.bigquery.warehouse,
                resolve_vertex=vertex.router.resolve,
                vertex_key=vertex.backend.names.inward_text,
                vertex_shown=vertex.backend.names.shown_text,
            )
        )

    def _build_bigquery(self) -> BigQueryService:
        from vertexkit.local.bigquery.routes import BigQueryService

        return BigQueryService(
            self.home / "bigquery",
            storage=self.storage,
            project=self.project,
            # a run's first tasks split tables; a rerun from the cache, `local up` and an
            # in-process cloud have no task coming
            warm_pandas=self._standby_driver and self._standby_workers != LAZY,
        )


async def _not_served(request: Request) -> JSONResponse:
    raise not_served(request.method, request.url.path)


async def _health(_: Request) -> JSONResponse:
    # Metadata-Flavor: google-auth's metadata-server ping asks `/` of GCE_METADATA_IP (here)
    body = {"status": "ok", "service": "vertexkit.local"}
    return JSONResponse(body, headers={"Metadata-Flavor": "Google"})
