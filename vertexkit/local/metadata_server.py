"""The metadata server a Vertex AI VM offers, served by the local cloud under `/computeMetadata/v1`.

On Vertex a trainer's Google clients find their project and credentials at the VM's metadata
server (`metadata.google.internal`). Locally every process the local cloud starts is pointed
here (`GCE_METADATA_HOST` for google-auth, `GCE_METADATA_ROOT` for google-cloud-cpp, which
pyarrow's GCS filesystem uses: `vertexkit.local.process_env`), so `google.auth.default()`,
pyarrow and anything else that asks the metadata server gets a local answer at once instead of
waiting on a server that is not there, and never the user's own credentials.

What it answers, as the metadata server does (text unless JSON is asked for; every answer
carries `Metadata-Flavor: Google`, and a request without that header is refused with 403, as
Google's refuses it): the project id and number, the zone, the instance id and hostname, and the
default service account with its email, scopes, aliases and an access token the local cloud
accepts (it checks no token), the list of accounts and the universe domain (the Cloud SDK reads
both), and an ID token for an audience (the Cloud SDK asks one with every access token): a JWT
with Google's claims whose signature is not Google's, so a service that verifies it refuses it,
as it should refuse anything from a local run. The account is the one a Vertex custom job without
`serviceAccount` runs as, the Vertex AI Custom Code Service Agent of the project; a job's own
`serviceAccount` is not reflected here (the server cannot tell which process asks).
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from vertexkit.local.projects import project_number

ROOT = "/computeMetadata/v1"
FLAVOR = {"Metadata-Flavor": "Google"}
SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
Handler = Callable[[Request], Awaitable[Response]]
TOKEN_SECONDS = 3599  # as Google's: a token is refreshed a few minutes before its hour ends


def custom_code_service_agent(project: str) -> str:
    """Who a Vertex custom job without `serviceAccount` runs as (Vertex AI access control)."""
    return f"service-{project_number(project)}@gcp-sa-aiplatform-cc.iam.gserviceaccount.com"


class MetadataServer:
    """The answers for one project in one region (zone `<region>-a`)."""

    def __init__(self, project: str, region: str) -> None:
        self.project = project
        self.zone = f"projects/{project_number(project)}/zones/{region}-a"
        self.email = custom_code_service_agent(project)

    def routes(self) -> list[BaseRoute]:
        account = f"{ROOT}/instance/service-accounts/{{account}}"
        values: dict[str, Callable[[], str]] = {
            f"{ROOT}/project/project-id": lambda: self.project,
            f"{ROOT}/project/numeric-project-id": lambda: project_number(self.project),
            f"{ROOT}/instance/zone": lambda: self.zone,
            f"{ROOT}/instance/id": lambda: project_number(self.project)[:10],
            f"{ROOT}/instance/hostname": lambda: "vertexkit-local.internal",
            f"{ROOT}/instance/service-accounts/": lambda: f"default/\n{self.email}/\n",
            f"{ROOT}/universe/universe-domain": lambda: "googleapis.com",
        }
        handlers = {path: self._text(value) for path, value in values.items()}
        handlers.update({
            f"{account}/email": self._own(self._text(lambda: self.email)),
            f"{account}/scopes": self._own(self._text(lambda: "\n".join(SCOPES))),
            f"{account}/aliases": self._own(self._text(lambda: "default")),
            f"{account}/token": self._own(self.token),
            f"{account}/identity": self._own(self.identity),
            f"{account}/": self._own(self.account),
        })  # fmt: skip
        return [Route(path, _flavored(one), methods=["GET"]) for path, one in handlers.items()]

    def _text(self, value: Callable[[], str]) -> Handler:
        async def answer(_: Request) -> Response:
            return PlainTextResponse(value(), headers=FLAVOR)

        return answer

    def _own(self, handler: Handler) -> Handler:
        """`handler` for this VM's one account (`default` or its email); any other is a 404, as
        the metadata server answers for an account the VM does not have."""

        async def answer(request: Request) -> Response:
            if request.path_params["account"] not in ("default", self.email):
                return PlainTextResponse("Not Found", status_code=404, headers=FLAVOR)
            return await handler(request)

        return answer

    async def token(self, request: Request) -> Response:
        body = {
            "access_token": f"ya29.vertexkit-local.{secrets.token_urlsafe(24)}",
            "expires_in": TOKEN_SECONDS,
            "token_type": "Bearer",
        }
        return JSONResponse(body, headers=FLAVOR)

    async def identity(self, request: Request) -> Response:
        audience = request.query_params.get("audience")
        if not audience:
            return PlainTextResponse(
                "non-empty audience parameter required", status_code=400, headers=FLAVOR
            )
        now = int(time.time())
        claims = {
            "aud": audience,
            "azp": self.email,
            "email": self.email,
            "email_verified": True,
            "exp": now + TOKEN_SECONDS + 1,
            "iat": now,
            "iss": "https://accounts.google.com",
            "sub": project_number(self.project),
        }
        header = {"alg": "RS256", "kid": "vertexkit-local", "typ": "JWT"}
        token = ".".join(_b64(part) for part in (header, claims)) + "." + _b64("unsigned")
        return PlainTextResponse(token, headers=FLAVOR)

    async def account(self, request: Request) -> Response:
        """`.../service-accounts/default/?recursive=true`: google-auth reads email and scopes."""
        info = {"aliases": ["default"], "email": self.email, "scopes": SCOPES}
        return JSONResponse(info, headers=FLAVOR)


def _b64(part: object) -> str:
    raw = part.encode() if isinstance(part, str) else json.dumps(part).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _flavored(handler: Handler) -> Handler:
    """`handler`, answered only to a request with `Metadata-Flavor: Google` (403 otherwise)."""

    async def answer(request: Request) -> Response:
        if request.headers.get("metadata-flavor", "").lower() != "google":
            return PlainTextResponse(
                "Missing required header: Metadata-Flavor", status_code=403, headers=FLAVOR
            )
        return await handler(request)

    return answer
