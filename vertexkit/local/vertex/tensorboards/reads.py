"""Reading TensorBoard data: a series' points (`timeSeries:read`, `tensorboards:batchRead`,
`timeSeries:exportTensorboardTimeSeries`), its blobs' bytes (`readBlobData`), and what a
TensorBoard holds (`readSize`, `readUsage`).

`filter` (read, export) is refused with a 400 naming it when set: Google documents no grammar
for it, and a filter read wrongly would answer a silently wrong set of points.

The runs derived from a custom job's event files (see `routes`) have no time series here:
reading their scalars would take a tfevents parser (`tensorboard`, `tensorflow` or `tbparse`),
and none is installed with vertexkit, so a series name under such a run is a 404.

readUsage: the local cloud authenticates no caller, so every read (read, batchRead,
readBlobData, export) is counted, per month, under the one username `anonymous`; the count is
kept on the TensorBoard as the reads happen, so the answer is what was read, never made up.
"""

from __future__ import annotations

from datetime import datetime, timezone

from vertexkit.local.errors import bad_request, not_found, refused
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource, ResourceStore
from vertexkit.local.vertex.tensorboards.points import (
    BLOBS,
    MAX_READ_POINTS,
    blob_values,
    downsample,
    max_data_points,
    series_data,
    stored_bytes,
    stored_points,
    wall_seconds,
)
from vertexkit.local.vertex.tensorboards.writes import verb_target
from vertexkit.runtime.gapic import aiplatform_v1

SERIES = "TensorboardTimeSeries"
SERIES_COLLECTION = "tensorboardTimeSeries"
VIEWS = "_views"  # on a TensorBoard: year-month (YYYYMM) -> reads of its data that month
USERNAME = "anonymous"
READ_DEFAULT = 1000  # timeSeries.read: "if the number of data points stored is less than 1000"
# batchRead: "The data point number limit is 1000 for scalars, 100 for tensors and blob
# references."
BATCH_READ_LIMIT = {"SCALAR": 1000, "TENSOR": 100, "BLOB_SEQUENCE": 100}
EXPORT_PAGE_DEFAULT = 1000  # "The default page_size is 1000."
EXPORT_ORDERS = {"step": "step", "wall_time": "wallTime", "wallTime": "wallTime"}


def no_filter(text: str | None) -> None:
    if text:
        raise bad_request("filter: the local cloud reads no filter on time series data (Google "
                          "documents no grammar for it); leave it empty.")  # fmt: skip


def tensorboard_of(name: str) -> str:
    return name.split("/experiments/", 1)[0]


class TensorboardReads:
    def __init__(self, store: ResourceStore) -> None:
        self.store = store

    def read(self, request: VertexRequest) -> Resource:
        """ReadTensorboardTimeSeriesData: up to `maxDataPoints` points (1000 unset, -1 all)."""
        series = self.store.get(verb_target(request.path), kind=SERIES)
        no_filter(request.query.get("filter"))
        limit = max_data_points(request.query.get("maxDataPoints"), READ_DEFAULT)
        self.count_view(tensorboard_of(series["name"]))
        return {"timeSeriesData": series_data(series, downsample(stored_points(series), limit))}

    def batch_read(self, request: VertexRequest) -> Resource:
        tensorboard = verb_target(request.path)
        self.store.get(tensorboard, kind="Tensorboard")
        names = request.query_list("timeSeries")
        if not names:
            raise bad_request("timeSeries: required, the names of the time series to read.")
        found = [self.series_in(tensorboard, name, index) for index, name in enumerate(names)]
        self.count_view(tensorboard)
        return {"timeSeriesData": [limited(series) for series in found]}

    def series_in(self, tensorboard: str, name: str, index: int) -> Resource:
        if not name.startswith(f"{tensorboard}/experiments/"):
            raise bad_request(f"timeSeries[{index}]: must be a time series of {tensorboard}; "
                              f"got {name!r}.")  # fmt: skip
        return self.store.get(name, kind=SERIES)

    # -- blobs ------------------------------------------------------------------------------
    def read_blob_data(self, request: VertexRequest) -> list[Resource]:
        """The bytes of the blobs named, as written inline. A blob written by ID alone (its
        bytes put in a bucket by the uploader) is refused: the local cloud does not look for
        them there."""
        series = self.store.get(verb_target(request.path), kind=SERIES)
        blob_ids = request.query_list("blobIds")
        if not blob_ids:
            raise bad_request("blobIds: required, the IDs of the blobs to read.")
        blobs = [blob_of(series, blob_id) for blob_id in blob_ids]
        self.count_view(tensorboard_of(series["name"]))
        # A server-streaming RPC: over REST its answer is a JSON array of messages (one here).
        return [{"blobs": blobs}]

    # -- export -----------------------------------------------------------------------------
    def export(self, request: VertexRequest) -> Resource:
        """ExportTensorboardTimeSeriesData: every point, paged (pageSize 1 to 10000, default
        1000, larger coerced to 10000), ordered by `orderBy` (`step` or `wall_time`, `desc`
        allowed) or, unset, by step (Google's order is "pseudo random")."""
        series = self.store.get(verb_target(request.path), kind=SERIES)
        body = protos.normalize(aiplatform_v1.ExportTensorboardTimeSeriesDataRequest, request.body)
        no_filter(body.get("filter"))
        points = ordered(stored_points(series), body.get("orderBy", ""))
        start, size = page_start(body.get("pageToken", "")), page_size(body.get("pageSize", 0))
        self.count_view(tensorboard_of(series["name"]))
        answer: Resource = {"timeSeriesDataPoints": points[start : start + size]}
        if start + size < len(points):
            answer["nextPageToken"] = str(start + size)
        return answer

    # -- what a TensorBoard holds ---------------------------------------------------------
    def read_size(self, request: VertexRequest) -> Resource:
        """The stored payload: every point serialized as a TimeSeriesDataPoint, plus the bytes
        of the blobs written inline."""
        tensorboard = self.store.get(verb_target(request.path), kind="Tensorboard")["name"]
        size = sum(stored_bytes(series) for series in self.series_of(tensorboard))
        return {"storageSizeByte": str(size)}

    def series_of(self, tensorboard: str) -> list[Resource]:
        everything = self.store.list(SERIES_COLLECTION)
        return [series for series in everything if tensorboard_of(series["name"]) == tensorboard]

    def read_usage(self, request: VertexRequest) -> Resource:
        tensorboard = self.store.get(verb_target(request.path), kind="Tensorboard")
        months = {
            month: {"userUsageData": [{"username": USERNAME, "viewCount": str(count)}]}
            for month, count in sorted(tensorboard.get(VIEWS, {}).items())
        }
        return {"monthlyUsageData": months} if months else {}

    def count_view(self, tensorboard: str) -> None:
        month = datetime.now(timezone.utc).strftime("%Y%m")

        def add_one(resource: Resource) -> None:
            views = resource.setdefault(VIEWS, {})
            views[month] = views.get(month, 0) + 1

        self.store.mutate(tensorboard, add_one, kind="Tensorboard")


def limited(series: Resource) -> Resource:
    limit = BATCH_READ_LIMIT[series["valueType"]]
    return series_data(series, downsample(stored_points(series), limit))


def blob_of(series: Resource, blob_id: str) -> Resource:
    if blob_id in series.get(BLOBS, {}):
        return {"id": blob_id, "data": series[BLOBS][blob_id]}
    written = {blob["id"] for point in stored_points(series) for blob in blob_values(point)}
    if blob_id in written:
        raise refused(
            f"Blob {blob_id} of {series['name']} was written by ID alone; "
            "the local cloud keeps only bytes sent inline in TensorboardBlob.data."
        )
    raise not_found(f'TensorboardBlob "{blob_id}" not found in {series["name"]}.')


def ordered(points: list[Resource], order_by: str) -> list[Resource]:
    words = order_by.split()
    if not words:
        return points
    field = EXPORT_ORDERS.get(words[0])
    if field is None or len(words) > 2 or (len(words) == 2 and words[1] not in ("asc", "desc")):
        raise bad_request(f"orderBy: `step` or `wall_time`, optionally followed by `asc` or "
                          f"`desc`; got {order_by!r}.")  # fmt: skip
    result = points if field == "step" else sorted(points, key=wall_time_of)
    return result[::-1] if words[-1] == "desc" else result


def wall_time_of(point: Resource) -> float:
    return wall_seconds(point.get("wallTime", "1970-01-01T00:00:00Z"))


def page_size(value: int) -> int:
    if value < 0:
        raise bad_request(f"pageSize: 1 to {MAX_READ_POINTS}; got {value}.")
    return min(value or EXPORT_PAGE_DEFAULT, MAX_READ_POINTS)


def page_start(token: str) -> int:
    if not token:
        return 0
    if not token.isdigit():
        raise bad_request(f"pageToken: not a token a previous export answered; got {token!r}.")
    return int(token)
