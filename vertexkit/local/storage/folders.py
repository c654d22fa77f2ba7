"""Folders of hierarchical-namespace buckets (folders delete, deleteRecursive, get, insert, list,
rename) and the bucket's long-running operations (operations get, list, cancel).

A bucket created with `hierarchicalNamespace.enabled` has folders as resources: those created
with folders.insert, plus (as in Cloud Storage, where writing `a/b/c.txt` makes `a/` and
`a/b/`) the folders its object names imply. A bucket without hierarchical namespace answers
every folder call with a 400 saying so. rename and deleteRecursive move or delete the objects
at once and answer a long-running operation that is already done (storage#operation, kept and
readable through operations get/list); cancel of such an operation changes nothing, as for any
finished operation. Folder metadata is local: metageneration starts at 1 and a rename resets
it for the renamed folders.
"""

from __future__ import annotations

import time
import uuid
from typing import Any
from urllib.parse import unquote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from vertexkit.local.errors import ApiError, bad_request, conflict, not_found
from vertexkit.local.storage.models import ObjectStore, Preconditions
from vertexkit.local.storage.names import check_object_name
from vertexkit.local.storage.responses import quoted, rfc3339
from vertexkit.local.storage.wire import (
    base_url,
    bool_query,
    check_metageneration,
    json_body,
    page_of,
)

FOLDER, OPERATION = "folder", "operation"
CONTROL = "type.googleapis.com/google.storage.control.v2."
EVERYTHING = 10**9


class FolderRoutes:
    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    # -- folders -----------------------------------------------------------------------------
    async def folders(self, request: Request, bucket: str, rest: str) -> Response:
        """`rest` is what follows `folders/` (raw): '', '{folder}', '{folder}/deleteRecursive'
        or '{source}/renameTo/folders/{destination}'."""
        body = await json_body(request) if request.method == "POST" and not rest else {}
        answer = await run_in_threadpool(self._call, request, bucket, rest, body)
        if answer is None:
            return Response(status_code=204)
        return JSONResponse(answer)

    def _call(self, request: Request, bucket: str, rest: str, body: dict) -> Any:
        method, base = request.method, base_url(request)
        with self.store.records.lock:
            self._require_hns(bucket)
            self._add_implied(bucket)
            if not rest:
                if method == "POST":
                    return _folder(self._insert(request, bucket, body), bucket, base)
                if method == "GET":
                    return self._list(request, bucket, base)
            elif method == "POST" and "/renameTo/folders/" in rest:
                source, _, target = rest.partition("/renameTo/folders/")
                return self._rename(request, bucket, unquote(source), unquote(target), base)
            elif method == "POST" and rest.endswith("/deleteRecursive"):
                name = unquote(rest.removesuffix("/deleteRecursive"))
                return self._delete_recursive(request, bucket, name, base)
            elif method in ("GET", "DELETE"):
                return self._one(request, bucket, unquote(rest), base)
        raise ApiError(405, f"{method} is not a folders method for this path.")

    def _require_hns(self, bucket: str) -> None:
        found = self.store.get_bucket(bucket)
        if not (found["resource"].get("hierarchicalNamespace") or {}).get("enabled"):
            raise bad_request(
                f"The bucket {bucket!r} does not have hierarchical namespace enabled: folders "
                "are resources only of buckets created with hierarchicalNamespace.enabled.",
                reason="failedPrecondition",
            )

    def _add_implied(self, bucket: str) -> None:
        """Records the folders the bucket's object names imply (a/ and a/b/ for a/b/c)."""
        names = self.store.list(bucket, max_results=EVERYTHING)
        implied = {
            n[: i + 1] for r in names.items for n in [r.name] for i, c in enumerate(n) if c == "/"
        }
        for name in sorted(implied):
            if self.store.records.get(bucket, FOLDER, name) is None:
                self._put(bucket, name)

    def _put(self, bucket: str, name: str, created_ns: int | None = None) -> dict[str, Any]:
        now = time.time_ns()
        return self.store.records.put(
            bucket,
            FOLDER,
            name,
            {
                "name": name,
                "created_ns": created_ns or now,
                "updated_ns": now,
                "metageneration": 1,
            },
        )

    def _insert(self, request: Request, bucket: str, body: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(body) - {"name", "bucket", "kind", "id", "selfLink"})
        if unknown:
            raise bad_request(f"{unknown[0]}: not a writable field of a folder (name is).")
        name = _folder_name(body.get("name"))
        if self.store.records.get(bucket, FOLDER, name) is not None:
            raise conflict(f"The folder you tried to create already exists: {name!r}.")
        missing = [p for p in _parents(name) if self.store.records.get(bucket, FOLDER, p) is None]
        if missing and not bool_query(request, "recursive"):
            raise not_found(
                f"The parent folder {missing[-1]!r} does not exist; create it first "
                "or pass recursive=true."
            )
        for parent in missing:
            self._put(bucket, parent)
        return self._put(bucket, name)

    def _list(self, request: Request, bucket: str, base: str) -> dict[str, Any]:
        query = request.query_params
        prefix, delimiter = query.get("prefix", ""), query.get("delimiter")
        if delimiter not in (None, "", "/"):
            raise bad_request(f"delimiter: the only supported value is '/'; got {delimiter!r}.")
        start, end = query.get("startOffset"), query.get("endOffset")
        chosen = [
            (name, folder)
            for name, folder in self.store.records.items(bucket, FOLDER, prefix)
            if (not start or name >= start)
            and (not end or name < end)
            and (not delimiter or "/" not in name[len(prefix) :].rstrip("/"))
        ]
        items, token = page_of(chosen, request)
        listing: dict[str, Any] = {"kind": "storage#folders"}
        if items:
            listing["items"] = [_folder(f, bucket, base) for f in items]
        if token:
            listing["nextPageToken"] = token
        return listing

    def _one(self, request: Request, bucket: str, name: str, base: str) -> dict | None:
        folder = self._existing(bucket, name)
        check_metageneration(request, folder["metageneration"], "folder")
        if request.method == "GET":
            return _folder(folder, bucket, base)
        if self._objects_under(bucket, name) or len(self._folders_under(bucket, name)) > 1:
            raise conflict(f"The folder you tried to delete is not empty: {name!r}.")
        self.store.records.delete(bucket, FOLDER, name)
        return None

    def _existing(self, bucket: str, name: str) -> dict[str, Any]:
        folder = self.store.records.get(bucket, FOLDER, _folder_name(name))
        if folder is None:
            raise not_found(f"The folder {name!r} does not exist in bucket {bucket!r}.")
        return folder

    def _objects_under(self, bucket: str, prefix: str) -> list[str]:
        return [r.name for r in self.store.list(bucket, prefix, max_results=EVERYTHING).items]

    def _folders_under(self, bucket: str, prefix: str) -> list[str]:
        return [name for name, _ in self.store.records.items(bucket, FOLDER, prefix)]

    def _delete_recursive(self, request: Request, bucket: str, name: str, base: str) -> dict:
        folder = self._existing(bucket, name)
        check_metageneration(request, folder["metageneration"], "folder")
        started = time.time_ns()
        for object_name in self._objects_under(bucket, name):
            self.store.delete(bucket, object_name, Preconditions())
        for folder_name in self._folders_under(bucket, name):
            self.store.records.delete(bucket, FOLDER, folder_name)
        metadata = {"@type": CONTROL + "DeleteFolderRecursiveMetadata", "folderId": name}
        return self._finished(bucket, "delete-folder-recursive", metadata, None, started, base)

    def _rename(self, request: Request, bucket: str, source: str, target: str, base: str) -> dict:
        folder = self._existing(bucket, source)
        check_metageneration(request, folder["metageneration"], "source folder", "ifSource")
        target = _folder_name(target)
        if target == source or target.startswith(source):
            raise bad_request(f"Cannot rename folder {source!r} to {target!r}, inside itself.")
        if self.store.records.get(bucket, FOLDER, target) is not None:
            raise conflict(f"The destination folder already exists: {target!r}.")
        missing = [p for p in _parents(target) if self.store.records.get(bucket, FOLDER, p) is None]
        if missing:
            raise not_found(f"The parent folder {missing[-1]!r} of the destination does not exist.")
        started = time.time_ns()
        for name in self._objects_under(bucket, source):
            self.store.move(bucket, name, target + name[len(source) :], Preconditions())
        for name, record in self.store.records.items(bucket, FOLDER, source):
            self.store.records.delete(bucket, FOLDER, name)
            self._put(bucket, target + name[len(source) :], record["created_ns"])
        renamed = _folder(self._existing(bucket, target), bucket, base)
        metadata = {
            "@type": CONTROL + "RenameFolderMetadata",
            "sourceFolderId": source,
            "destinationFolderId": target,
        }
        return self._finished(bucket, "rename-folder", metadata, renamed, started, base)

    # -- operations --------------------------------------------------------------------------
    def _finished(
        self, bucket: str, kind: str, metadata: dict, response: dict | None, started: int, base: str
    ) -> dict[str, Any]:
        """A done operation, kept for operations get/list."""
        now = rfc3339(time.time_ns())
        metadata["commonMetadata"] = {
            "createTime": rfc3339(started),
            "endTime": now,
            "updateTime": now,
            "type": kind,
            "requestedCancellation": False,
            "progressPercent": 100,
        }
        operation_id = uuid.uuid4().hex
        operation = {
            "name": f"projects/_/buckets/{bucket}/operations/{operation_id}",
            "metadata": metadata,
            "done": True,
            "response": response or {"@type": "type.googleapis.com/google.protobuf.Empty"},
        }
        self.store.records.put(bucket, OPERATION, operation_id, operation)
        return _operation(operation, bucket, operation_id, base)

    async def operations(self, request: Request, bucket: str, rest: str) -> Response:
        method, base = request.method, base_url(request)
        operation_id, _, verb = rest.partition("/")

        def work() -> Any:
            self.store.get_bucket(bucket)
            if not operation_id and method == "GET":
                return self._list_operations(request, bucket, base)
            found = self.store.records.get(bucket, OPERATION, operation_id)
            if found is None:
                raise not_found(f"Operation {operation_id!r} not found in bucket {bucket!r}.")
            if method == "GET" and not verb:
                return _operation(found, bucket, operation_id, base)
            if method == "POST" and verb == "cancel":
                return None  # every local operation is already done: cancel changes nothing
            raise ApiError(405, f"{method} is not an operations method for this path.")

        answer = await run_in_threadpool(work)
        return Response(status_code=204) if answer is None else JSONResponse(answer)

    def _list_operations(self, request: Request, bucket: str, base: str) -> dict[str, Any]:
        if request.query_params.get("filter"):
            raise bad_request(
                "filter: not supported by the local cloud (every operation of a "
                "bucket is listed, and all of them are done)."
            )
        items, token = page_of(self.store.records.items(bucket, OPERATION), request)
        listing: dict[str, Any] = {"kind": "storage#operations"}
        if items:
            listing["operations"] = [
                _operation(o, bucket, o["name"].rsplit("/", 1)[1], base) for o in items
            ]
        if token:
            listing["nextPageToken"] = token
        return listing


def _folder_name(name: Any) -> str:
    """A folder's full name: object-name rules, ending with '/', no empty segment."""
    if not isinstance(name, str) or not name.endswith("/") or "//" in name or name == "/":
        raise bad_request(f"name: a folder name ends with '/' (e.g. 'dir1/dir2/'); got {name!r}.")
    check_object_name(name)
    return name


def _parents(name: str) -> list[str]:
    parts = name.rstrip("/").split("/")[:-1]
    return ["/".join(parts[: i + 1]) + "/" for i in range(len(parts))]


def _folder(folder: dict[str, Any], bucket: str, base: str) -> dict[str, Any]:
    name = folder["name"]
    resource = {
        "kind": "storage#folder",
        "id": f"{bucket}/{name}",
        "selfLink": f"{base}/storage/v1/b/{quoted(bucket)}/folders/{quoted(name)}",
        "bucket": bucket,
        "name": name,
        "metageneration": str(folder["metageneration"]),
        "createTime": rfc3339(folder["created_ns"]),
        "updateTime": rfc3339(folder["updated_ns"]),
    }
    return resource


def _operation(operation: dict, bucket: str, operation_id: str, base: str) -> dict[str, Any]:
    return {
        "kind": "storage#operation",
        "selfLink": f"{base}/storage/v1/b/{quoted(bucket)}/operations/{operation_id}",
        **operation,
    }
