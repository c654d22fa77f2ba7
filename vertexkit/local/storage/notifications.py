"""Bucket notification configs (notifications delete, get, insert, list), as
`bucket.notification(...).create()` and `bucket.list_notifications()` call them.

A config is validated as Cloud Storage validates it, recorded and answered in Google's shape,
but NOTHING IS DELIVERED: the local cloud has no Pub/Sub, so no message is ever published for an
object change. That is made visible where it matters: the server logs a warning naming the
config and its topic when the config is recorded. (Refusing insert was the alternative; recording
it lets code that sets up its notifications at start-up run locally.) Whether the topic exists,
or the service agent may publish to it, is not checked (there is no topic to check).
"""

from __future__ import annotations

import base64
import logging
import re
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from vertexkit.local.errors import bad_request, not_found
from vertexkit.local.storage.models import ObjectStore
from vertexkit.local.storage.responses import quoted
from vertexkit.local.storage.wire import base_url, json_body

log = logging.getLogger("vertexkit.local.storage")
KIND = "notification"
# From the discovery document's Notification schema and the REST reference of notifications.
EVENT_TYPES = ("OBJECT_FINALIZE", "OBJECT_METADATA_UPDATE", "OBJECT_DELETE", "OBJECT_ARCHIVE")
PAYLOAD_FORMATS = ("JSON_API_V1", "NONE")
TOPIC = re.compile(r"//pubsub\.googleapis\.com/projects/[^/]+/topics/[^/]+")
MAX_CONFIGS = 100  # "You can have up to 100 notification configurations per bucket" (quotas page)
_OUTPUT_ONLY = {"id", "kind", "etag", "selfLink"}
_WRITABLE = {"topic", "payload_format", "event_types", "custom_attributes", "object_name_prefix"}


class NotificationRoutes:
    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    async def handle(self, request: Request, bucket: str, config_id: str) -> Response:
        method = request.method
        body = await json_body(request) if method == "POST" else {}
        answer = await run_in_threadpool(self._call, method, bucket, config_id, body)
        if answer is None:
            return Response(status_code=204)
        base = base_url(request)
        if isinstance(answer, list):
            listing: dict[str, Any] = {"kind": "storage#notifications"}
            if answer:
                listing["items"] = [_resource(bucket, c, base) for c in answer]
            return JSONResponse(listing)
        return JSONResponse(_resource(bucket, answer, base))

    def _call(self, method: str, bucket: str, config_id: str, body: dict) -> Any:
        records = self.store.records
        with records.lock:
            self.store.get_bucket(bucket)
            if method == "GET" and not config_id:
                return [config for _, config in records.items(bucket, KIND)]
            if method == "POST" and not config_id:
                return self._insert(bucket, body)
            found = records.get(bucket, KIND, config_id)
            if found is None:
                raise not_found(
                    f"Notification configuration {config_id!r} not found on bucket {bucket!r}."
                )
            if method == "DELETE":
                records.delete(bucket, KIND, config_id)
                return None
            return found

    def _insert(self, bucket: str, body: dict[str, Any]) -> dict[str, Any]:
        """Records the config (see the module docstring: it is never delivered locally)."""
        config = checked_config(body)
        existing = self.store.records.items(bucket, KIND)
        if len(existing) >= MAX_CONFIGS:
            raise bad_request(
                f"Bucket {bucket!r} already has {MAX_CONFIGS} notification "
                "configurations, the most Cloud Storage allows."
            )
        config["id"] = str(max((int(key) for key, _ in existing), default=0) + 1)
        self.store.records.put(bucket, KIND, config["id"], config)
        log.warning(
            "notification config %s on gs://%s recorded, but the local cloud has no Pub/Sub: "
            "nothing will be published to %s.",
            config["id"],
            bucket,
            config["topic"],
        )
        return config


def checked_config(body: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(body) - _WRITABLE - _OUTPUT_ONLY)
    if unknown:
        raise bad_request(f"{unknown[0]}: not a field of a notification configuration.")
    topic = body.get("topic")
    if not isinstance(topic, str) or not TOPIC.fullmatch(topic):
        raise bad_request(
            f"topic: required, '//pubsub.googleapis.com/projects/{{project}}/"
            f"topics/{{topic}}'; got {topic!r}."
        )
    config: dict[str, Any] = {
        "topic": topic,
        "payload_format": body.get("payload_format") or "JSON_API_V1",
    }
    if config["payload_format"] not in PAYLOAD_FORMATS:
        raise bad_request(
            f"payload_format: one of {', '.join(PAYLOAD_FORMATS)}; got "
            f"{config['payload_format']!r}."
        )
    events = body.get("event_types")
    if events is not None:
        if not isinstance(events, list) or not set(events) <= set(EVENT_TYPES):
            raise bad_request(f"event_types: a list of {', '.join(EVENT_TYPES)}; got {events!r}.")
        config["event_types"] = events
    attributes = body.get("custom_attributes")
    if attributes is not None:
        if not isinstance(attributes, dict) or not all(
            isinstance(v, str) for v in attributes.values()
        ):
            raise bad_request("custom_attributes: an object of string keys and values.")
        config["custom_attributes"] = attributes
    prefix = body.get("object_name_prefix")
    if prefix is not None:
        if not isinstance(prefix, str):
            raise bad_request("object_name_prefix: a string.")
        config["object_name_prefix"] = prefix
    return config


def _resource(bucket: str, config: dict[str, Any], base: str) -> dict[str, Any]:
    return {
        "kind": "storage#notification",
        "selfLink": f"{base}/storage/v1/b/{quoted(bucket)}/notificationConfigs/{config['id']}",
        "etag": base64.b64encode(config["id"].encode()).decode(),
        **config,
    }
