"""Google's discovery documents of the APIs the local cloud serves, as each Google host serves
its own (`https://bigquery.googleapis.com/$discovery/rest?version=v2`), with the URLs in them
pointing here.

Discovery-based clients build every request from these documents: the `bq` CLI fetches
BigQuery's from the API root it is pointed at (`vertexkit.local.process_env` points it here), as
does google-api-python-client's `build(...)` given a `discoveryServiceUrl`. The documents are
Google's own, the ones google-api-python-client ships (`discovery_cache/documents`); only
`rootUrl`, `mtlsRootUrl` and `baseUrl` are rewritten to the local cloud's URL, so a request
built from one reaches the same path here as it would at Google.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from vertexkit.local.errors import ApiError

SERVED = {("bigquery", "v2"), ("storage", "v1"), ("aiplatform", "v1")}
# `$discovery/rest?version=V` on one shared port: the API whose host would have been asked.
BY_VERSION = {"v2": "bigquery"}


class DiscoveryService:
    def routes(self) -> list[BaseRoute]:
        return [
            Route("/$discovery/rest", self.by_version, methods=["GET"]),
            Route("/discovery/v1/apis/{api}/{version}/rest", self.by_name, methods=["GET"]),
        ]

    async def by_version(self, request: Request) -> JSONResponse:
        version = request.query_params.get("version", "")
        api = BY_VERSION.get(version)
        if api is None:
            raise ApiError(
                400,
                f"The local cloud serves several APIs on one port: `$discovery/rest?version="
                f"{version}` could be any; ask /discovery/v1/apis/API/VERSION/rest with one of "
                f"{', '.join(f'{a}/{v}' for a, v in sorted(SERVED))}.",
            )
        return self._document(request, api, version)

    async def by_name(self, request: Request) -> JSONResponse:
        return self._document(request, request.path_params["api"], request.path_params["version"])

    def _document(self, request: Request, api: str, version: str) -> JSONResponse:
        if (api, version) not in SERVED:
            raise ApiError(
                404,
                f"No discovery document for {api} {version} here: the local cloud serves "
                f"{', '.join(f'{a} {v}' for a, v in sorted(SERVED))}.",
            )
        root = str(request.base_url)  # ends with "/"
        document = dict(google_document(api, version))
        document.update(
            rootUrl=root, mtlsRootUrl=root, baseUrl=root + document.get("servicePath", "")
        )
        return JSONResponse(document)


@cache
def google_document(api: str, version: str) -> dict[str, Any]:
    """Google's document as google-api-python-client (a dependency) ships it: read, not
    imported."""
    spec = importlib.util.find_spec("googleapiclient")
    assert spec is not None and spec.submodule_search_locations
    folder = Path(next(iter(spec.submodule_search_locations))) / "discovery_cache" / "documents"
    return json.loads((folder / f"{api}.{version}.json").read_text())
