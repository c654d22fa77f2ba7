"""Local Cloud Storage: the JSON API as google-cloud-storage and gcsfs call it, on the shared port.

    /storage/v1/b[/...]                 buckets and objects (metadata, list, copy, compose, ...)
    /upload/storage/v1/b/{bucket}/o     media, multipart and resumable uploads
    /download/storage/v1/b/{b}/o/{o}    media (also `/storage/v1/...?alt=media`), with Range

The Python interface at the bottom (`ensure_bucket`, `object_path`, `write_object`, ...) is the
contract the other local services (BigQuery, Vertex AI) use without going through HTTP. Objects
are plain files at `home/<bucket>/<object name>` (see models.py for the whole layout).
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from vertexkit.local.errors import ApiError, bad_request, not_found, not_served, refused
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.storage import iam, responses
from vertexkit.local.storage.acl_routes import AclRoutes
from vertexkit.local.storage.bucket_methods import (
    BucketMethods,
    checked_bucket_changes,
    checked_new_bucket,
)
from vertexkit.local.storage.folders import FolderRoutes
from vertexkit.local.storage.hashing import CHUNK, Hasher
from vertexkit.local.storage.hmac_keys import HmacKeyRoutes
from vertexkit.local.storage.managed_folders import ManagedFolderRoutes
from vertexkit.local.storage.models import (
    WRITABLE_FIELDS,
    ObjectRecord,
    ObjectStore,
    Preconditions,
    UploadSession,
)
from vertexkit.local.storage.names import check_bucket_labels, check_bucket_name, check_object_name
from vertexkit.local.storage.notifications import NotificationRoutes
from vertexkit.local.storage.responses import DEFAULT_PROJECT
from vertexkit.local.storage.wire import base_url as _base_url
from vertexkit.local.storage.wire import int_query as _int_query
from vertexkit.local.storage.wire import json_body as _json_body
from vertexkit.local.storage.wire import storage_errors
from vertexkit.specs import SpecError
from vertexkit.specs.requests import validate_page_size

MAX_LIST_RESULTS = 1000
UPLOAD_ACL_KEY = "_acl"  # a resumable session's requested ACL (never an object field)
Handler = Callable[[Request], Awaitable[Response]]


class StorageService(Lifecycle):
    def __init__(self, home: Path, project: str = DEFAULT_PROJECT) -> None:
        """`project`: the local cloud's project, which owns the buckets the cloud makes itself
        (a pipeline root, a staging bucket): the SDK's bucket-ownership check compares their
        projectNumber with Resource Manager's number for the project it was given."""
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.store = ObjectStore(home, project)
        self.acl = AclRoutes(self.store)
        self.folders = FolderRoutes(self.store)
        self.managed_folders = ManagedFolderRoutes(self.store)
        self.notifications = NotificationRoutes(self.store)
        self.bucket_methods = BucketMethods(self.store)
        self.hmac_keys = HmacKeyRoutes(self.store)

    def close(self) -> None:
        self.store.close()

    def routes(self) -> list[BaseRoute]:
        every = ["GET", "POST", "PUT", "PATCH", "DELETE"]
        return storage_errors([
            Route("/storage/v1/b", self._buckets, methods=["GET", "POST"]),
            Route("/storage/v1/b/{rest:path}", self._dispatch, methods=every),
            Route(
                "/upload/storage/v1/b/{bucket}/o", self._upload, methods=["POST", "PUT", "DELETE"]
            ),
            Route("/download/storage/v1/b/{rest:path}", self._download, methods=["GET"]),
            *self.hmac_keys.routes(),
        ])  # fmt: skip

    # -- routing -----------------------------------------------------------------------------
    async def _dispatch(self, request: Request) -> Response:
        """Splits the RAW path: '/' inside an object name arrives as %2F from
        google-cloud-storage but literally from gcsfs, so `/compose`, `/rewriteTo/...` are
        found on the raw segments and each name is unquoted afterwards."""
        raw = request.scope.get("raw_path", request.url.path.encode()).decode("latin-1")
        rest = raw.split("/storage/v1/b/", 1)[1]
        bucket_part, _, tail = rest.partition("/")
        bucket = check_bucket_name(unquote(bucket_part))
        method = request.method
        if not tail:
            return await self._bucket(request, bucket)
        collection, _, object_part = tail.partition("/")
        if collection != "o":
            return await self._bucket_collection(request, bucket, collection, object_part)
        acl_call = _ACL_PATH.fullmatch(object_part)
        if acl_call:
            name, entity = unquote(acl_call.group(1)), acl_call.group(2)
            return await self.acl.object_acl(request, bucket, name, _unquoted(entity))
        if not object_part:
            if method == "GET":
                return await self._list_objects(request, bucket)
            if method == "POST":  # objects.insert's media goes to /upload/storage/v1 (discovery)
                raise bad_request("Upload requests must include an uploadType URL parameter and "
                                  "a URL path beginning with /upload/")  # fmt: skip
            raise ApiError(405, f"{method} on a bucket's object collection is not supported.")
        iam_call = _OBJECT_IAM_PATH.fullmatch(object_part)
        if iam_call and await self._is_object_iam(bucket, object_part, iam_call.group(1)):
            return await self._object_iam(request, bucket, unquote(iam_call.group(1)),
                                          iam_call.group(2))  # fmt: skip
        if method == "GET" and object_part.endswith("/viewFullContext"):
            raise refused(
                "objects.viewFullContext: the local store keeps no object contexts (an "
                "object's `contexts`), so there is no extended context to view."
            )
        if method == "POST":
            return await self._object_action(request, bucket, object_part)
        name = unquote(object_part)
        if method == "GET":
            if request.query_params.get("alt") == "media":
                return await self._media(request, bucket, name)
            return await self._get_object(request, bucket, name)
        if method in ("PATCH", "PUT"):
            return await self._patch_object(request, bucket, name, replace_all=method == "PUT")
        return await self._delete_object(request, bucket, name)

    async def _bucket_collection(
        self, request: Request, bucket: str, collection: str, rest: str
    ) -> Response:
        """What hangs off a bucket but its objects: IAM, ACLs, folders, notifications..."""
        if collection == "iam":
            return await self._iam(request, bucket, rest)
        if collection in ("acl", "defaultObjectAcl"):
            return await self.acl.bucket_acl(request, bucket, collection, _unquoted(rest))
        if collection == "folders":
            return await self.folders.folders(request, bucket, rest)
        if collection == "operations":
            return await self.folders.operations(request, bucket, rest)
        if collection == "managedFolders":
            return await self.managed_folders.handle(request, bucket, rest)
        if collection == "notificationConfigs":
            return await self.notifications.handle(request, bucket, unquote(rest))
        if collection in BucketMethods.VERBS and not rest:
            return await self.bucket_methods.handle(request, bucket, collection)
        raise not_served(request.method, request.url.path)

    async def _object_action(self, request: Request, bucket: str, object_part: str) -> Response:
        for marker, handler in (
            ("/rewriteTo/b/", self._rewrite),
            ("/copyTo/b/", self._copy),
            ("/moveTo/o/", self._move),
        ):
            if marker in object_part:
                source, _, target = object_part.partition(marker)
                return await handler(request, bucket, unquote(source), target)
        if object_part == "bulkRestore" or object_part.endswith("/restore"):
            raise refused(
                "objects.restore and objects.bulkRestore: the local store keeps only the live "
                "generation of an object (no soft delete), so there is nothing to restore."
            )
        if object_part.endswith("/compose"):
            return await self._compose(request, bucket, unquote(object_part[: -len("/compose")]))
        raise ApiError(405, "POST on an object needs /compose, /copyTo, /rewriteTo or /moveTo.")

    async def _download(self, request: Request) -> Response:
        raw = request.scope.get("raw_path", request.url.path.encode()).decode("latin-1")
        rest = raw.split("/download/storage/v1/b/", 1)[1]
        bucket_part, _, tail = rest.partition("/")
        collection, _, object_part = tail.partition("/")
        if collection != "o" or not object_part:
            raise not_found(f"No object in download path {raw!r}.")
        return await self._media(
            request, check_bucket_name(unquote(bucket_part)), unquote(object_part)
        )

    # -- buckets -----------------------------------------------------------------------------
    async def _buckets(self, request: Request) -> Response:
        project = request.query_params.get("project") or self.store.project
        base = _base_url(request)
        if request.method == "POST":
            body = await _json_body(request)
            name = body.get("name")
            if not isinstance(name, str) or not name:
                raise bad_request("Bucket resource needs a 'name'.")
            resource = {k: v for k, v in body.items() if k != "name"}
            check_bucket_labels(resource.get("labels"), removals=False)
            resource = self.acl.bucket_changes(
                request, {"project": project, "resource": {}}, checked_new_bucket(resource)
            )
            bucket = await run_in_threadpool(self.store.create_bucket, name, project, resource)
            return JSONResponse(self._bucket_answer(request, bucket))
        prefix = request.query_params.get("prefix", "")
        buckets = await run_in_threadpool(self.store.list_buckets, project, prefix)
        after = responses.decode_page_token(request.query_params.get("pageToken"))
        buckets = [b for b in buckets if after is None or b["name"] > after]
        limit = _max_results(request)
        body: dict[str, Any] = {"kind": "storage#buckets"}
        if buckets[:limit]:
            body["items"] = [responses.bucket_resource(b, base) for b in buckets[:limit]]
        if len(buckets) > limit:
            body["nextPageToken"] = responses.encode_page_token(buckets[limit - 1]["name"])
        return JSONResponse(body)

    async def _bucket(self, request: Request, bucket: str) -> Response:
        if request.method == "GET":
            found = await run_in_threadpool(self.store.get_bucket, bucket)
            return JSONResponse(self._bucket_answer(request, found))
        if request.method in ("PATCH", "PUT"):
            changes = {k: v for k, v in (await _json_body(request)).items() if k != "name"}
            check_bucket_labels(changes.get("labels"), removals=request.method == "PATCH")
            metageneration = _int_query(request, "ifMetagenerationMatch")

            def patch() -> dict:
                with self.store.records.lock:  # the checks read what the patch replaces
                    current = self.store.get_bucket(bucket)
                    checked = checked_bucket_changes(current, changes)
                    with_acl = self.acl.bucket_changes(request, current, checked)
                    return self.store.patch_bucket(bucket, with_acl, metageneration)

            patched = await run_in_threadpool(patch)
            return JSONResponse(self._bucket_answer(request, patched))
        if request.method == "DELETE":
            await run_in_threadpool(self.store.delete_bucket, bucket)
            return Response(status_code=204)
        raise ApiError(405, f"{request.method} is not supported on a bucket.")

    def _bucket_answer(self, request: Request, bucket: dict[str, Any]) -> dict[str, Any]:
        resource = responses.bucket_resource(bucket, _base_url(request))
        return self.acl.bucket_fields(request, bucket, resource)

    async def _iam(self, request: Request, bucket: str, verb: str) -> Response:
        """Bucket IAM as the SDK's staging-bucket checks call it: the project owns the bucket,
        and the caller (the only user of this machine) holds every permission it asks about."""
        found = await run_in_threadpool(self.store.get_bucket, bucket)
        if request.method == "GET" and verb == "testPermissions":
            return JSONResponse(iam.granted(request.query_params.getlist("permissions")))
        if request.method == "GET" and not verb:
            return JSONResponse(iam.policy_of(found))
        if request.method == "PUT" and not verb:
            policy = iam.checked_policy(await _json_body(request))
            patched = await run_in_threadpool(
                self.store.patch_bucket, bucket, {iam.STORED_KEY: policy}, None
            )
            return JSONResponse(iam.policy_of(patched))
        raise not_served(request.method, request.url.path)

    async def _is_object_iam(self, bucket: str, object_part: str, object_name: str) -> bool:
        """`o/<name>/iam` is the IAM of object <name> (clients send a name's '/' as %2F), unless
        gcsfs, which sends '/' as is, names an object that really ends in `/iam`."""
        whole = await run_in_threadpool(self.store.stat, bucket, unquote(object_part))
        return whole is None

    async def _object_iam(self, request: Request, bucket: str, name: str, verb: str) -> Response:
        """Object IAM (storage.objects.getIamPolicy/setIamPolicy/testIamPermissions): the one
        user of this machine holds every permission it asks about, as on a bucket; an object's
        own policy is not kept, its access is its ACL (served) or its bucket's IAM policy."""
        if request.method == "GET" and verb == "testPermissions":
            await self._checked_record(request, bucket, name)  # a missing object: Google's 404
            return JSONResponse(iam.granted(request.query_params.getlist("permissions")))
        if request.method in ("GET", "PUT") and not verb:
            raise refused(
                "objects.getIamPolicy and objects.setIamPolicy: the local store keeps no "
                "object-level IAM policy; an object's access is its ACL (objectAccessControls) "
                "or its bucket's IAM policy (buckets.getIamPolicy), both served."
            )
        raise not_served(request.method, request.url.path)

    # -- objects -----------------------------------------------------------------------------
    async def _list_objects(self, request: Request, bucket: str) -> Response:
        query = request.query_params
        max_results = _max_results(request)
        listing = await run_in_threadpool(
            self.store.list,
            bucket,
            prefix=query.get("prefix", ""),
            delimiter=query.get("delimiter") or None,
            max_results=max_results,
            page_token=responses.decode_page_token(query.get("pageToken")),
            start_offset=query.get("startOffset") or None,
            end_offset=query.get("endOffset") or None,
            match_glob=query.get("matchGlob") or None,
        )
        return JSONResponse(responses.listing_resource(listing, _base_url(request)))

    async def _get_object(self, request: Request, bucket: str, name: str) -> Response:
        record = await self._checked_record(request, bucket, name)
        return JSONResponse(self._object_answer(request, record))

    def _object_answer(self, request: Request, record: ObjectRecord) -> dict[str, Any]:
        resource = responses.object_resource(record, _base_url(request))
        return self.acl.object_fields(request, record, resource)

    async def _checked_record(self, request: Request, bucket: str, name: str) -> ObjectRecord:
        generation = _int_query(request, "generation")
        record = await run_in_threadpool(self.store.require, bucket, name, generation)
        _preconditions(request).check(record)
        return record

    async def _patch_object(
        self, request: Request, bucket: str, name: str, replace_all: bool
    ) -> Response:
        changes = await _json_body(request)

        def patch() -> ObjectRecord:
            entries = self.acl.object_changes(request, bucket, changes)  # validated first
            record = self.store.patch(
                bucket, name, changes, _preconditions(request),
                replace_all=replace_all, generation=_int_query(request, "generation"),
            )  # fmt: skip
            if entries is not None:
                self.acl.save_object_entries(record, entries)
            return record

        record = await run_in_threadpool(patch)
        return JSONResponse(self._object_answer(request, record))

    async def _delete_object(self, request: Request, bucket: str, name: str) -> Response:
        generation = _int_query(request, "generation")
        preconditions = _preconditions(request)
        await run_in_threadpool(self.store.delete, bucket, name, preconditions, generation)
        return Response(status_code=204)

    async def _media(self, request: Request, bucket: str, name: str) -> Response:
        record = await self._checked_record(request, bucket, name)
        headers = {**responses.object_headers(record), "accept-ranges": "bytes"}
        if record.is_folder or record.size == 0:
            return Response(b"", headers=_with_content_type(headers, record))
        stream, record = await run_in_threadpool(self._open_current, record)
        span = responses.parse_range(request.headers.get("range"), record.size)
        headers = {**responses.object_headers(record), "accept-ranges": "bytes"}
        start, end = span or (0, record.size - 1)
        headers["content-length"] = str(end - start + 1)
        status = 200
        if span:
            status = 206
            headers["content-range"] = f"bytes {start}-{end}/{record.size}"
        return StreamingResponse(
            _read_span(stream, start, end), status_code=status,
            headers=_with_content_type(headers, record),
        )  # fmt: skip

    def _open_current(self, record: ObjectRecord) -> tuple[Any, ObjectRecord]:
        """Opens the file and returns the record that describes exactly the opened bytes."""
        stream = open(self.store.object_path(record.bucket, record.name), "rb")  # noqa: SIM115
        st = os.fstat(stream.fileno())
        if (st.st_size, st.st_mtime_ns, st.st_ino) != record.file_key:
            fresh = self.store.stat(record.bucket, record.name)
            if fresh is None or fresh.file_key != (st.st_size, st.st_mtime_ns, st.st_ino):
                stream.close()
                raise ApiError(503, f"{record.bucket}/{record.name} changed while being read.")
            record = fresh
        return stream, record

    # -- copy, rewrite, compose, move ----------------------------------------------------------
    async def _copy(self, request: Request, bucket: str, source: str, target: str) -> Response:
        record = await self._copy_to(request, bucket, source, target)
        return JSONResponse(responses.object_resource(record, _base_url(request)))

    async def _rewrite(self, request: Request, bucket: str, source: str, target: str) -> Response:
        record = await self._copy_to(request, bucket, source, target)
        return JSONResponse(
            {
                "kind": "storage#rewriteResponse",
                "totalBytesRewritten": str(record.size),
                "objectSize": str(record.size),
                "done": True,
                "resource": responses.object_resource(record, _base_url(request)),
            }
        )

    async def _copy_to(
        self, request: Request, bucket: str, source: str, target: str
    ) -> ObjectRecord:
        target_bucket_part, _, target_object = target.partition("/o/")
        target_bucket = check_bucket_name(unquote(target_bucket_part))
        target_name = check_object_name(unquote(target_object))
        destination = await _json_body(request)
        source_generation = _int_query(request, "sourceGeneration")
        source_conditions = _preconditions(request, "ifSource")
        preconditions = _preconditions(request)

        def work() -> ObjectRecord:
            record = self.store.require(bucket, source, source_generation)
            source_conditions.check(record, "source object")
            return self.store.copy(record, target_bucket, target_name, destination, preconditions)

        return await run_in_threadpool(work)

    async def _compose(self, request: Request, bucket: str, name: str) -> Response:
        body = await _json_body(request)
        sources = body.get("sourceObjects")
        if not isinstance(sources, list):
            raise bad_request("compose needs 'sourceObjects', a list of {name, generation?}.")
        destination = body.get("destination") or {}
        record = await run_in_threadpool(
            self.store.compose, bucket, name, sources, destination, _preconditions(request)
        )
        return JSONResponse(responses.object_resource(record, _base_url(request)))

    async def _move(self, request: Request, bucket: str, source: str, target: str) -> Response:
        target_name = check_object_name(unquote(target))
        record = await run_in_threadpool(
            self.store.move, bucket, source, target_name, _preconditions(request)
        )
        return JSONResponse(responses.object_resource(record, _base_url(request)))

    # -- uploads -----------------------------------------------------------------------------
    async def _upload(self, request: Request) -> Response:
        bucket = check_bucket_name(request.path_params["bucket"])
        query = request.query_params
        if query.get("upload_id"):
            return await self._resumable_chunk(request, query["upload_id"])
        kind = query.get("uploadType", "media")
        if kind == "media":
            return await self._media_upload(request, bucket)
        if kind == "multipart":
            return await self._multipart_upload(request, bucket)
        if kind == "resumable":
            return await self._start_resumable(request, bucket)
        raise bad_request(f"uploadType {kind!r} is not one of media, multipart, resumable.")

    async def _media_upload(self, request: Request, bucket: str) -> Response:
        name = request.query_params.get("name")
        if not name:
            raise bad_request("A media upload needs the object 'name' query parameter.")
        await run_in_threadpool(self.store.object_path, bucket, name)  # 400 before reading
        entries = await run_in_threadpool(self.acl.object_changes, request, bucket, {})
        temp = self.store.temp_file()
        try:
            hasher = await _receive(request, temp)
        except BaseException:  # a client that hangs up leaves no temp file behind
            temp.unlink(missing_ok=True)
            raise
        record = await run_in_threadpool(
            self.store.commit, temp, hasher, bucket, name,
            request.headers.get("content-type"), {}, _preconditions(request),
        )  # fmt: skip
        return await self._uploaded(request, record, entries)

    async def _uploaded(
        self, request: Request, record: ObjectRecord, entries: list | None
    ) -> Response:
        """The answer to a finished upload, once the ACL it asked for (if any) is stored."""
        if entries is not None:
            await run_in_threadpool(self.acl.save_object_entries, record, entries)
        return JSONResponse(self._object_answer(request, record))

    async def _multipart_upload(self, request: Request, bucket: str) -> Response:
        metadata, media_type, media = responses.parse_multipart(
            request.headers.get("content-type", ""), await request.body()
        )
        name = request.query_params.get("name") or metadata.get("name")
        if not name:
            raise bad_request("A multipart upload needs the object 'name' in its metadata.")
        content_type = metadata.get("contentType") or media_type
        hasher = Hasher()
        hasher.update(media)
        _check_client_hashes(metadata, hasher)
        entries = await run_in_threadpool(self.acl.object_changes, request, bucket, dict(metadata))
        record = await run_in_threadpool(
            lambda: self.store.write_bytes(
                bucket, name, media, content_type, _writable(metadata), _preconditions(request)
            )
        )
        return await self._uploaded(request, record, entries)

    async def _start_resumable(self, request: Request, bucket: str) -> Response:
        metadata = await _json_body(request)
        name = request.query_params.get("name") or metadata.get("name")
        if not name:
            raise bad_request("A resumable upload needs the object 'name' (query or metadata).")
        content_type = metadata.get("contentType") or request.headers.get("x-upload-content-type")
        total = request.headers.get("x-upload-content-length")
        fields = {**_writable(metadata), **_client_hashes(metadata)}
        entries = await run_in_threadpool(self.acl.object_changes, request, bucket, dict(metadata))
        if entries is not None:
            fields[UPLOAD_ACL_KEY] = entries  # kept with the session until the upload finishes
        session = await run_in_threadpool(
            self.store.start_upload, bucket, name, content_type, fields,
            _preconditions(request), int(total) if total and total.isdigit() else None,
        )  # fmt: skip
        location = (
            f"{_base_url(request)}/upload/storage/v1/b/{responses.quoted(bucket)}/o"
            f"?uploadType=resumable&name={responses.quoted(name)}&upload_id={session.id}"
        )
        return Response(
            status_code=200, headers={"Location": location, "X-GUploader-UploadID": session.id}
        )

    async def _resumable_chunk(self, request: Request, upload_id: str) -> Response:
        if request.method == "DELETE":
            await run_in_threadpool(self.store.cancel_upload, upload_id)
            return Response(status_code=499)
        session = await run_in_threadpool(self.store.session, upload_id)
        start, total = _content_range(request.headers.get("content-range"))
        total = total if total is not None else session.total
        received = session.received
        if start is not None and start <= received:
            assert session.hasher is not None
            await _receive(request, session.part, session.hasher, skip=received - start)
            received = session.received
        if total is not None and received > total:
            await run_in_threadpool(self.store.cancel_upload, upload_id)
            raise bad_request(f"The upload sent {received} bytes, more than its total {total}.")
        if total is not None and received == total:
            return await self._finish_resumable(request, session)
        headers = {"Range": f"bytes=0-{received - 1}"} if received else {}
        return Response(status_code=308, headers=headers)

    async def _finish_resumable(self, request: Request, session: UploadSession) -> Response:
        assert session.hasher is not None
        claimed = {k: session.fields.pop(k) for k in ("md5Hash", "crc32c") if k in session.fields}
        try:
            _check_client_hashes(claimed, session.hasher)
        except ApiError:
            await run_in_threadpool(self.store.cancel_upload, session.id)
            raise
        entries = session.fields.pop(UPLOAD_ACL_KEY, None)
        record = await run_in_threadpool(self.store.finish_upload, session)
        return await self._uploaded(request, record, entries)

    # -- Python interface for the other local services --------------------------------------
    def ensure_bucket(self, bucket: str, project: str | None = None) -> None:
        """Makes the bucket if it is missing, owned by `project` (the cloud's by default)."""
        self.store.ensure_bucket(bucket, project or self.store.project)

    def object_path(self, bucket: str, name: str) -> Path:
        """The file that holds gs://bucket/name (it may not exist yet). Rejects `..` etc.

        An empty name or one ending in '/' gives the directory of that prefix.
        """
        if not name.strip("/"):
            return self.store.bucket_root(bucket)
        return self.store.object_path(bucket, name)

    def write_object(
        self, bucket: str, name: str, data: bytes | Path, content_type: str | None = None
    ) -> ObjectRecord:
        """Writes an object atomically (temp file + rename) with its metadata."""
        self.ensure_bucket(bucket)
        if isinstance(data, Path):
            return self.store.write_file(bucket, name, data, content_type)
        return self.store.write_bytes(bucket, name, data, content_type)

    def read_object(self, bucket: str, name: str) -> bytes:
        return self.object_path(bucket, name).read_bytes()

    def list_objects(self, bucket: str, prefix: str = "") -> list[str]:
        """Names of the file-backed objects under `prefix` (folder placeholders excluded)."""
        if not self.store.bucket_exists(bucket):
            return []
        return self.store.all_file_names(bucket, prefix)

    def stat_object(self, bucket: str, name: str) -> ObjectRecord | None:
        return self.store.stat(bucket, name)

    def delete_object(self, bucket: str, name: str) -> bool:
        try:
            self.store.delete(bucket, name, Preconditions())
        except ApiError as error:
            if error.code == 404:
                return False
            raise
        return True

    def gs_uri_to_path(self, uri: str) -> Path:
        """gs://bucket/name -> the local file (or, for gs://bucket/dir/, directory) behind it."""
        if not uri.startswith("gs://"):
            raise bad_request(f"{uri!r} is not a gs:// URI.")
        bucket, _, name = uri.removeprefix("gs://").partition("/")
        return self.object_path(bucket, name)


# -- request helpers ---------------------------------------------------------------------------
_ACL_PATH = re.compile(r"(.+)/acl(?:/([^/]+))?")  # on the raw path: o/{object}/acl[/{entity}]
# On the raw path: o/{object}/iam and o/{object}/iam/testPermissions (storage.v1 discovery).
_OBJECT_IAM_PATH = re.compile(r"(.+)/iam(?:/(testPermissions))?")


def _with_content_type(headers: dict[str, str], record: ObjectRecord) -> dict[str, str]:
    """Media is answered with the object's stored contentType exactly, as Cloud Storage does:
    given as a header, not as `media_type`, which Starlette would extend with `; charset=utf-8`
    for a text/* type."""
    return {**headers, "content-type": record.content_type}


def _unquoted(part: str | None) -> str | None:
    return unquote(part) if part else None


def _max_results(request: Request) -> int:
    """`maxResults`: unset or 0 is the default page, at most MAX_LIST_RESULTS; negative is a 400."""
    try:
        size = validate_page_size(request.query_params.get("maxResults"), "maxResults")
    except SpecError as exc:
        raise bad_request(f"Invalid argument: {exc}") from None
    return min(size or MAX_LIST_RESULTS, MAX_LIST_RESULTS)


def _preconditions(request: Request, prefix: str = "if") -> Preconditions:
    return Preconditions(
        if_generation_match=_int_query(request, f"{prefix}GenerationMatch"),
        if_generation_not_match=_int_query(request, f"{prefix}GenerationNotMatch"),
        if_metageneration_match=_int_query(request, f"{prefix}MetagenerationMatch"),
        if_metageneration_not_match=_int_query(request, f"{prefix}MetagenerationNotMatch"),
    )


def _writable(metadata: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metadata.items() if k in WRITABLE_FIELDS}


def _client_hashes(metadata: dict[str, Any]) -> dict[str, Any]:
    return {k: metadata[k] for k in ("md5Hash", "crc32c") if metadata.get(k)}


def _check_client_hashes(metadata: dict[str, Any], hasher: Hasher) -> None:
    """Hashes a client declares in the metadata must match the bytes, as GCS enforces."""
    for key, actual in (("md5Hash", hasher.md5), ("crc32c", hasher.crc32c)):
        claimed = metadata.get(key)
        if claimed and claimed != actual:
            raise bad_request(
                f"Provided {key} {claimed!r} doesn't match calculated {key} {actual!r}."
            )


_CONTENT_RANGE = re.compile(r"bytes (?:(\d+)-(\d+)|\*)/(\d+|\*)")


def _content_range(header: str | None) -> tuple[int | None, int | None]:
    """`bytes a-b/total`, `bytes */total`, `bytes a-b/*` -> (start or None, total or None)."""
    if not header:
        return 0, None
    match = _CONTENT_RANGE.fullmatch(header.strip())
    if not match:
        raise bad_request(f"Invalid Content-Range {header!r}; expected 'bytes a-b/total'.")
    first, _, total = match.groups()
    return (int(first) if first else None), (int(total) if total != "*" else None)


async def _receive(
    request: Request, target: Path, hasher: Hasher | None = None, skip: int = 0
) -> Hasher:
    """Streams the request body onto the end of `target`, dropping `skip` already-held bytes."""
    hasher = hasher or Hasher()
    with open(target, "ab") as out:
        async for chunk in request.stream():
            if skip:
                dropped = min(skip, len(chunk))
                chunk, skip = chunk[dropped:], skip - dropped
            if chunk:
                out.write(chunk)
                hasher.update(chunk)
    return hasher


async def _read_span(stream: Any, start: int, end: int) -> AsyncIterator[bytes]:
    try:
        stream.seek(start)
        remaining = end - start + 1
        while remaining > 0:
            chunk = stream.read(min(CHUNK, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            yield chunk
    finally:
        stream.close()
