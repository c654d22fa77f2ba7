"""TensorBoard resources: tensorboards, their experiments and runs (create, get, list, patch,
delete), as far as `aiplatform.Tensorboard.create`, the experiment API's backing TensorBoard and
listing need.

A custom job whose `jobSpec.tensorboard` names a TensorBoard keeps its trainer's event files
(written under AIP_TENSORBOARD_LOG_DIR, `<baseOutputDirectory>/logs/`) under that resource: the
job is an experiment of the TensorBoard (its ID is the job's), and each folder of that log
directory holding `*tfevents*` files is one of its runs (`default` for the folder itself).
They are read from the job and its files when listed, so nothing has to be copied.

Time series data (`runs:write`, `timeSeries:read`, `tensorboards:batchRead`, ...) is in
`writes`, `reads` and `points`; batch creates and the time series patch in `batches`.
"""

from __future__ import annotations

import re
from typing import Any

from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core import fields
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.core.filters import compile_filter
from vertexkit.local.vertex.core.recipe import Recipe, StandardMethods
from vertexkit.local.vertex.router import VertexRequest, VertexRouter
from vertexkit.local.vertex.store import Resource, page
from vertexkit.local.vertex.tensorboards.batches import TensorboardBatches
from vertexkit.local.vertex.tensorboards.reads import TensorboardReads
from vertexkit.local.vertex.tensorboards.writes import TensorboardWrites
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.metadata import (
    TENSORBOARD_ID,
    validate_tensorboard,
    validate_tensorboard_child,
    validate_time_series,
)
from vertexkit.specs.requests import validate_list_query, validate_parent

LOCATION = "projects/{project}/locations/{location}"
TENSORBOARD = f"{LOCATION}/tensorboards/{{tensorboard}}"
EXPERIMENT = f"{TENSORBOARD}/experiments/{{experiment}}"
TENSORBOARDS = Recipe(
    "tensorboards", "Tensorboard", aiplatform_v1.Tensorboard, "tensorboardId", TENSORBOARD_ID,
    "tensorboards", validate_tensorboard, "CreateTensorboardOperationMetadata",
    update_operation="UpdateTensorboardOperationMetadata",
    children=("tensorboardExperiments", "tensorboardRuns", "tensorboardTimeSeries"),
    notes=lambda body: fields.notes(body, fields.TENSORBOARD_NOTES, "tensorboard"),
)  # fmt: skip
EXPERIMENTS = Recipe(
    "tensorboardExperiments", "TensorboardExperiment", aiplatform_v1.TensorboardExperiment,
    "tensorboardExperimentId", TENSORBOARD_ID, "tensorboardExperiments",
    lambda body: validate_tensorboard_child(body, name_required=False),
    children=("tensorboardRuns", "tensorboardTimeSeries"),
)  # fmt: skip
RUNS = Recipe(
    "tensorboardRuns", "TensorboardRun", aiplatform_v1.TensorboardRun, "tensorboardRunId",
    TENSORBOARD_ID, "tensorboardRuns",
    lambda body: validate_tensorboard_child(body, name_required=True),
    children=("tensorboardTimeSeries",),
)  # fmt: skip
TIME_SERIES = Recipe(
    "tensorboardTimeSeries", "TensorboardTimeSeries", aiplatform_v1.TensorboardTimeSeries,
    "tensorboardTimeSeriesId", TENSORBOARD_ID, "tensorboardTimeSeries", validate_time_series,
)  # fmt: skip
CUSTOM_JOBS = "customJobs"


class TensorboardsArea(Lifecycle):
    def __init__(self, backend: VertexBackend) -> None:
        self.backend = backend
        self.store = backend.store
        self.tensorboards = StandardMethods(backend, TENSORBOARDS)
        self.experiments = StandardMethods(backend, EXPERIMENTS)
        self.runs = StandardMethods(backend, RUNS)
        self.time_series = StandardMethods(backend, TIME_SERIES)
        self.writes = TensorboardWrites(self.store, self.run_exists)
        self.reads = TensorboardReads(self.store)
        self.batches = TensorboardBatches(self.runs, self.time_series)

    def create_tensorboard(self, request: VertexRequest) -> Resource:
        validate_parent(request.params["project"], request.params["location"])
        operation = self.tensorboards.create(request)
        name = operation["response"]["name"]
        if operation["response"].get("isDefault"):
            self.make_only_default(name)
        return operation

    def make_only_default(self, name: str) -> None:
        """One default TensorBoard per location, as on Vertex: the new one takes the flag."""
        location = name.rsplit("/tensorboards/", 1)[0]
        for other in self.store.list(TENSORBOARDS.collection, location):
            if other["name"] != name and other.get("isDefault"):
                self.store.mutate(other["name"], lambda tb: tb.pop("isDefault", None))

    def create_time_series(self, request: VertexRequest) -> Resource:
        """Its `metadata` is output only (maxStep, maxWallTime: written by runs:write), so a
        create's is dropped, as Vertex drops output-only fields sent to it."""
        request.body.pop("metadata", None)
        return self.time_series.create(request)

    def get_tensorboard(self, request: VertexRequest) -> Resource:
        tensorboard = self.tensorboards.get(request)
        experiments = self.all_experiments(request.path)
        runs = sum(len(self.all_runs(e["name"])) for e in experiments)
        return {**tensorboard, "runCount": runs} if runs else tensorboard

    # -- experiments: stored, and one per custom job that names this TensorBoard ------------------
    def list_experiments(self, request: VertexRequest) -> Resource:
        validate_list_query(request.query)
        tensorboard = request.path.rsplit("/", 1)[0]
        self.store.get(tensorboard, kind="Tensorboard")
        keep = compile_filter(request.query.get("filter"))
        found = [e for e in self.all_experiments(tensorboard) if keep(e)]
        return page(found, request.query, EXPERIMENTS.list_key)

    def get_experiment(self, request: VertexRequest) -> Resource:
        for experiment in self.all_experiments(request.path.rsplit("/experiments/", 1)[0]):
            if experiment["name"] == request.path:
                return experiment
        return self.experiments.get(request)  # answers the 404

    def all_experiments(self, tensorboard: str) -> list[Resource]:
        listed = self.store.list(EXPERIMENTS.collection, tensorboard)
        stored = [StandardMethods.public(e) for e in listed]
        names = {e["name"] for e in stored}
        from_jobs = [e for e in self.job_experiments(tensorboard) if e["name"] not in names]
        return stored + from_jobs

    def job_experiments(self, tensorboard: str) -> list[Resource]:
        location = tensorboard.rsplit("/tensorboards/", 1)[0]
        return [
            job_experiment(tensorboard, job)
            for job in self.store.list(CUSTOM_JOBS, location)
            if (job.get("jobSpec") or {}).get("tensorboard") == tensorboard
        ]

    # -- runs: stored, and one per folder of event files a job wrote ------------------------------
    def list_runs(self, request: VertexRequest) -> Resource:
        validate_list_query(request.query)
        experiment = request.path.rsplit("/", 1)[0]
        keep = compile_filter(request.query.get("filter"))
        found = [r for r in self.all_runs(experiment) if keep(r)]
        return page(found, request.query, RUNS.list_key)

    def get_run(self, request: VertexRequest) -> Resource:
        for run in self.all_runs(request.path.rsplit("/runs/", 1)[0]):
            if run["name"] == request.path:
                return run
        return self.runs.get(request)

    def run_exists(self, name: str) -> bool:
        return any(run["name"] == name for run in self.all_runs(name.rsplit("/runs/", 1)[0]))

    def all_runs(self, experiment: str) -> list[Resource]:
        stored = [StandardMethods.public(r) for r in self.store.list(RUNS.collection, experiment)]
        job = self.store.find(experiment_job_name(experiment))
        if (
            job is None
            or (job.get("jobSpec") or {}).get("tensorboard")
            != experiment.rsplit("/experiments/", 1)[0]
        ):
            return stored
        names = {r["name"] for r in stored}
        return stored + [r for r in self.event_runs(experiment, job) if r["name"] not in names]

    def event_runs(self, experiment: str, job: Resource) -> list[Resource]:
        base = ((job.get("jobSpec") or {}).get("baseOutputDirectory") or {}).get("outputUriPrefix")
        if not base:
            return []
        logs = self.backend.storage.gs_uri_to_path(base.rstrip("/") + "/logs/")
        if not logs.is_dir():
            return []
        folders = sorted({path.parent for path in logs.rglob("*tfevents*") if path.is_file()})
        return [event_run(experiment, job, logs, folder) for folder in folders]


def experiment_job_name(experiment: str) -> str:
    location = experiment.split("/tensorboards/", 1)[0]
    return f"{location}/{CUSTOM_JOBS}/{experiment.rsplit('/', 1)[1]}"


def job_experiment(tensorboard: str, job: Resource) -> Resource:
    job_id = job["name"].rsplit("/", 1)[1]
    return {
        "name": f"{tensorboard}/experiments/{job_id}",
        "displayName": job.get("displayName", job_id),
        "createTime": job["createTime"],
        "updateTime": job.get("updateTime", job["createTime"]),
        "source": "custom_job",
    }


def event_run(experiment: str, job: Resource, logs: Any, folder: Any) -> Resource:
    relative = folder.relative_to(logs).as_posix()
    run_id = "default" if relative == "." else re.sub(r"[^a-z0-9-]+", "-", relative.lower())
    return {
        "name": f"{experiment}/runs/{run_id.strip('-') or 'default'}",
        "displayName": relative if relative != "." else "default",
        "createTime": job["createTime"],
        "updateTime": job.get("updateTime", job["createTime"]),
    }


def register(context: AreaContext) -> TensorboardsArea:
    router, backend = context.router, context.backend
    area = TensorboardsArea(backend)
    # The recipes' standard methods, with the area's own where it adds to them.
    own = {"create": area.create_tensorboard, "get": area.get_tensorboard}
    area.tensorboards.register(router, f"{LOCATION}/tensorboards", own)
    own = {"list": area.list_experiments, "get": area.get_experiment}
    area.experiments.register(router, f"{TENSORBOARD}/experiments", own)
    area.runs.register(router, f"{EXPERIMENT}/runs", {"list": area.list_runs, "get": area.get_run})
    own = {"create": area.create_time_series, "patch": area.batches.patch_series}
    area.time_series.register(router, f"{EXPERIMENT}/runs/{{run}}/timeSeries", own)
    router.route("GET", f"{TENSORBOARD}:batchRead")(area.reads.batch_read)
    router.route("GET", f"{TENSORBOARD}:readSize")(area.reads.read_size)
    router.route("GET", f"{TENSORBOARD}:readUsage")(area.reads.read_usage)
    register_data(router, area)
    return area


def register_data(router: VertexRouter, area: TensorboardsArea) -> None:
    """The methods that write and read a time series' data, and the batch creates."""
    run = f"{EXPERIMENT}/runs/{{run}}"
    one_series = f"{run}/timeSeries/{{series}}"
    router.route("POST", f"{EXPERIMENT}:batchCreate")(area.batches.create_time_series)
    router.route("POST", f"{EXPERIMENT}:write")(area.writes.write_experiment)
    router.route("POST", f"{EXPERIMENT}/runs:batchCreate")(area.batches.create_runs)
    router.route("POST", f"{run}:write")(area.writes.write_run)
    router.route("GET", f"{one_series}:read")(area.reads.read)
    router.route("GET", f"{one_series}:readBlobData")(area.reads.read_blob_data)
    router.route("POST", f"{one_series}:exportTensorboardTimeSeries")(area.reads.export)
