"""projects.hmacKeys (create, delete, get, list, update) and projects.serviceAccount.get, as
google-cloud-storage's `client.create_hmac_key`, `list_hmac_keys`, `HMACKeyMetadata` and
`client.get_service_account_email` call them.

HMAC keys are created, listed, deactivated and deleted as in Cloud Storage (the secret is
answered once, by create, and never kept), but they authenticate nothing here: HMAC keys sign
requests to the XML (S3-compatible) API, which the local cloud does not serve.

The service account is Cloud Storage's service agent of the project,
`service-<PROJECT_NUMBER>@gs-project-accounts.iam.gserviceaccount.com` (the REST reference of
projects.serviceAccount), with the number `vertexkit.local.projects` gives the project.
"""

from __future__ import annotations

import base64
import re
import secrets
import string
import time
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from vertexkit.local.errors import ApiError, bad_request, not_found
from vertexkit.local.projects import project_number
from vertexkit.local.storage.models import ObjectStore
from vertexkit.local.storage.responses import rfc3339
from vertexkit.local.storage.wire import base_url, bool_query, json_body, page_of
from vertexkit.specs import SpecError
from vertexkit.specs.naming import validate_project_id

KIND = "hmacKey"
STATES = ("ACTIVE", "INACTIVE")  # the states update may set (REST reference of hmacKeys.update)
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
# A Cloud Storage access ID of a service account's key: "GOOG1E" and 55 more characters.
_ACCESS_ID_CHARS = string.ascii_uppercase + string.digits


class HmacKeyRoutes:
    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    def routes(self) -> list[BaseRoute]:
        base = "/storage/v1/projects/{project}"
        return [
            Route(f"{base}/serviceAccount", self.service_account, methods=["GET"]),
            Route(f"{base}/hmacKeys", self.collection, methods=["GET", "POST"]),
            Route(f"{base}/hmacKeys/{{access_id}}", self.key, methods=["GET", "PUT", "DELETE"]),
        ]

    async def service_account(self, request: Request) -> Response:
        project = _project(request)
        number = project if project.isdigit() else project_number(project)
        return JSONResponse(
            {
                "kind": "storage#serviceAccount",
                "email_address": f"service-{number}@gs-project-accounts.iam.gserviceaccount.com",
            }
        )

    async def collection(self, request: Request) -> Response:
        project, base = _project(request), base_url(request)
        if request.method == "POST":
            metadata, secret = await run_in_threadpool(self._create, request, project)
            return JSONResponse(
                {"kind": "storage#hmacKey", "metadata": _resource(metadata, base), "secret": secret}
            )
        keys = await run_in_threadpool(self.store.records.items, _scope(project), KIND)
        email = request.query_params.get("serviceAccountEmail")
        deleted = bool_query(request, "showDeletedKeys")
        chosen = [
            (k, m)
            for k, m in keys
            if (not email or m["serviceAccountEmail"] == email)
            and (deleted or m["state"] != "DELETED")
        ]
        items, token = page_of(chosen, request, "maxResults", limit=250)
        body: dict[str, Any] = {"kind": "storage#hmacKeysMetadata"}
        if items:
            body["items"] = [_resource(m, base) for m in items]
        if token:
            body["nextPageToken"] = token
        return JSONResponse(body)

    def _create(self, request: Request, project: str) -> tuple[dict[str, Any], str]:
        email = request.query_params.get("serviceAccountEmail")
        if not email or not _EMAIL.fullmatch(email):
            raise bad_request(
                f"serviceAccountEmail: required, a service account's email; got {email!r}."
            )
        now = time.time_ns()
        access_id = "GOOG1E" + "".join(secrets.choice(_ACCESS_ID_CHARS) for _ in range(55))
        metadata = {
            "accessId": access_id,
            "projectId": project,
            "serviceAccountEmail": email,
            "state": "ACTIVE",
            "created_ns": now,
            "updated_ns": now,
            "version": 1,
        }
        self.store.records.put(_scope(project), KIND, access_id, metadata)
        return metadata, base64.b64encode(secrets.token_bytes(30)).decode()  # 40 characters

    async def key(self, request: Request) -> Response:
        project, access_id = _project(request), request.path_params["access_id"]
        body = await json_body(request) if request.method == "PUT" else {}
        answer = await run_in_threadpool(self._key_call, request.method, project, access_id, body)
        if answer is None:
            return Response(status_code=204)
        return JSONResponse(_resource(answer, base_url(request)))

    def _key_call(self, method: str, project: str, access_id: str, body: dict) -> dict | None:
        records, scope = self.store.records, _scope(project)
        with records.lock:
            metadata = records.get(scope, KIND, access_id)
            if metadata is None:
                raise not_found(f"Access ID not found in project {project!r}: {access_id!r}.")
            if method == "GET":
                return metadata
            if method == "DELETE":
                if metadata["state"] != "INACTIVE":
                    raise bad_request(
                        f"Cannot delete keys in {metadata['state']!r} state; "
                        "deactivate the key (state INACTIVE) first."
                    )
                records.put(scope, KIND, access_id, _changed(metadata, "DELETED"))
                return None
            return records.put(scope, KIND, access_id, _updated(metadata, body))


def _updated(metadata: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """hmacKeys.update: only `state` changes (ACTIVE <-> INACTIVE); a stale etag is a 412."""
    etag = body.get("etag")
    if etag and etag != _etag(metadata):
        raise ApiError(
            412, f"etag {etag!r} does not match the key's current etag.", reason="conditionNotMet"
        )
    if metadata["state"] == "DELETED":
        raise bad_request("Cannot update a key in 'DELETED' state.")
    state = body.get("state")
    if state not in STATES:
        raise bad_request(f"state: required, one of {', '.join(STATES)}; got {state!r}.")
    for field in ("accessId", "serviceAccountEmail", "projectId"):
        if body.get(field) not in (None, metadata[field]):
            raise bad_request(f"{field}: cannot be changed (only state can).")
    return _changed(metadata, state)


def _changed(metadata: dict[str, Any], state: str) -> dict[str, Any]:
    return {
        **metadata,
        "state": state,
        "updated_ns": time.time_ns(),
        "version": metadata["version"] + 1,
    }


def _etag(metadata: dict[str, Any]) -> str:
    return base64.b64encode(f"{metadata['accessId']}/{metadata['version']}".encode()).decode()


def _resource(metadata: dict[str, Any], base: str) -> dict[str, Any]:
    project, access_id = metadata["projectId"], metadata["accessId"]
    return {
        "kind": "storage#hmacKeyMetadata",
        "id": f"{project}/{access_id}",
        "selfLink": f"{base}/storage/v1/projects/{project}/hmacKeys/{access_id}",
        "accessId": access_id,
        "projectId": project,
        "serviceAccountEmail": metadata["serviceAccountEmail"],
        "state": metadata["state"],
        "timeCreated": rfc3339(metadata["created_ns"]),
        "updated": rfc3339(metadata["updated_ns"]),
        "etag": _etag(metadata),
    }


def _project(request: Request) -> str:
    project = request.path_params["project"]
    try:
        return validate_project_id(project, "projectId")
    except SpecError as exc:
        raise bad_request(str(exc)) from None


def _scope(project: str) -> str:
    return f"projects/{project}"  # never a bucket name (no '/'), so bucket deletes leave it
