"""Data points of one TensorBoard time series, as `runs:write` stores them and `read` answers.

A series keeps its points in its stored resource, under `_points` (one per step, as Vertex
indexes them: "repeated writes to the same step will overwrite the existing value for that
step", WriteTensorboardRunDataRequest), and the bytes of its blobs under `_blobs` (blob ID ->
base64), since a point is answered without them ("the bytes of the blob is not present unless
it's returned by the ReadTensorboardBlobData endpoint", TensorboardBlob.data).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.store import Resource
from vertexkit.runtime.gapic import aiplatform_v1

POINTS = "_points"
BLOBS = "_blobs"
# The oneof field of a TimeSeriesDataPoint each value type takes.
VALUE_FIELD = {"SCALAR": "scalar", "TENSOR": "tensor", "BLOB_SEQUENCE": "blobs"}
MAX_POINTS_PER_WRITE = 5000  # "The upper limit of data points per write request is 5000."
MAX_READ_POINTS = 10_000  # read: max_data_points "can't be greater than 10k"


def check_series_data(field: str, data: Resource, series: Resource) -> None:
    """One TimeSeriesData of a write: its value type and every value's oneof match the series."""
    value_type = series["valueType"]
    if data.get("valueType") != value_type:
        raise bad_request(f"{field}.valueType: the time series {series['name']} holds "
                          f"{value_type} values; got {data.get('valueType', 'none')}.")  # fmt: skip
    if not data.get("values"):
        raise bad_request(f"{field}.values: required, at least one data point.")
    for index, point in enumerate(data["values"]):
        check_point(f"{field}.values[{index}]", point, value_type)


def check_point(field: str, point: Resource, value_type: str) -> None:
    expected = VALUE_FIELD[value_type]
    for other in set(VALUE_FIELD.values()) - {expected}:
        if other in point:
            raise bad_request(f"{field}.{other}: a {value_type} time series takes `{expected}` "
                              f"values, not `{other}`.")  # fmt: skip
    if expected not in point:
        raise bad_request(f"{field}.{expected}: required for a {value_type} time series.")
    if value_type == "TENSOR" and not point["tensor"].get("value"):
        raise bad_request(f"{field}.tensor.value: required (a serialized TensorProto).")
    if value_type == "BLOB_SEQUENCE":
        for index, blob in enumerate(point["blobs"].get("values", [])):
            if not blob.get("id"):
                raise bad_request(f"{field}.blobs.values[{index}].id: required.")


def count_points(series_data: list[Resource]) -> int:
    return sum(len(data.get("values", [])) for data in series_data)


def check_write_size(field: str, series_data: list[Resource]) -> None:
    if count_points(series_data) > MAX_POINTS_PER_WRITE:
        raise bad_request(f"{field}: at most {MAX_POINTS_PER_WRITE} data points per write; "
                          f"got {count_points(series_data)}.")  # fmt: skip


# -- storing ---------------------------------------------------------------------------------
def add_points(series: Resource, values: list[Resource]) -> None:
    """Stores `values` in `series` (in place): blob bytes apart, one point per step."""
    points = series.setdefault(POINTS, {})
    blobs = series.setdefault(BLOBS, {})
    for point in values:
        for blob in point.get("blobs", {}).get("values", []):
            if "data" in blob:
                blobs[blob["id"]] = blob.pop("data")
        points[str(step_of(point))] = point
    series["metadata"] = series_metadata(series)


def series_metadata(series: Resource) -> Resource:
    """TensorboardTimeSeriesMetadata: the largest step and wall time of the stored points,
    and for a blob sequence its longest sequence."""
    points = list(series.get(POINTS, {}).values())
    metadata: Resource = {"maxStep": str(max(step_of(p) for p in points))}
    times = [p["wallTime"] for p in points if "wallTime" in p]
    if times:
        metadata["maxWallTime"] = max(times, key=wall_seconds)
    if series["valueType"] == "BLOB_SEQUENCE":
        metadata["maxBlobSequenceLength"] = str(max(len(blob_values(p)) for p in points))
    return metadata


def step_of(point: Resource) -> int:
    return int(point.get("step", 0))


def wall_seconds(text: str) -> float:
    stamp = Timestamp()
    stamp.FromJsonString(text)
    return stamp.seconds + stamp.nanos / 1e9


def blob_values(point: Resource) -> list[Resource]:
    return point.get("blobs", {}).get("values", [])


# -- reading ---------------------------------------------------------------------------------
def stored_points(series: Resource) -> list[Resource]:
    """The series' points in step order."""
    return sorted(series.get(POINTS, {}).values(), key=step_of)


def max_data_points(text: str | None, default: int) -> int | None:
    """ReadTensorboardTimeSeriesData's `maxDataPoints`: unset is `default`, -1 is every
    point (None), otherwise 1 to 10000."""
    if text in (None, "", "0"):
        return default
    try:
        value = int(text)
    except ValueError:
        raise bad_request(f"maxDataPoints: an integer; got {text!r}.") from None
    if value == -1:
        return None
    if not 1 <= value <= MAX_READ_POINTS:
        raise bad_request(f"maxDataPoints: 1 to {MAX_READ_POINTS}, or -1 for every data "
                          f"point; got {value}.")  # fmt: skip
    return value


def downsample(points: list[Resource], limit: int | None) -> list[Resource]:
    """At most `limit` points, evenly spaced over the steps, the first and the last always
    kept. Vertex picks its sample at random ("randomly selected", timeSeries.read); an even
    spread that keeps the latest point is what TensorBoard's own reservoir sampling promises
    (the most recent point always survives) and keeps the local answer repeatable."""
    if limit is None or len(points) <= limit:
        return points
    if limit == 1:
        return points[-1:]
    last = len(points) - 1
    return [points[round(i * last / (limit - 1))] for i in range(limit)]


def series_data(series: Resource, points: list[Resource]) -> Resource:
    """A TimeSeriesData as `read` and `batchRead` answer it."""
    data: Resource = {
        "tensorboardTimeSeriesId": series["name"].rsplit("/", 1)[1],
        "valueType": series["valueType"],
    }
    return {**data, "values": points} if points else data


def stored_bytes(series: Resource) -> int:
    """The payload a series stores: its points serialized as TimeSeriesDataPoint protos, and
    its blobs' bytes (base64 decoded: 3 bytes per 4 characters, less the padding)."""
    size = sum(serialized_size(point) for point in series.get(POINTS, {}).values())
    for encoded in series.get(BLOBS, {}).values():
        size += len(encoded) * 3 // 4 - encoded.count("=")
    return size


def serialized_size(point: Resource) -> int:
    message: Any = protos.parse(aiplatform_v1.TimeSeriesDataPoint, point)
    return len(type(message).serialize(message))
