"""A small JSON client of the Vertex AI REST API, for the CLI and a local run.

`models list`, `endpoints list`, `runs list` and `predict` read a few lists and post one
request; `vertexkit run` creates its PipelineJob, follows it (and the jobs its tasks launch) and
sends the summary's prediction. Vertex AI and the local cloud speak the same REST API
(`GET .../models`, `models/M:listVersions`, `endpoints`, `POST .../pipelineJobs`,
`POST endpoints/E:predict`), so these speak it themselves and import neither the aiplatform SDK
nor `aiplatform_v1` (about 2.5 s of CPU a command for the SDK; 0.3 s even for two GAPIC clients,
on the cores a run's local cloud starts on). The local cloud is plain HTTP through the standard
library; Vertex AI gets Google's default credentials and an authorized session, imported only
then.

An answer outside 2xx raises what google.api_core would have carried to the CLI: a 4xx is a
`ServiceRefused` (the user's, one `error:` line, exit 2), anything else a `ServiceFailed`.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from http import HTTPStatus
from typing import Any

from vertexkit.context import CloudContext

TIMEOUT_S = 300  # a cold serving container's first prediction may take a while
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
PAGE_SIZE: int | None = None  # None: the service's default page size
_RFC3339 = re.compile(
    r"(?P<stamp>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(?P<fraction>\d+))?"
    r"(?P<zone>Z|[+-]\d\d:\d\d)$"
)

Answer = tuple[int, bytes]  # HTTP status and body
Sender = Callable[[str, str, dict[str, Any] | None], Answer]


class ServiceRefused(ValueError):
    """A 4xx answer, with the `code` and `message` a google.api_core ClientError carries, so
    `vertexkit.cli.errors.client_error_message` words it the same way."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"the service refused the request ({_status(code)}): {message}")


class ServiceFailed(RuntimeError):
    """A 5xx (or other non-2xx) answer: the service's fault, not the user's."""


class TooManyRequests(ServiceRefused):
    """A 429: refused for now, worth asking again later (Google's retry guidance)."""


class ServiceUnavailable(ServiceFailed):
    """A 500, 502, 503 or 504: the service hiccuped, worth asking again later."""


# What a poll (`pipeline_jobs.follow`) survives, as google.api_core's transient errors are there.
TRANSIENT = (TooManyRequests, ServiceUnavailable, ConnectionError)
_UNAVAILABLE = {500, 502, 503, 504}


class VertexRest:
    """GET and POST JSON under one Vertex AI endpoint (`https://REGION-aiplatform...` or the
    local cloud's `http://127.0.0.1:PORT`)."""

    def __init__(self, base_url: str, parent: str, send: Sender) -> None:
        self.base_url = base_url.rstrip("/")
        self.parent = parent  # projects/P/locations/L
        self._send = send

    @classmethod
    def for_context(cls, context: CloudContext) -> VertexRest:
        base_url = context.vertex_endpoint or (
            f"https://{context.vertex_client_options()['api_endpoint']}"
        )
        return cls(base_url, context.parent, sender_for(context.vertex_endpoint))

    def get(self, path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
        suffix = f"?{urllib.parse.urlencode(query)}" if query else ""
        return self._call("GET", f"{path}{suffix}", None)

    def post(
        self, path: str, body: dict[str, Any], query: dict[str, str] | None = None
    ) -> dict[str, Any]:
        suffix = f"?{urllib.parse.urlencode(query)}" if query else ""
        return self._call("POST", f"{path}{suffix}", body)

    def list(self, path: str, key: str, query: dict[str, str] | None = None) -> Iterator[dict]:
        """Every item of a list, following `nextPageToken` from page to page."""
        query = {**(query or {}), **({"pageSize": str(PAGE_SIZE)} if PAGE_SIZE else {})}
        while True:
            answer = self.get(path, query)
            yield from answer.get(key, [])
            if not answer.get("nextPageToken"):
                return
            query = {**query, "pageToken": answer["nextPageToken"]}

    def _call(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        url = f"{self.base_url}/v1/{path.lstrip('/')}"
        text = answered(method, url, *self._send(method, url, body)).decode()
        return json.loads(text) if text.strip() else {}


def sender_for(endpoint: str | None) -> Sender:
    """Plain HTTP to a local cloud's `endpoint`; Google's credentials where there is none."""
    return _send_plain if endpoint else _authorized_sender()


def answered(method: str, url: str, status: int, body: bytes) -> bytes:
    """The body of a 2xx answer; any other raises what google.api_core would have."""
    if 200 <= status < 300:
        return body
    reason = _error_message(body.decode(errors="replace"))
    if status == 429:
        raise TooManyRequests(status, reason)
    if 400 <= status < 500:
        raise ServiceRefused(status, reason)
    failed = ServiceUnavailable if status in _UNAVAILABLE else ServiceFailed
    raise failed(f"{status} {method} {url}: {reason}")


def _error_message(text: str) -> str:
    """The reason google.api_core reads from an error answer: `error.message`, else the body."""
    try:
        payload = json.loads(text)
    except ValueError:
        return text or "unknown error"
    error = payload.get("error") if isinstance(payload, dict) else None
    return str(error.get("message", "unknown error")) if isinstance(error, dict) else text


def _status(code: int) -> str:
    try:
        return f"{code} {HTTPStatus(code).phrase}"
    except ValueError:
        return str(code)


def _send_plain(method: str, url: str, body: dict[str, Any] | None) -> Answer:
    """The local cloud: plain HTTP on 127.0.0.1, no credentials (as AnonymousCredentials)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as refusal:
        with refusal:
            return refusal.code, refusal.read()
    except urllib.error.URLError as unreached:  # a refused or reset connection, as a poll knows it
        if isinstance(unreached.reason, ConnectionError):
            raise unreached.reason from None
        raise


def _authorized_sender() -> Sender:
    """Vertex AI: Google's default credentials and an authorized session (refreshes tokens)."""
    import google.auth
    import requests
    from google.auth.transport.requests import AuthorizedSession

    credentials, _ = google.auth.default(scopes=[CLOUD_PLATFORM_SCOPE])
    session = AuthorizedSession(credentials)

    def send(method: str, url: str, body: dict[str, Any] | None) -> Answer:
        try:
            answer = session.request(method, url, json=body, timeout=TIMEOUT_S)
        except requests.ConnectionError as unreached:  # as a poll knows it
            raise ConnectionError(str(unreached)) from unreached
        return answer.status_code, answer.content

    return send


def rfc3339_time(text: str) -> datetime | None:
    """An RFC 3339 timestamp as proto-plus gives it to the SDK's users: a UTC datetime, cut
    (not rounded) to microseconds. None for an empty or missing value."""
    found = _RFC3339.match(text or "")
    if not found:
        return None
    stamp = datetime.fromisoformat(found["stamp"]).replace(tzinfo=timezone.utc)
    micros = int((found["fraction"] or "0")[:6].ljust(6, "0"))
    return (stamp + timedelta(microseconds=micros) - _offset(found["zone"])).astimezone(
        timezone.utc
    )


def _offset(zone: str) -> timedelta:
    if zone == "Z":
        return timedelta(0)
    sign = -1 if zone[0] == "-" else 1
    hours, minutes = zone[1:].split(":")
    return sign * timedelta(hours=int(hours), minutes=int(minutes))


def as_proto_value(value: Any) -> Any:
    """JSON as it comes out of a protobuf `Value` (what the SDK's predictions are made of):
    every number is a double, so `2` reads back as `2.0`."""
    if isinstance(value, bool) or not isinstance(value, (int, float, list, dict)):
        return value
    if isinstance(value, list):
        return [as_proto_value(item) for item in value]
    if isinstance(value, dict):
        return {key: as_proto_value(item) for key, item in value.items()}
    return float(value)
