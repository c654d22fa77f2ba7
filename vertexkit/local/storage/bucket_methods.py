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


def checked_new_bucket(resource: dict[str, Any]) -> dict[str, Any]:
    """A bucket insert body: hierarchical namespace needs uniform bucket-level access (Create
    and manage buckets with hierarchical namespace enabled: "Access control: choose Uniform"),
    and a retention policy is never created locked (isLocked is set by lockRetentionPolicy)."""
    if _hns(resource) and not _ubla(resource):
        raise bad_request(
            "hierarchicalNamespace.enabled: a bucket with hierarchical namespace needs "
            "iamConfiguration.uniformBucketLevelAccess.enabled as well."
        )
    policy = resource.get("retentionPolicy")
    if isinstance(policy, dict):
        resource["retentionPolicy"] = {k: v for k, v in policy.items() if k != "isLocked"}
    location = resource.get("location")
    if location is not None:
        if not isinstance(location, str) or not location.strip():
            raise bad_request(f"location: a Cloud Storage location such as US or us-central1; "
                              f"got {location!r}.")  # fmt: skip
        resource["location"] = location.upper()  # Cloud Storage stores and answers it so
    return resource


def checked_bucket_changes(current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """A bucket patch/update body against the stored bucket: hierarchical namespace is fixed at
    creation, a locked retention policy can only grow its period, isLocked is output only."""
    stored = current["resource"]
    if "hierarchicalNamespace" in changes and _hns(changes) != _hns(stored):
        raise bad_request("hierarchicalNamespace: cannot be changed on an existing bucket.")
    if "retentionPolicy" not in changes:
        return changes
    policy, old = changes["retentionPolicy"], stored.get("retentionPolicy") or {}
    if not old.get("isLocked"):
        if isinstance(policy, dict):
            changes["retentionPolicy"] = {k: v for k, v in policy.items() if k != "isLocked"}
        return changes
    period = int((policy or {}).get("retentionPeriod") or 0)
    if period < int(old["retentionPeriod"]):
        raise ApiError(
            403,
            f"The bucket's retention policy is locked: its retentionPeriod "
            f"({old['retentionPeriod']}s) can be increased, never reduced or removed.",
            reason="forbidden",
        )
    changes["retentionPolicy"] = {**old, **policy, "isLocked": True}
    return changes


def _hns(resource: dict[str, Any]) -> bool:
    return bool((resource.get("hierarchicalNamespace") or {}).get("enabled"))


def _ubla(resource: dict[str, Any]) -> bool:
    config = resource.get("iamConfiguration") or {}
    return bool((config.get("uniformBucketLevelAccess") or {}).get("enabled"))
