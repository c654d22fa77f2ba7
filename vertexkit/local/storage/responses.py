"""The Cloud Storage JSON API wire format: resources, page tokens, ranges, multipart bodies."""

from __future__ import annotations

import base64
import json
import re
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

from vertexkit.local.errors import ApiError, bad_request
from vertexkit.local.projects import DEFAULT_PROJECT, project_number
from vertexkit.local.storage.models import Listing, ObjectRecord


def rfc3339(ns: int) -> str:
    moment = datetime.fromtimestamp(ns / 1e9, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def quoted(name: str) -> str:
    return quote(name, safe="")


def object_resource(record: ObjectRecord, base_url: str) -> dict[str, Any]:
    path = f"b/{quoted(record.bucket)}/o/{quoted(record.name)}"
    etag = base64.b64encode(f"{record.generation}/{record.metageneration}".encode()).decode()
    resource: dict[str, Any] = {
        "kind": "storage#object",
        "id": f"{record.bucket}/{record.name}/{record.generation}",
        "selfLink": f"{base_url}/storage/v1/{path}",
        "mediaLink": f"{base_url}/download/storage/v1/{path}?generation={record.generation}"
        "&alt=media",
        "name": record.name,
        "bucket": record.bucket,
        "generation": str(record.generation),
        "metageneration": str(record.metageneration),
        "contentType": record.content_type,
        "storageClass": "STANDARD",
        "size": str(record.size),
        "etag": etag,
        "timeCreated": rfc3339(record.created_ns),
        "updated": rfc3339(record.updated_ns),
        "timeStorageClassUpdated": rfc3339(record.created_ns),
        "timeFinalized": rfc3339(record.created_ns),
    }
    if record.md5 is not None and "componentCount" not in record.fields:
        resource["md5Hash"] = record.md5  # Cloud Storage gives a composite object no MD5
    if record.crc32c is not None:
        resource["crc32c"] = record.crc32c
    resource.update(record.fields)
    return resource


# Location types (Cloud Storage "Bucket locations"): the multi-regions and the predefined
# dual-regions by name; any other location is a region. A multi-region name with
# customPlacementConfig.dataLocations is a configurable dual-region.
MULTI_REGIONS = frozenset({"US", "EU", "ASIA"})
DUAL_REGIONS = frozenset({"ASIA1", "EUR4", "EUR5", "EUR7", "EUR8", "NAM4"})
DEFAULT_LOCATION = "US"  # discovery document, Bucket.location: "Defaults to US"
SOFT_DELETE_SECONDS = "604800"  # a new bucket's soft-delete policy: 7 days (recorded traffic)
# Fields Cloud Storage computes: a client's value for them is never answered back.
OUTPUT_ONLY = frozenset({
    "kind", "id", "selfLink", "projectNumber", "name", "timeCreated", "updated", "generation",
    "metageneration", "locationType", "etag",
})  # fmt: skip


def bucket_resource(bucket: dict[str, Any], base_url: str) -> dict[str, Any]:
    """A bucket as Cloud Storage answers it: the fields it fills on every bucket (recorded
    traffic, k8s-config-connector's storagebucket _http.log), then what was set on it."""
    stored = {k: v for k, v in bucket["resource"].items() if k not in OUTPUT_ONLY and k[0] != "_"}
    name = bucket["name"]
    created = rfc3339(bucket["created_ns"])
    location = str(stored.get("location") or DEFAULT_LOCATION).upper()
    resource: dict[str, Any] = {
        "kind": "storage#bucket",
        "id": name,
        "selfLink": f"{base_url}/storage/v1/b/{quoted(name)}",
        "projectNumber": owner_number(bucket["project"]),
        "name": name,
        "timeCreated": created,
        "updated": rfc3339(bucket["updated_ns"]),
        "generation": str(bucket["created_ns"]),  # the bucket's creation, in ns as Google's
        "metageneration": str(bucket["metageneration"]),
        "storageClass": "STANDARD",
        "rpo": "DEFAULT",
        "etag": base64.b64encode(f"{name}/{bucket['metageneration']}".encode()).decode(),
        **stored,
        "location": location,
        "locationType": location_type(location, stored),
        "softDeletePolicy": soft_delete_policy(stored.get("softDeletePolicy"), created),
        "iamConfiguration": iam_configuration(stored.get("iamConfiguration")),
    }
    return resource


def owner_number(project: str | None) -> str:
    """The number Resource Manager gives the owning project (a number given as the project
    is that number already)."""
    project = project or DEFAULT_PROJECT
    return project if project.isdigit() else project_number(project)


def location_type(location: str, stored: dict[str, Any]) -> str:
    placement = stored.get("customPlacementConfig") or {}
    if location in DUAL_REGIONS or (location in MULTI_REGIONS and placement.get("dataLocations")):
        return "dual-region"
    return "multi-region" if location in MULTI_REGIONS else "region"


def soft_delete_policy(stored: Any, created: str) -> dict[str, Any]:
    """Seven days unless set; effectiveTime is server-set (discovery: "Server-determined")."""
    policy = dict(stored) if isinstance(stored, dict) else {}
    seconds = policy.get("retentionDurationSeconds", SOFT_DELETE_SECONDS)
    return {**policy, "retentionDurationSeconds": str(seconds), "effectiveTime": created}


def iam_configuration(stored: Any) -> dict[str, Any]:
    """Uniform bucket-level access (off unless set), its legacy twin bucketPolicyOnly
    (discovery: "populated with identical information"), publicAccessPrevention "inherited"."""
    config = dict(stored) if isinstance(stored, dict) else {}
    uniform = config.get("uniformBucketLevelAccess") or {"enabled": False}
    return {
        **config,
        "bucketPolicyOnly": dict(uniform),
        "uniformBucketLevelAccess": dict(uniform),
        "publicAccessPrevention": config.get("publicAccessPrevention") or "inherited",
    }


def listing_resource(listing: Listing, base_url: str) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "storage#objects"}
    if listing.items:
        body["items"] = [object_resource(r, base_url) for r in listing.items]
    if listing.prefixes:
        body["prefixes"] = listing.prefixes
    if listing.next_page_token:
        body["nextPageToken"] = encode_page_token(listing.next_page_token)
    return body


def encode_page_token(last: str) -> str:
    return base64.urlsafe_b64encode(last.encode()).decode()


def decode_page_token(token: str | None) -> str | None:
    if not token:
        return None
    try:
        return base64.urlsafe_b64decode(token.encode()).decode()
    except ValueError:
        raise bad_request(f"Invalid pageToken {token!r}.") from None


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """`Range: bytes=a-b` -> (start, end inclusive), None for a whole-object read; 416 if empty."""
    if not header:
        return None
    match = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", header)
    if not match or match.groups() == ("", ""):
        return None  # GCS ignores a Range header it cannot parse
    first, last = match.groups()
    if first == "":  # suffix: the last N bytes
        start, end = max(size - int(last), 0), size - 1
    else:
        start, end = int(first), min(int(last), size - 1) if last else size - 1
    if start >= size or start > end:
        if size == 0:
            return None
        raise ApiError(
            416, f"Request range not satisfiable: {header!r} for an object of {size} bytes."
        )
    return start, end


def parse_multipart(content_type: str, body: bytes) -> tuple[dict[str, Any], str | None, bytes]:
    """A `multipart/related` upload: (metadata JSON, media content type, media bytes).

    Tolerates LF-only line breaks: gcsfs writes its multipart bodies with bare `\\n`; and a
    boundary in single quotes, as the Cloud SDK's apitools writes it (`gcloud storage cp`), which
    Cloud Storage takes.
    """
    match = re.search(r"""boundary=(?:"([^"]+)"|'([^']+)'|([^;\s]+))""", content_type)
    if not match:
        raise bad_request("A multipart upload needs a boundary in its Content-Type header.")
    delimiter = b"--" + next(group for group in match.groups() if group).encode()
    parts = body.split(delimiter)
    if len(parts) < 4 or not parts[-1].lstrip().startswith(b"--"):
        raise bad_request("A multipart upload must hold a metadata part and a media part.")
    _metadata_headers, metadata_body = _split_part(parts[1])
    media_headers, media = _split_part(parts[2])
    try:
        metadata = json.loads(metadata_body) if metadata_body.strip() else {}
    except json.JSONDecodeError as error:
        raise bad_request(
            f"The metadata part of the multipart upload is not JSON: {error}."
        ) from None
    return metadata, media_headers.get("content-type"), media


def _split_part(part: bytes) -> tuple[dict[str, str], bytes]:
    part = part.removeprefix(b"\r\n").removeprefix(b"\n")
    for separator in (b"\r\n\r\n", b"\n\n"):
        head, found, content = part.partition(separator)
        if found:
            break
    else:
        raise bad_request("A multipart upload part has no blank line after its headers.")
    # The line break before the next delimiter belongs to the delimiter, not to the content.
    if content.endswith(b"\r\n"):
        content = content[:-2]
    elif content.endswith(b"\n"):
        content = content[:-1]
    headers = {}
    for line in head.decode("latin-1").splitlines():
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()
    return headers, content


def hash_header(record: ObjectRecord) -> str:
    return f"crc32c={record.crc32c},md5={record.md5}"


def object_headers(record: ObjectRecord) -> dict[str, str]:
    """Headers GCS sends with media: the clients verify downloads against x-goog-hash."""
    headers = {
        "x-goog-hash": hash_header(record),
        "x-goog-generation": str(record.generation),
        "x-goog-metageneration": str(record.metageneration),
        "x-goog-stored-content-length": str(record.size),
        "x-goog-storage-class": "STANDARD",
        "etag": f'"{record.md5}"',
        "last-modified": datetime.fromtimestamp(record.updated_ns / 1e9, tz=timezone.utc).strftime(
            "%a, %d %b %Y %H:%M:%S GMT"
        ),
    }
    encoding = record.fields.get("contentEncoding")
    if encoding:
        headers["x-goog-stored-content-encoding"] = encoding
        headers["content-encoding"] = encoding
    for key in ("cacheControl", "contentDisposition", "contentLanguage"):
        if record.fields.get(key):
            header = re.sub(r"([A-Z])", r"-\1", key).lower()
            headers[header] = record.fields[key]
    return headers
