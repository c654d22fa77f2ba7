"""Cloud Storage over its JSON API, for `vertexkit run` and its summary (`cli/summary.py`).

A run makes its pipeline's bucket, and its summary reads one small object (the model's
`model_metadata.json`; for a trainer of the user's own, its feature columns and the first test
shard). google-cloud-storage would import its own modules and google-auth's signing crypto
first: 0.2 s of the CLI's CPU, on the two cores a run's local cloud and its model server share.
Cloud Storage and the local cloud serve the same JSON API (`POST /storage/v1/b`,
`GET /storage/v1/b/BUCKET/o/NAME?alt=media`, `GET /storage/v1/b/BUCKET/o?prefix=P`), so this
speaks it over `vertexkit.vertex_rest`'s transports: plain HTTP to the local cloud, Google's
default credentials against Cloud Storage.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator

from vertexkit.context import CloudContext
from vertexkit.vertex_rest import Sender, answered, sender_for

GOOGLE_ENDPOINT = "https://storage.googleapis.com"
LISTED_FIELDS = "items(name),nextPageToken"  # the partial response a listing needs
CONFLICT = 409
PAGE_SIZE: int | None = None  # None: the service's default page size (1,000 objects)


class StorageRest:
    """Bucket creation, object reads and listings under one Cloud Storage endpoint."""

    def __init__(self, base_url: str, send: Sender) -> None:
        self.base_url = base_url.rstrip("/")
        self._send = send

    @classmethod
    def for_context(cls, context: CloudContext) -> StorageRest:
        endpoint = context.storage_endpoint
        return cls(endpoint or GOOGLE_ENDPOINT, sender_for(endpoint))

    def ensure_bucket(self, project: str, bucket: str) -> None:
        """`buckets.insert`; a bucket that is there already (409) is left as it is."""
        url = f"{self.base_url}/storage/v1/b?{urllib.parse.urlencode({'project': project})}"
        status, body = self._send("POST", url, {"name": bucket})
        if status != CONFLICT:
            answered("POST", url, status, body)

    def read(self, bucket: str, name: str) -> bytes:
        """The object's bytes; a missing one is a ServiceRefused with code 404."""
        return self._get(f"{_object_path(bucket, name)}?alt=media")

    def names(self, bucket: str, prefix: str) -> Iterator[str]:
        """Every object name under `prefix`, page by page."""
        query = {"prefix": prefix, "fields": LISTED_FIELDS}
        if PAGE_SIZE:
            query["maxResults"] = str(PAGE_SIZE)
        while True:
            page = json.loads(
                self._get(f"{_bucket_path(bucket)}/o?{urllib.parse.urlencode(query)}")
            )
            yield from (item["name"] for item in page.get("items", []))
            if not page.get("nextPageToken"):
                return
            query["pageToken"] = page["nextPageToken"]

    def _get(self, path: str) -> bytes:
        url = f"{self.base_url}{path}"
        return answered("GET", url, *self._send("GET", url, None))


def _bucket_path(bucket: str) -> str:
    return f"/storage/v1/b/{urllib.parse.quote(bucket, safe='')}"


def _object_path(bucket: str, name: str) -> str:
    return f"{_bucket_path(bucket)}/o/{urllib.parse.quote(name, safe='')}"
