"""The bucket methods beyond get/insert/patch/delete: getStorageLayout, lockRetentionPolicy and
restore.

- getStorageLayout answers the bucket's location and hierarchical-namespace setting. Its
  `prefix` parameter only narrows Cloud Storage's permission check, and the one local user holds
  every permission, so it changes nothing here.
- lockRetentionPolicy locks the bucket's retention policy (`isLocked`, as in Cloud Storage):
  ifMetagenerationMatch is required and must hold; a bucket without a retention policy is a 400.
  The lock is recorded and answered; retention itself is not enforced on objects locally.
- restore is refused: the local store deletes a bucket's directory at once and keeps no
  soft-deleted generation to restore.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from vertexkit.local.errors import ApiError, bad_request, refused
from vertexkit.local.storage import responses
from vertexkit.local.storage.models import ObjectStore
from vertexkit.local.storage.wire import base_url, int_query


class BucketMethods:
    VERBS = ("storageLayout", "lockRetentionPolicy", "restore")

    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    async def handle(self, request: Request, bucket: str, verb: str) -> Response:
        if verb == "storageLayout" and request.method == "GET":
            found = await run_in_threadpool(self.store.get_bucket, bucket)
            return JSONResponse(storage_layout(found, base_url(request)))
        if verb == "lockRetentionPolicy" and request.method == "POST":
            locked = await run_in_threadpool(self._lock, request, bucket)
            return JSONResponse(responses.bucket_resource(locked, base_url(request)))
        if verb == "restore" and request.method == "POST":
            raise refused(
                "buckets.restore: the local store keeps no soft-deleted buckets (a deleted "
                "bucket's directory is removed at once), so there is nothing to restore."
            )
        raise ApiError(405, f"{request.method} is not a method of b/{{bucket}}/{verb}.")

    def _lock(self, request: Request, bucket: str) -> dict[str, Any]:
        metageneration = int_query(request, "ifMetagenerationMatch")
        if metageneration is None:
            # Required by the discovery document (buckets.lockRetentionPolicy parameters).
            raise bad_request(
                "ifMetagenerationMatch: required, the bucket's metageneration.", reason="required"
            )
        with self.store.records.lock:
            found = self.store.get_bucket(bucket)
            policy = found["resource"].get("retentionPolicy")
            if not policy:
                raise bad_request(f"Bucket {bucket!r} has no retention policy to lock.")
            locked = {**policy, "isLocked": True}
            return self.store.patch_bucket(bucket, {"retentionPolicy": locked}, metageneration)


def storage_layout(bucket: dict[str, Any], base: str) -> dict[str, Any]:
    """BucketStorageLayout (discovery document): the fields the bucket resource also answers."""
    resource = responses.bucket_resource(bucket, base)
    layout = {
        "kind": "storage#storageLayout",
        "bucket": bucket["name"],
        "location": resource["location"],
        "locationType": resource["locationType"],
    }
    for field in ("customPlacementConfig", "hierarchicalNamespace"):
        if field in resource:
            layout[field] = resource[field]
    return layout
