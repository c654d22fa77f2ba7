"""Writing TensorBoard data: `runs:write` (WriteTensorboardRunData) and `experiments:write`
(WriteTensorboardExperimentData, one run write per run).

Every time series written to must exist under its run (404 naming it) and take the values
sent (a scalar sent to a BLOB_SEQUENCE series is a 400 naming the field). The whole request is
checked before any point is stored: "if any data fail to be ingested, an error is returned",
and nothing half-written stays behind. Blob points keep the bytes sent inline in
`TensorboardBlob.data` (see `points`); the uploader's blobs in a bucket are not read.
"""

from __future__ import annotations

from collections.abc import Callable

from vertexkit.local.errors import bad_request, not_found
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource, ResourceStore, now_rfc3339
from vertexkit.local.vertex.tensorboards.points import (
    add_points,
    check_series_data,
    check_write_size,
)
from vertexkit.runtime.gapic import aiplatform_v1

Plan = list[tuple[str, list[Resource]]]  # (time series name, the points to store in it)


def verb_target(path: str) -> str:
    """The resource a custom method acts on: `.../runs/r:write` -> `.../runs/r`."""
    return path.rsplit(":", 1)[0]


class TensorboardWrites:
    def __init__(self, store: ResourceStore, run_exists: Callable[[str], bool]) -> None:
        self.store = store
        self.run_exists = run_exists

    def write_run(self, request: VertexRequest) -> Resource:
        run = verb_target(request.path)
        body = protos.normalize(aiplatform_v1.WriteTensorboardRunDataRequest, request.body)
        self.apply(self.planned(run, body.get("timeSeriesData", []), "timeSeriesData"))
        return {}

    def write_experiment(self, request: VertexRequest) -> Resource:
        experiment = verb_target(request.path)
        body = protos.normalize(aiplatform_v1.WriteTensorboardExperimentDataRequest, request.body)
        run_writes = body.get("writeRunDataRequests", [])
        if not run_writes:
            raise bad_request("writeRunDataRequests: required, at least one run's data.")
        plan: Plan = []
        for index, run_write in enumerate(run_writes):
            field = f"writeRunDataRequests[{index}]"
            run = self.run_of(experiment, run_write.get("tensorboardRun", ""), field)
            series_data = run_write.get("timeSeriesData", [])
            plan += self.planned(run, series_data, f"{field}.timeSeriesData")
        self.apply(plan)
        return {}

    @staticmethod
    def run_of(experiment: str, run: str, field: str) -> str:
        prefix = f"{experiment}/runs/"
        if not run.startswith(prefix) or "/" in run[len(prefix) :] or run == prefix:
            raise bad_request(f"{field}.tensorboardRun: a run of {experiment} "
                              f"({prefix}RUN_ID); got {run!r}.")  # fmt: skip
        return run

    # -- checked whole, then stored ---------------------------------------------------------
    def planned(self, run: str, series_data: list[Resource], field: str) -> Plan:
        if not self.run_exists(run):
            raise not_found(f'TensorboardRun "{run}" not found.')
        if not series_data:
            raise bad_request(f"{field}: required, at least one time series' data.")
        check_write_size(field, series_data)
        return [
            (self.checked_series(run, data, f"{field}[{index}]"), data["values"])
            for index, data in enumerate(series_data)
        ]

    def checked_series(self, run: str, data: Resource, field: str) -> str:
        series_id = data.get("tensorboardTimeSeriesId")
        if not series_id:
            raise bad_request(f"{field}.tensorboardTimeSeriesId: required.")
        series = self.store.get(f"{run}/timeSeries/{series_id}", kind="TensorboardTimeSeries")
        check_series_data(field, data, series)
        return series["name"]

    def apply(self, plan: Plan) -> None:
        for name, values in plan:
            self.store.mutate(name, lambda series, values=values: store_points(series, values))


def store_points(series: Resource, values: list[Resource]) -> None:
    add_points(series, values)
    series["updateTime"] = now_rfc3339()
