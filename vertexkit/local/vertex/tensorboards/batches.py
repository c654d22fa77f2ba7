"""Creating TensorBoard runs and time series in batches (`runs:batchCreate`,
`experiments:batchCreate`), and updating a time series (`timeSeries.patch`).

A batch is checked whole before anything is stored: one bad request, an ID already taken or
repeated in the batch, and nothing of it is created.
"""

from __future__ import annotations

from typing import Any

from vertexkit.local.errors import ApiError, bad_request, conflict
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.core.recipe import StandardMethods, snake_to_camel
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource, now_rfc3339
from vertexkit.local.vertex.tensorboards.writes import verb_target
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.errors import SpecError
from vertexkit.specs.metadata import TENSORBOARD_ID, validate_resource_id

MAX_BATCH = 1000  # "A maximum of 1000 ... can be created in a batch."
Planned = list[tuple[str, Resource]]  # (name, body) of each resource to create
# TensorboardTimeSeries fields by what a patch may do with them (the REST reference's
# Immutable / Output only marks).
SERIES_MUTABLE = ("displayName", "description", "pluginData")
SERIES_IMMUTABLE = ("valueType", "pluginName")
SERIES_OUTPUT_ONLY = ("name", "createTime", "updateTime", "metadata")


def at(field: str, check: Any, *args: Any) -> None:
    """Runs a spec check, its error prefixed with where in the batch it is."""
    try:
        check(*args)
    except SpecError as exc:  # the same broken rule, named where it is in the batch
        raise SpecError(f"{field}.{exc.field}" if field else exc.field, exc.reason) from exc


def batch_requests(body: Resource) -> list[Resource]:
    requests = body.get("requests", [])
    if not requests:
        raise bad_request("requests: required, at least one create request.")
    if len(requests) > MAX_BATCH:
        raise bad_request(f"requests: at most {MAX_BATCH}; got {len(requests)}.")
    return requests


class TensorboardBatches:
    def __init__(self, runs: StandardMethods, time_series: StandardMethods) -> None:
        self.runs = runs
        self.time_series = time_series
        self.store = runs.store

    # -- runs:batchCreate ---------------------------------------------------------------------
    def create_runs(self, request: VertexRequest) -> Resource:
        experiment = verb_target(request.path).rsplit("/runs", 1)[0]
        self.store.get(experiment, kind="TensorboardExperiment")
        body = protos.normalize(aiplatform_v1.BatchCreateTensorboardRunsRequest, request.body)
        planned = [
            self.planned_run(experiment, create, f"requests[{index}]")
            for index, create in enumerate(batch_requests(body))
        ]
        return {"tensorboardRuns": self.insert_all(self.runs, planned)}

    def planned_run(self, experiment: str, create: Resource, field: str) -> tuple[str, Resource]:
        if create.get("parent", experiment) != experiment:
            raise bad_request(f"{field}.parent: must be {experiment} (the batch's experiment); "
                              f"got {create['parent']!r}.")  # fmt: skip
        run_id = create.get("tensorboardRunId", "")
        if not run_id:
            raise bad_request(f"{field}.tensorboardRunId: required.")
        at(field, validate_resource_id, run_id, "tensorboardRunId", TENSORBOARD_ID)
        run = self.runs.parsed(create.get("tensorboardRun", {}))
        at(f"{field}.tensorboardRun", self.runs.kind.validate, run)
        return f"{experiment}/runs/{run_id}", run

    # -- experiments:batchCreate (time series of the experiment's runs) --------------------
    def create_time_series(self, request: VertexRequest) -> Resource:
        experiment = verb_target(request.path)
        self.store.get(experiment, kind="TensorboardExperiment")
        body = protos.normalize(aiplatform_v1.BatchCreateTensorboardTimeSeriesRequest, request.body)
        planned = [
            self.planned_series(experiment, create, f"requests[{index}]")
            for index, create in enumerate(batch_requests(body))
        ]
        return {"tensorboardTimeSeries": self.insert_all(self.time_series, planned)}

    def planned_series(self, experiment: str, create: Resource, field: str) -> tuple[str, Resource]:
        run = create.get("parent", "")
        prefix = f"{experiment}/runs/"
        if not run.startswith(prefix) or "/" in run[len(prefix) :] or run == prefix:
            raise bad_request(f"{field}.parent: a run of {experiment} ({prefix}RUN_ID); "
                              f"got {run!r}.")  # fmt: skip
        self.store.get(run, kind="TensorboardRun")
        series_id = create.get("tensorboardTimeSeriesId") or self.store.new_id()
        at(field, validate_resource_id, series_id, "tensorboardTimeSeriesId", TENSORBOARD_ID)
        series = self.time_series.parsed(create.get("tensorboardTimeSeries", {}))
        series.pop("metadata", None)  # output only, written by runs:write
        at(f"{field}.tensorboardTimeSeries", self.time_series.kind.validate, series)
        return f"{run}/timeSeries/{series_id}", series

    def insert_all(self, resources: StandardMethods, planned: Planned) -> list[Resource]:
        names = [name for name, _ in planned]
        for index, name in enumerate(names):
            if name in names[:index] or self.store.find(name) is not None:
                raise conflict(f'{resources.kind.kind} "{name}" already exists.')
        return [StandardMethods.public(resources.insert(name, body)) for name, body in planned]

    # -- timeSeries.patch ---------------------------------------------------------------------
    def patch_series(self, request: VertexRequest) -> Resource:
        """UpdateTensorboardTimeSeries: the fields of `updateMask` (or, unset, every field
        sent) overwritten; displayName, description and pluginData may change, valueType and
        pluginName only to what they are, output-only fields not at all. An `etag` that is
        not the series' current one is a 409 ABORTED, as Vertex's read-modify-write check."""
        current = self.store.get(request.path, kind="TensorboardTimeSeries")
        patch = protos.normalize(aiplatform_v1.TensorboardTimeSeries, request.body)
        if patch.get("etag") not in (None, current.get("etag")):
            raise ApiError(409, f"etag: {patch['etag']!r} is not the current etag of "
                           f"{request.path}.", status="ABORTED")  # fmt: skip
        mask = [snake_to_camel(p) for p in request.query.get("updateMask", "").split(",") if p]
        updated = dict(current)
        for field in mask or [f for f in patch if f not in (*SERIES_OUTPUT_ONLY, "etag")]:
            apply_field(updated, patch, field, current)
        at("", self.time_series.kind.validate, updated)
        updated["updateTime"] = updated["etag"] = now_rfc3339()
        return StandardMethods.public(self.store.put(request.path, updated))


def apply_field(updated: Resource, patch: Resource, field: str, current: Resource) -> None:
    if field in SERIES_OUTPUT_ONLY:
        raise bad_request(f"updateMask: {field} is output only.")
    if field in SERIES_IMMUTABLE:
        if patch.get(field) != current.get(field):
            raise bad_request(f"{field}: immutable; it is {current.get(field)!r}.")
        return
    if field not in SERIES_MUTABLE:
        allowed = ", ".join(SERIES_MUTABLE)
        raise bad_request(f"updateMask: {field!r} is not a field of TensorboardTimeSeries "
                          f"that can be updated ({allowed}).")  # fmt: skip
    if field in patch:
        updated[field] = patch[field]
    else:
        updated.pop(field, None)
