"""Google's client libraries, created with their defaults, reach the local cloud.

Installed by this folder's `sitecustomize` in every process the local cloud starts (pipeline
tasks, GCPC launchers, job replicas, serving containers) and under `vertexkit local exec`, when
`VERTEX_AI_EMULATOR_HOST` (and the local cloud's other variables) are set. Code written for
Vertex AI (`aiplatform.init(project=..., location=...)`, `bigquery.Client()`,
`storage.Client()`, GCPC's launchers with their hard-coded `<location>-aiplatform.googleapis.com`)
then runs unmodified and never leaves the machine.

Each patch sits at the narrowest point that covers every caller, and is applied right after
the module that holds it is imported (an import hook, so nothing heavy is imported up front and
`importlib.reload` of a patched module patches it again):

- `google.auth._default.default`: anonymous credentials and the local project (no metadata
  server probe, no gcloud files);
- the GAPIC clients of `aiplatform_v1*` and `resourcemanager_v3`: the local endpoint when none
  or a Google host is given, REST instead of gRPC (sync and async), anonymous credentials;
- `aiplatform.initializer._Config`: the SDK's own defaults (endpoint, REST, async credentials);
- `requests.Session.request`: URLs a library builds itself (the SDK's `raw_predict`, GCPC's
  launchers) on a Google host go to the local cloud;
- the GAPIC clients of `bigquery_storage_v1*` (BigQueryReadClient, BigQueryWriteClient, sync
  and async): a plaintext gRPC channel to the local Storage Read/Write API server
  (BIGQUERY_STORAGE_EMULATOR_HOST) when none or Google's host is given; `bigquery.Client`'s own
  `_ensure_bqstorage_client` builds one of these, so `to_dataframe()` and `to_arrow()` take the
  Storage API's fast path as on Google;
- `bigquery.Client._ensure_bqstorage_client`, against a local cloud that names no Storage API
  server: no client (the REST pages, as with `create_bqstorage_client=False`).

BigQuery and Cloud Storage clients already honour BIGQUERY_EMULATOR_HOST and
STORAGE_EMULATOR_HOST themselves; they only need credentials, which the first patch gives.
"""

from __future__ import annotations

import copy
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

VERTEX_ENV = "VERTEX_AI_EMULATOR_HOST"
BIGQUERY_ENV = "BIGQUERY_EMULATOR_HOST"
BIGQUERY_STORAGE_ENV = "BIGQUERY_STORAGE_EMULATOR_HOST"
STORAGE_ENV = "STORAGE_EMULATOR_HOST"
PROJECT_ENV = "GOOGLE_CLOUD_PROJECT"
GAPIC_CLIENT_MODULE = re.compile(
    r"google\.cloud\.(aiplatform_v1\w*|resourcemanager_v3)\.services\.\w+\.client"
)
STORAGE_API_CLIENT_MODULE = re.compile(
    r"google\.cloud\.bigquery_storage_v1\w*\.services\.big_query_(read|write)\.client"
)
STORAGE_API_HOSTS = ("bigquerystorage.googleapis.com", "bigquerystorage.googleapis.com:443")
# The Storage API client's own channel options, kept on the local channel: rows come in messages
# larger than gRPC's 4 MiB default.
STORAGE_API_CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", -1),
    ("grpc.max_receive_message_length", -1),
]
# Google hosts -> the variable that names the local service answering them.
VERTEX_HOST = re.compile(r"([a-z0-9-]+-)?aiplatform\.googleapis\.com")
HOST_ENVS = {
    "cloudresourcemanager.googleapis.com": VERTEX_ENV,  # projects.get: served beside Vertex
    "bigquery.googleapis.com": BIGQUERY_ENV,
    "storage.googleapis.com": STORAGE_ENV,
}
# www.googleapis.com carries several APIs: the path says which.
WWW_PATH_ENVS = (
    ("/bigquery/", BIGQUERY_ENV),
    ("/storage/", STORAGE_ENV),
    ("/upload/storage/", STORAGE_ENV),
    ("/download/storage/", STORAGE_ENV),
)

SDK_PROJECTS = "google.cloud.aiplatform.utils.resource_manager_utils"
_installed = False
_sdk_projects_installed = False


# -- where a Google URL goes ---------------------------------------------------------------------
def local_base(host: str, path: str = "/") -> str | None:
    """The local cloud's base URL for a Google host (and path), or None to leave it alone."""
    host = host.lower().split(":")[0]
    name = None
    if VERTEX_HOST.fullmatch(host):
        name = VERTEX_ENV
    elif host == "www.googleapis.com":
        name = next((env for prefix, env in WWW_PATH_ENVS if path.startswith(prefix)), None)
    else:
        name = HOST_ENVS.get(host)
    value = os.environ.get(name or "")
    return value.rstrip("/") if value else None


def local_url(url: str) -> str | None:
    """`url` with its Google scheme and host replaced by the local cloud's, or None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    base = local_base(parts.hostname, parts.path)
    if base is None:
        return None
    local = urlsplit(base)
    return urlunsplit((local.scheme, local.netloc, parts.path, parts.query, parts.fragment))


def local_endpoint(api_endpoint: str | None) -> str | None:
    """The endpoint a redirected GAPIC client uses: the local Vertex for none or a Google host;
    None when the caller named some other endpoint (left as given)."""
    if not api_endpoint:
        return os.environ.get(VERTEX_ENV)
    if "://" not in api_endpoint:
        api_endpoint = "https://" + api_endpoint
    parts = urlsplit(api_endpoint)
    return local_base(parts.hostname or "", parts.path or "/")


# -- credentials ---------------------------------------------------------------------------------
def local_credentials() -> Any:
    """Anonymous credentials that also satisfy code which builds its own Authorization header.

    GCPC's launchers send `"Bearer " + creds.token` and call `creds.refresh()`; plain
    AnonymousCredentials have no token and refuse to refresh. The local cloud checks no token.
    """
    from google.auth.credentials import AnonymousCredentials

    class LocalCredentials(AnonymousCredentials):
        def __init__(self) -> None:
            super().__init__()
            self.token = "local-cloud-anonymous"

        def refresh(self, request: Any) -> None:
            """Nothing to refresh: the local cloud takes no tokens."""

    return LocalCredentials()


def async_local_credentials() -> Any:
    from google.auth.aio.credentials import AnonymousCredentials

    return AnonymousCredentials()


def patch_auth_default(module: ModuleType) -> None:
    """`google.auth.default()`: no metadata-server probe (a connection attempt off the machine),
    no gcloud files; the local project, as `vertexkit local up` prints it."""
    original = module.default

    def default(*args: Any, **kwargs: Any) -> tuple[Any, str | None]:
        if not os.environ.get(VERTEX_ENV):
            return original(*args, **kwargs)
        return local_credentials(), os.environ.get(PROJECT_ENV)

    default.__wrapped__ = original  # type: ignore[attr-defined]
    module.default = default
    package = sys.modules.get("google.auth")  # `google.auth.default` is bound at its import
    if package is not None and getattr(package, "default", None) is original:
        package.default = default


# -- GAPIC clients -------------------------------------------------------------------------------
def redirected_client_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A GAPIC client's arguments aimed at the local cloud (unchanged when the caller gave its
    own transport object or a non-Google endpoint)."""
    from google.api_core import client_options as client_options_lib

    options = kwargs.get("client_options")
    if isinstance(options, dict):
        options = client_options_lib.from_dict(options)
    options = copy.copy(options) if options else client_options_lib.ClientOptions()
    endpoint = local_endpoint(options.api_endpoint)
    transport = kwargs.get("transport")
    if endpoint is None or not (transport is None or isinstance(transport, str)):
        return kwargs
    # A plain-HTTP local server is reachable only over REST; gRPC would dial Google's host.
    rest = "rest_asyncio" if transport and transport.endswith("asyncio") else "rest"
    options.api_endpoint = endpoint
    options.api_key = None  # a key and credentials together are refused; no key is checked here
    options.credentials_file = None
    credentials = async_local_credentials() if rest == "rest_asyncio" else local_credentials()
    return {**kwargs, "client_options": options, "transport": rest, "credentials": credentials}


def patch_gapic_clients(module: ModuleType) -> None:
    """Every `*Client` class a GAPIC `client` module defines (async clients build one of these
    with transport `grpc_asyncio`, so they are covered too)."""
    for value in list(vars(module).values()):
        if (
            isinstance(value, type)
            and value.__module__ == module.__name__
            and value.__name__.endswith("Client")
        ):
            _wrap_client_init(value)


def _wrap_client_init(client_class: type) -> None:
    original = client_class.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if os.environ.get(VERTEX_ENV):
            kwargs = redirected_client_kwargs(kwargs)
        original(self, *args, **kwargs)

    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    client_class.__init__ = __init__  # type: ignore[misc]


# -- the Vertex SDK ------------------------------------------------------------------------------
def patch_aiplatform_initializer(module: ModuleType) -> None:
    """The SDK's defaults, as `aiplatform.init(api_endpoint=..., api_transport="rest")` would set
    them: its async clients fall back to gRPC unless REST and async credentials are set, and
    the SDK reads `global_config.api_endpoint` itself. Applied to the class (every new config)
    and to `global_config`; a reload of the module runs this again."""
    config_class = module._Config
    original = config_class.__init__

    def __init__(self: Any) -> None:
        original(self)
        if os.environ.get(VERTEX_ENV):
            local_sdk_defaults(self)

    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    config_class.__init__ = __init__
    if os.environ.get(VERTEX_ENV):
        local_sdk_defaults(module.global_config)


def local_sdk_defaults(config: Any) -> None:
    config._api_endpoint = os.environ[VERTEX_ENV]
    config._api_transport = "rest"
    config._async_rest_credentials = async_local_credentials()


def patch_resource_manager_utils(module: ModuleType) -> None:
    """The SDK's `get_project_number` / `get_project_id` ask Resource Manager on Google's host
    over gRPC whatever `aiplatform.init(api_endpoint=...)` says (PipelineJob.submit's bucket
    check, the default compute service account): against no network that is ~60 s of retries
    of UNAVAILABLE. When the SDK is pointed at a plain-HTTP endpoint (a local emulator: Google
    serves Vertex over TLS only), they ask that endpoint's Resource Manager over REST instead,
    with the SDK's credentials; any other endpoint is left to the original."""
    if getattr(module, "_vertexkit_patched", False):
        return
    module._vertexkit_patched = True
    for name in ("get_project_number", "get_project_id"):
        setattr(module, name, _following_sdk_endpoint(module, getattr(module, name)))


def _following_sdk_endpoint(module: ModuleType, original: Callable[..., str]) -> Callable[..., str]:
    def ask(project: str, credentials: Any = None) -> str:
        endpoint = sdk_plain_http_endpoint()
        if endpoint is None:
            return original(project, credentials)
        from google.cloud.aiplatform import initializer

        client = module.resourcemanager.ProjectsClient(
            credentials=credentials or initializer.global_config.credentials,
            transport="rest",
            client_options={"api_endpoint": endpoint},
        )
        found = client.get_project(name=f"projects/{project}")
        # get_project_number answers the number of the name, get_project_id the project ID.
        wants_number = original.__name__ == "get_project_number"
        return found.name.split("/", 1)[1] if wants_number else found.project_id

    ask.__name__ = original.__name__
    ask.__wrapped__ = original  # type: ignore[attr-defined]
    return ask


def sdk_plain_http_endpoint() -> str | None:
    initializer = sys.modules.get("google.cloud.aiplatform.initializer")
    endpoint = getattr(getattr(initializer, "global_config", None), "_api_endpoint", None)
    return endpoint if isinstance(endpoint, str) and endpoint.startswith("http://") else None


# -- URLs built by hand --------------------------------------------------------------------------
def patch_requests_session(module: ModuleType) -> None:
    """`requests.Session.request`: every `requests.get/post` and google-auth's
    `AuthorizedSession` go through it. The SDK builds `https://<region>-aiplatform.googleapis.com/
    ...:rawPredict` itself; GCPC's launchers post to the same host and to
    `www.googleapis.com/bigquery/v2`."""
    original = module.Session.request

    def request(self: Any, method: str, url: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(url, str) and os.environ.get(VERTEX_ENV):
            url = local_url(url) or url
        return original(self, method, url, *args, **kwargs)

    request.__wrapped__ = original  # type: ignore[attr-defined]
    module.Session.request = request


def patch_bigquery_client(module: ModuleType) -> None:
    """No BigQuery Storage API client against a local cloud that serves none (its exports name
    no BIGQUERY_STORAGE_EMULATOR_HOST): `to_dataframe()` would dial Google's host over gRPC.
    Without one the client pages over REST (as with `create_bqstorage_client=False`)."""
    original = module.Client._ensure_bqstorage_client

    def _ensure_bqstorage_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        if os.environ.get(BIGQUERY_ENV) and not os.environ.get(BIGQUERY_STORAGE_ENV):
            return None
        return original(self, *args, **kwargs)

    module.Client._ensure_bqstorage_client = _ensure_bqstorage_client


# -- the BigQuery Storage Read/Write API clients -------------------------------------------------
def storage_api_client_kwargs(client_class: type, kwargs: dict[str, Any]) -> dict[str, Any]:
    """A BigQueryRead/WriteClient's arguments aimed at the local Storage API server: a transport
    on a plaintext channel to it (no credentials: the local server checks none). Unchanged when
    the caller gave its own transport object or a non-Google endpoint."""
    target = os.environ.get(BIGQUERY_STORAGE_ENV)
    options = kwargs.get("client_options")
    endpoint = options.get("api_endpoint") if isinstance(options, dict) else (
        getattr(options, "api_endpoint", None))  # fmt: skip
    transport = kwargs.get("transport")
    if not target or (endpoint and endpoint.split("//")[-1] not in STORAGE_API_HOSTS):
        return kwargs
    if not (transport is None or isinstance(transport, str) or callable(transport)):
        return kwargs  # a transport object the caller built: its own choice
    import grpc

    asynchronous = isinstance(transport, str) and transport.endswith("asyncio")
    name = "grpc_asyncio" if asynchronous else "grpc"
    insecure = grpc.aio.insecure_channel if asynchronous else grpc.insecure_channel
    channel = insecure(target, options=STORAGE_API_CHANNEL_OPTIONS)
    transport_class = client_class.get_transport_class(name)  # type: ignore[attr-defined]
    rest = {key: value for key, value in kwargs.items()
            if key not in ("credentials", "client_options", "transport")}  # fmt: skip
    return {**rest, "transport": transport_class(host=target, channel=channel)}


def patch_storage_api_clients(module: ModuleType) -> None:
    for value in list(vars(module).values()):
        if (
            isinstance(value, type)
            and value.__module__ == module.__name__
            and value.__name__.endswith("Client")
        ):
            _wrap_storage_api_init(value)


def _wrap_storage_api_init(client_class: type) -> None:
    original = client_class.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if os.environ.get(BIGQUERY_STORAGE_ENV):
            kwargs = storage_api_client_kwargs(type(self), kwargs)
        original(self, *args, **kwargs)

    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    client_class.__init__ = __init__  # type: ignore[misc]


# -- applying the patches after each import ------------------------------------------------------
PATCHES: dict[str, Callable[[ModuleType], None]] = {
    "google.auth._default": patch_auth_default,
    "google.cloud.aiplatform.initializer": patch_aiplatform_initializer,
    "requests.sessions": patch_requests_session,
    "google.cloud.bigquery.client": patch_bigquery_client,
    SDK_PROJECTS: patch_resource_manager_utils,
}


def patch_for(name: str) -> Callable[[ModuleType], None] | None:
    if name in PATCHES:
        return PATCHES[name]
    if STORAGE_API_CLIENT_MODULE.fullmatch(name):
        return patch_storage_api_clients
    return patch_gapic_clients if GAPIC_CLIENT_MODULE.fullmatch(name) else None


class _PatchingLoader(importlib.abc.Loader):
    """The module's own loader, then the patch."""

    def __init__(self, loader: Any, patch: Callable[[ModuleType], None]) -> None:
        self._loader = loader
        self._patch = patch

    def create_module(self, spec: Any) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._patch(module)

    def __getattr__(self, name: str) -> Any:  # get_data, is_package, resource readers ...
        return getattr(self._loader, name)


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """Finds the modules in `PATCHES` (or the table given) with the other finders and wraps
    their loader. A reload finds the spec again, so the reloaded module is patched again."""

    def __init__(self, only: dict[str, Callable[[ModuleType], None]] | None = None) -> None:
        self._only = only

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        patch = self._only.get(name) if self._only is not None else patch_for(name)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if isinstance(finder, _PatchAfterImport) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _PatchingLoader(spec.loader, patch)
                return spec
        return None


def install() -> None:
    """Patches the modules already imported and every later import of one (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    sys.meta_path.insert(0, _PatchAfterImport())
    for name, module in list(sys.modules.items()):
        patch = patch_for(name)
        if patch is not None and module is not None:
            patch(module)


def install_sdk_projects() -> None:
    """Only the Resource Manager patch (`patch_resource_manager_utils`), for a process that
    points the SDK at the local cloud itself, with `aiplatform.init(api_endpoint=...)`, outside
    `vertexkit local exec`: it asks nothing of the environment (idempotent)."""
    global _sdk_projects_installed
    if _sdk_projects_installed or _installed:
        return
    _sdk_projects_installed = True
    sys.meta_path.insert(0, _PatchAfterImport({SDK_PROJECTS: patch_resource_manager_utils}))
    module = sys.modules.get(SDK_PROJECTS)
    if module is not None:
        patch_resource_manager_utils(module)


def install_from_env() -> None:
    if os.environ.get(VERTEX_ENV):
        install()


def run_shadowed_sitecustomize(this_file: str) -> None:
    """Runs the next `sitecustomize` on the path (a distribution's own), which ours hides."""
    here = os.path.dirname(os.path.abspath(this_file))
    rest = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
