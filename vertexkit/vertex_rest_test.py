"""The REST reader's conversions give what Google's libraries give for the same JSON, and its
errors carry what google.api_core's exceptions carried to the CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.api_core import exceptions
from google.api_core.datetime_helpers import DatetimeWithNanoseconds
from google.protobuf import json_format, struct_pb2

from vertexkit.cli.errors import client_error_message, user_error_message
from vertexkit.context import CloudContext
from vertexkit.vertex_rest import (
    TRANSIENT,
    ServiceFailed,
    ServiceRefused,
    ServiceUnavailable,
    TooManyRequests,
    VertexRest,
    _send_plain,
    as_proto_value,
    rfc3339_time,
)


@pytest.mark.parametrize(
    "stamp",
    [
        pytest.param("2026-11-30T21:00:00.123456Z", id="microseconds"),
        pytest.param("2026-11-30T21:00:00Z", id="whole-seconds"),
        pytest.param("2026-11-30T21:00:00.123456789Z", id="nanoseconds-cut"),
        pytest.param("2026-11-30T21:00:00.1Z", id="tenths"),
        pytest.param("2026-12-31T23:59:59.999999999Z", id="year-end"),
    ],
)
def test_times_read_as_proto_plus_gives_them(stamp: str) -> None:
    expected = DatetimeWithNanoseconds.from_rfc3339(stamp)
    read = rfc3339_time(stamp)
    assert read is not None
    assert read.isoformat() == expected.isoformat()  # `runs list`
    assert str(read)[:19] == str(expected)[:19]  # `models list`


@pytest.mark.parametrize(
    ("stamp", "iso"),
    [
        pytest.param("2026-11-30T23:30:00+02:00", "2026-11-30T21:30:00+00:00", id="east"),
        pytest.param("2026-11-30T21:30:00.5-01:00", "2026-11-30T22:30:00.500000+00:00", id="west"),
    ],
)
def test_times_with_an_offset_read_in_utc(stamp: str, iso: str) -> None:
    read = rfc3339_time(stamp)
    assert read is not None and read.isoformat() == iso


@pytest.mark.parametrize("missing", ["", "yesterday", "2026-11-30"])
def test_a_missing_or_unreadable_time_is_none(missing: str) -> None:
    assert rfc3339_time(missing) is None


@pytest.mark.parametrize(
    "value",
    [
        pytest.param([1, 2.5, "x"], id="list"),
        pytest.param({"a": 3, "b": [True, None, {"c": 0}]}, id="nested"),
        pytest.param([[39, 18.7], [1e20, -2]], id="rows"),
    ],
)
def test_json_reads_as_protobuf_values_do(value: Any) -> None:
    message = struct_pb2.Value()
    json_format.ParseDict(value, message)
    # as printed: `2` and `2.0` differ. Keys are sorted: protobuf's maps keep no order.
    printed = json.dumps(as_proto_value(value), sort_keys=True)
    assert printed == json.dumps(json_format.MessageToDict(message), sort_keys=True)


def _answering(status: int, body: str) -> VertexRest:
    """A reader whose transport returns one fixed answer: the local cloud never answers 5xx
    or a non-JSON error on purpose, and these are the branches that handle them."""
    return VertexRest(
        "http://127.0.0.1:1", "projects/p/locations/us-central1", lambda *_: (status, body.encode())
    )


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        pytest.param(400, '{"error": {"code": 400, "message": "bad [/x]"}}', "bad [/x]", id="400"),
        pytest.param(
            404, '{"error": {"message": "no such endpoint"}}', "no such endpoint", id="404"
        ),
        pytest.param(403, "not JSON", "not JSON", id="403-text"),
        pytest.param(429, "", "unknown error", id="429-empty"),
    ],
)
def test_a_4xx_is_worded_as_the_sdks_client_error(status: int, body: str, reason: str) -> None:
    with pytest.raises(ServiceRefused) as refused:
        _answering(status, body).get("projects/p/locations/us-central1/models")
    sdk_error = exceptions.from_http_status(status, f"GET http://x/v1/models: {reason}")
    assert client_error_message(refused.value) == client_error_message(sdk_error)
    assert str(refused.value) == client_error_message(sdk_error)  # what the CLI prints


@pytest.mark.parametrize(
    ("status", "kind"),
    [(429, TooManyRequests), (500, ServiceUnavailable), (503, ServiceUnavailable)],
)
def test_the_statuses_googles_retry_guidance_retries_are_transient(status: int, kind: type) -> None:
    # https://cloud.google.com/storage/docs/retry-strategy: 408, 429 and 5xx are retried;
    # a poll (`pipeline_jobs.follow`) asks again on these, as on google.api_core's.
    with pytest.raises(kind) as raised:
        _answering(status, "").get("x")
    assert isinstance(raised.value, TRANSIENT)


def test_an_unreachable_service_is_a_connection_error() -> None:
    reader = VertexRest("http://127.0.0.1:1", "projects/p/locations/us-central1", _send_plain)
    with pytest.raises(ConnectionError):
        reader.get("x")  # port 1: nothing listens, the connection is refused


def test_a_5xx_is_not_the_users() -> None:
    with pytest.raises(ServiceFailed) as failed:
        _answering(500, '{"error": {"message": "boom"}}').get("x")
    assert str(failed.value) == "500 GET http://127.0.0.1:1/v1/x: boom"
    assert user_error_message(failed.value) is None  # the CLI reports it as a bug (exit 1)


def test_vertex_ai_is_reached_at_its_regional_host(monkeypatch: pytest.MonkeyPatch) -> None:
    # No Google credentials exist on this machine: only the credential lookup is left out.
    monkeypatch.setattr("vertexkit.vertex_rest._authorized_sender", lambda: None)
    reader = VertexRest.for_context(CloudContext(project="p", region="europe-west4"))
    assert reader.base_url == "https://europe-west4-aiplatform.googleapis.com"
    assert reader.parent == "projects/p/locations/europe-west4"
