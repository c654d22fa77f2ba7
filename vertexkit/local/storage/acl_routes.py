"""bucketAccessControls, defaultObjectAccessControls and objectAccessControls (delete, get,
insert, list, patch, update), and the `acl` / `defaultObjectAcl` fields of bucket and object
resources (`projection=full`, PATCH with `acl`, `predefinedAcl`), as google-cloud-storage's
`bucket.acl`, `bucket.default_object_acl` and `blob.acl` use them. See acl.py for what an ACL
means on a one-user machine (nothing is enforced; everything is stored and answered).

A bucket with uniform bucket-level access answers every ACL call with Cloud Storage's 400.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from vertexkit.local.errors import ApiError, bad_request, not_found
from vertexkit.local.storage import acl
from vertexkit.local.storage.models import ObjectRecord, ObjectStore
from vertexkit.local.storage.wire import base_url, check_metageneration, int_query, json_body

OBJECT_ACL_KIND = "objectAcl"
# Cloud Storage's answers, as clients have reported them (terraform-provider-google for
# defaultObjectAcl, googleapis/nodejs-storage#1230 and python-storage users for objects).
BUCKET_UBLA = (
    "Cannot use ACL API to update bucket policy when uniform bucket-level access is "
    f"enabled. {acl.UBLA_DOCS}"
)
OBJECT_VERBS = {
    "GET": "get",
    "POST": "insert",
    "PATCH": "update",
    "PUT": "update",
    "DELETE": "delete",
}
COLLECTIONS = {
    "acl": (acl.BUCKET_KEY, acl.BUCKET_ROLES, "bucket"),
    "defaultObjectAcl": (acl.DEFAULT_OBJECT_KEY, acl.OBJECT_ROLES, "object"),
}


def object_ubla(method: str) -> ApiError:
    return bad_request(
        f"Cannot {OBJECT_VERBS.get(method, 'update')} legacy ACL for an object "
        f"when uniform bucket-level access is enabled. {acl.UBLA_DOCS}"
    )


class AclRoutes:
    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    # -- bucket ACL and default object ACL ----------------------------------------------------
    async def bucket_acl(
        self, request: Request, bucket: str, collection: str, entity: str | None
    ) -> Response:
        body = await json_body(request) if request.method in ("POST", "PATCH", "PUT") else {}
        key, roles, kind = COLLECTIONS[collection]

        def work() -> Any:
            with self.store.records.lock:
                found = self.store.get_bucket(bucket)
                if acl.ubla_enabled(found):
                    raise bad_request(BUCKET_UBLA)
                if collection == "defaultObjectAcl" and request.method == "GET" and not entity:
                    check_metageneration(request, found["metageneration"], "bucket")
                entries = {e["entity"]: e for e in acl.stored_bucket_acl(found, key)}
                answer = _edit(entries, request.method, entity, body, roles)
                if request.method != "GET":
                    self.store.patch_bucket(bucket, {key: list(entries.values())}, None)
                return answer

        answer = await run_in_threadpool(work)
        base = base_url(request)
        return _answer(
            answer,
            lambda e: acl.entry_resource(e, base, bucket, kind=kind),
            f"storage#{kind}AccessControls",
        )

    # -- an object's ACL --------------------------------------------------------------------
    async def object_acl(
        self, request: Request, bucket: str, name: str, entity: str | None
    ) -> Response:
        body = await json_body(request) if request.method in ("POST", "PATCH", "PUT") else {}
        generation = int_query(request, "generation")

        def work() -> tuple[Any, ObjectRecord]:
            with self.store.records.lock:
                found = self.store.get_bucket(bucket)
                if acl.ubla_enabled(found):
                    raise object_ubla(request.method)
                record = self.store.require(bucket, name, generation, hashes=False)
                entries = {e["entity"]: e for e in self.object_entries(found, record)}
                answer = _edit(entries, request.method, entity, body, acl.OBJECT_ROLES)
                if request.method != "GET":
                    self.save_object_entries(record, list(entries.values()))
                return answer, record

        answer, record = await run_in_threadpool(work)
        base, target = base_url(request), (record.name, record.generation)
        return _answer(
            answer,
            lambda e: acl.entry_resource(e, base, bucket, target, "object"),
            "storage#objectAccessControls",
        )

    def object_entries(self, bucket: dict[str, Any], record: ObjectRecord) -> list[dict]:
        """The stored ACL of this generation, else the bucket's default object ACL."""
        stored = self.store.records.get(bucket["name"], OBJECT_ACL_KIND, _object_key(record))
        if stored is not None:
            return stored["entries"]
        return acl.stored_bucket_acl(bucket, acl.DEFAULT_OBJECT_KEY)

    def save_object_entries(self, record: ObjectRecord, entries: list[dict[str, str]]) -> None:
        self.store.records.put(
            record.bucket, OBJECT_ACL_KIND, _object_key(record), {"entries": entries}
        )

    # -- the acl fields of resources ----------------------------------------------------------
    def bucket_changes(self, request: Request, bucket: dict | None, changes: dict) -> dict:
        """A bucket insert/patch body with `acl`, `defaultObjectAcl` and the predefined-ACL
        query parameters turned into the stored (private) ACL keys, validated first."""
        query, project = request.query_params, (bucket or {}).get("project")
        sources = {
            acl.BUCKET_KEY: ("acl", "predefinedAcl", acl.BUCKET_ROLES, False),
            acl.DEFAULT_OBJECT_KEY: (
                "defaultObjectAcl",
                "predefinedDefaultObjectAcl",
                acl.OBJECT_ROLES,
                True,
            ),
        }
        for key, (field, param, roles, for_objects) in sources.items():
            if field in changes or query.get(param):
                if _ubla_after(bucket, changes):
                    raise bad_request(BUCKET_UBLA)
                entries = changes.pop(field, None)
                changes[key] = (
                    acl.predefined(query[param], project, for_objects)
                    if query.get(param)
                    else acl.checked_list(entries, roles, field)
                )
        return changes

    def bucket_fields(self, request: Request, bucket: dict, resource: dict) -> dict:
        """`projection=full` adds the ACLs to a bucket resource (noAcl is the default)."""
        if request.query_params.get("projection") != "full" or acl.ubla_enabled(bucket):
            return resource
        base, name = base_url(request), bucket["name"]
        resource["acl"] = [
            acl.entry_resource(e, base, name) for e in acl.stored_bucket_acl(bucket, acl.BUCKET_KEY)
        ]
        resource["defaultObjectAcl"] = [
            acl.entry_resource(e, base, name, kind="object")
            for e in acl.stored_bucket_acl(bucket, acl.DEFAULT_OBJECT_KEY)
        ]
        return resource

    def object_changes(self, request: Request, bucket: str, changes: dict) -> list | None:
        """Takes `acl` (or `predefinedAcl`) out of an object patch body, validated: the entries
        to store once the patch lands, or None when the patch leaves the ACL alone."""
        predefined = request.query_params.get("predefinedAcl")
        if "acl" not in changes and not predefined:
            return None
        found = self.store.get_bucket(bucket)
        if acl.ubla_enabled(found):
            raise object_ubla("POST")
        entries = changes.pop("acl", None)
        if predefined:
            return acl.predefined(predefined, found["project"], for_objects=True)
        return acl.checked_list(entries, acl.OBJECT_ROLES, "acl")

    def object_fields(self, request: Request, record: ObjectRecord, resource: dict) -> dict:
        if request.query_params.get("projection") != "full":
            return resource
        found = self.store.get_bucket(record.bucket)
        if acl.ubla_enabled(found):
            return resource
        base, target = base_url(request), (record.name, record.generation)
        resource["acl"] = [
            acl.entry_resource(e, base, record.bucket, target, "object")
            for e in self.object_entries(found, record)
        ]
        return resource


def _edit(
    entries: dict[str, dict], method: str, entity: str | None, body: dict, roles: tuple
) -> list[dict] | dict | None:
    """One ACL call on `entries` (changed in place): the entry or entries to answer."""
    if entity is not None:
        entity = acl.checked_entity(entity)
    if method == "GET":
        return list(entries.values()) if entity is None else _existing(entries, entity)
    if method == "POST" and entity is None:
        entry = acl.checked_entry(body, roles)
    elif method == "PATCH" and entity is not None:
        entry = acl.checked_entry({**_existing(entries, entity), **body}, roles, entity)
    elif method == "PUT" and entity is not None:
        entry = acl.checked_entry(body, roles, entity)
    elif method == "DELETE" and entity is not None:
        _existing(entries, entity)
        del entries[entity]
        return None
    else:
        raise ApiError(405, f"{method} is not an access-control method for this path.")
    entries[entry["entity"]] = entry
    return entry


def _existing(entries: dict[str, dict], entity: str) -> dict:
    if entity not in entries:
        raise not_found(f"No access-control entry for entity {entity!r}.")
    return entries[entity]


def _answer(answer: Any, render: Any, list_kind: str) -> Response:
    if answer is None:
        return Response(status_code=204)
    if isinstance(answer, list):
        return JSONResponse({"kind": list_kind, "items": [render(e) for e in answer]})
    return JSONResponse(render(answer))


def _object_key(record: ObjectRecord) -> str:
    return f"{record.name}#{record.generation}"


def _ubla_after(bucket: dict | None, changes: dict) -> bool:
    """Whether uniform bucket-level access holds once `changes` land (it may be turned on in
    the same request)."""
    config = changes.get("iamConfiguration")
    if config is not None:
        return bool((config.get("uniformBucketLevelAccess") or {}).get("enabled"))
    return bool(bucket) and acl.ubla_enabled(bucket)
