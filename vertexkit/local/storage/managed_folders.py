"""Managed folders (managedFolders delete, get, getIamPolicy, insert, list, setIamPolicy,
testIamPermissions, update), in any bucket, as in Cloud Storage.

A managed folder carries an IAM policy of its own for the objects under its name. With one user
on this machine nothing is enforced: the policy is stored and answered (empty until set, the
bucket's policy applying as in Cloud Storage), and every permission asked about is granted.
update (PATCH) changes nothing but the metageneration: `rapidCacheConfig`, the only other
writable field, is refused (rapid caches are not served locally).
"""

from __future__ import annotations

import base64
import time
from typing import Any
from urllib.parse import unquote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from vertexkit.local.errors import ApiError, bad_request, conflict, not_found
from vertexkit.local.storage import iam
from vertexkit.local.storage.models import ObjectStore
from vertexkit.local.storage.names import check_object_name
from vertexkit.local.storage.responses import quoted, rfc3339
from vertexkit.local.storage.wire import (
    base_url,
    bool_query,
    check_metageneration,
    int_query,
    json_body,
    page_of,
)

KIND = "managedFolder"
_OUTPUT_ONLY = {"kind", "id", "selfLink", "bucket", "metageneration", "createTime", "updateTime"}
POLICY_VERSIONS = (1, 3)  # IAM's: 1, or 3 for policies with conditions


class ManagedFolderRoutes:
    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    async def handle(self, request: Request, bucket: str, rest: str) -> Response:
        """`rest` follows `managedFolders/` (raw): '', '{name}', '{name}/iam[/testPermissions]'."""
        body = await json_body(request) if request.method in ("POST", "PATCH", "PUT") else {}
        answer = await run_in_threadpool(self._call, request, bucket, rest, body)
        return Response(status_code=204) if answer is None else JSONResponse(answer)

    def _call(self, request: Request, bucket: str, rest: str, body: dict) -> Any:
        method, base = request.method, base_url(request)
        raw_name, _, verb = rest.partition("/iam")
        name = unquote(raw_name)
        with self.store.records.lock:
            self.store.get_bucket(bucket)
            if not rest:
                if method == "POST":
                    return _resource(self._insert(bucket, body), bucket, base)
                if method == "GET":
                    return self._list(request, bucket, base)
            elif "/iam" in rest:
                return self._iam(request, bucket, self._existing(bucket, name), verb, body)
            elif method == "GET":
                folder = self._existing(bucket, name)
                check_metageneration(request, folder["metageneration"], "managed folder")
                return _resource(folder, bucket, base)
            elif method == "PATCH":
                return _resource(self._update(request, bucket, name, body), bucket, base)
            elif method == "DELETE":
                return self._delete(request, bucket, name)
        raise ApiError(405, f"{method} is not a managedFolders method for this path.")

    def _insert(self, bucket: str, body: dict[str, Any]) -> dict[str, Any]:
        _check_fields(body)
        name = _name(body.get("name"))
        if self.store.records.get(bucket, KIND, name) is not None:
            raise conflict(f"The managed folder you tried to create already exists: {name!r}.")
        now = time.time_ns()
        folder = {"name": name, "created_ns": now, "updated_ns": now, "metageneration": 1}
        return self.store.records.put(bucket, KIND, name, folder)

    def _list(self, request: Request, bucket: str, base: str) -> dict[str, Any]:
        prefix = request.query_params.get("prefix", "")
        items, token = page_of(self.store.records.items(bucket, KIND, prefix), request)
        listing: dict[str, Any] = {"kind": "storage#managedFolders"}
        if items:
            listing["items"] = [_resource(f, bucket, base) for f in items]
        if token:
            listing["nextPageToken"] = token
        return listing

    def _existing(self, bucket: str, name: str) -> dict[str, Any]:
        folder = self.store.records.get(bucket, KIND, _name(name))
        if folder is None:
            raise not_found(f"The managed folder {name!r} does not exist in bucket {bucket!r}.")
        return folder

    def _update(self, request: Request, bucket: str, name: str, body: dict) -> dict[str, Any]:
        folder = self._existing(bucket, name)
        check_metageneration(request, folder["metageneration"], "managed folder")
        _check_fields(body)
        if body.get("name") not in (None, folder["name"]):
            raise bad_request("name: a managed folder cannot be renamed.")
        changed = {
            **folder,
            "metageneration": folder["metageneration"] + 1,
            "updated_ns": time.time_ns(),
        }
        return self.store.records.put(bucket, KIND, folder["name"], changed)

    def _delete(self, request: Request, bucket: str, name: str) -> None:
        folder = self._existing(bucket, name)
        check_metageneration(request, folder["metageneration"], "managed folder")
        objects = self.store.list(bucket, folder["name"], max_results=1).items
        nested = len(self.store.records.items(bucket, KIND, folder["name"])) > 1
        if (objects or nested) and not bool_query(request, "allowNonEmpty"):
            raise conflict(
                f"The managed folder you tried to delete is not empty: {name!r} "
                "(pass allowNonEmpty=true to delete it anyway)."
            )
        self.store.records.delete(bucket, KIND, folder["name"])

    def _iam(self, request: Request, bucket: str, folder: dict, verb: str, body: dict) -> Any:
        method = request.method
        if method == "GET" and verb == "/testPermissions":
            permissions = request.query_params.getlist("permissions")
            if not permissions:
                raise bad_request("permissions: required, the permissions to test.")
            return iam.granted(permissions)
        if method == "GET" and not verb:
            version = int_query(request, "optionsRequestedPolicyVersion")
            if version is not None and version not in POLICY_VERSIONS:
                raise bad_request(f"optionsRequestedPolicyVersion: 1 or 3; got {version}.")
            return _policy(bucket, folder)
        if method == "PUT" and not verb:
            changed = {
                **folder,
                "bindings": iam.checked_policy(body),
                "policy_version": folder.get("policy_version", 0) + 1,
            }
            self.store.records.put(bucket, KIND, folder["name"], changed)
            return _policy(bucket, changed)
        raise ApiError(405, f"{method} is not a managed folder IAM method for this path.")


def _check_fields(body: dict[str, Any]) -> None:
    if "rapidCacheConfig" in body:
        raise bad_request(
            "rapidCacheConfig: not supported by the local cloud (rapid caches "
            "are an edge service, not served here)."
        )
    unknown = sorted(set(body) - _OUTPUT_ONLY - {"name"})
    if unknown:
        raise bad_request(f"{unknown[0]}: not a field of a managed folder.")


def _name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip("/"):
        raise bad_request(f"name: required, a managed folder name such as 'dir1/'; got {name!r}.")
    name = name if name.endswith("/") else name + "/"  # Cloud Storage names them with the '/'
    check_object_name(name)
    return name


def _resource(folder: dict[str, Any], bucket: str, base: str) -> dict[str, Any]:
    name = folder["name"]
    return {
        "kind": "storage#managedFolder",
        "id": f"{bucket}/{name}",
        "selfLink": f"{base}/storage/v1/b/{quoted(bucket)}/managedFolders/{quoted(name)}",
        "bucket": bucket,
        "name": name,
        "metageneration": str(folder["metageneration"]),
        "createTime": rfc3339(folder["created_ns"]),
        "updateTime": rfc3339(folder["updated_ns"]),
    }


def _policy(bucket: str, folder: dict[str, Any]) -> dict[str, Any]:
    etag = base64.b64encode(f"{folder['name']}/{folder.get('policy_version', 0)}".encode())
    return {
        "kind": "storage#policy",
        "resourceId": f"projects/_/buckets/{bucket}/managedFolders/{folder['name']}",
        "version": 1,
        "etag": etag.decode(),
        "bindings": folder.get("bindings", []),
    }
