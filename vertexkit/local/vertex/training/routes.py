"""customJobs and hyperparameterTuningJobs: create, get, list, cancel, delete.

Requests are parsed with the `aiplatform_v1` types (unknown field -> 400 naming it) and checked
by `vertexkit.specs` before anything is stored or run.
"""

from __future__ import annotations

from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.jobs import states
from vertexkit.local.vertex.jobs.lifecycle import JobLog, Outcome
from vertexkit.local.vertex.jobs.verbs import (
    delete_ended,
    fail_left_running,
    refuse_cancel_when_ended,
    register_job_collection,
)
from vertexkit.local.vertex.persistent_resources.jobs import check_job_placement
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.studies.optimizer import starting_point
from vertexkit.local.vertex.training import models, responses
from vertexkit.local.vertex.training.dispositions import check_references, log_notes
from vertexkit.local.vertex.training.execution import Executor
from vertexkit.local.vertex.training.runnable import check_runnable_pools
from vertexkit.local.vertex.training.tuning import TuningRun, refuse_unhonoured
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs import validate_custom_job_spec, validate_tuning_job
from vertexkit.specs.requests import validate_list_query, validate_metadata, validate_parent

LOCATION = "projects/{project}/locations/{location}"


def validate_request(request: VertexRequest, body: dict[str, Any]) -> None:
    """The region in the path, the job's display name and labels: before anything is stored."""
    validate_parent(request.params["project"], request.params["location"])
    validate_metadata(body, "")


def require(body: dict[str, Any], key: str) -> None:
    if not body.get(key):
        raise bad_request(f"{key}: is required")


# ParameterSpec.*ValueSpec.defaultValue (REST reference): "Currently only supported by the Vertex
# AI Vizier service. Not supported by HyperparameterTuningJob or TrainingPipeline."
DEFAULTS_NOT_READ = (
    "studySpec.parameters: a defaultValue is set: no local effect; a tuning job does not start "
    "from it (on Vertex neither: only a Vizier Study does)"
)


class TrainingArea(Lifecycle):
    def __init__(self, backend: VertexBackend, executor: Executor) -> None:
        self.backend = backend
        self.store = backend.store
        self.executor = executor  # shared with training pipelines and batch prediction

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        for collection in (models.CUSTOM_JOBS, models.TUNING_JOBS):
            fail_left_running(
                self.backend, collection, states.ACTIVE_STATES, self.executor.finish, states.FAILED
            )

    # -- custom jobs ---------------------------------------------------------------------------
    def create_custom_job(self, request: VertexRequest) -> dict[str, Any]:
        body = protos.to_dict(protos.parse(aiplatform_v1.CustomJob, request.body))
        validate_request(request, body)
        require(body, "jobSpec")
        validate_custom_job_spec(body["jobSpec"])
        check_runnable_pools(body["jobSpec"], "jobSpec")
        check_job_placement(self.store, request.parent, body, "jobSpec")
        check_references(self.store, request.parent, body["jobSpec"], "jobSpec")
        self.executor.gpus.check_fits(body["jobSpec"], "jobSpec")
        job = self._insert(models.CUSTOM_JOBS, request.parent, body)
        self.executor.start_custom_job(job)
        return responses.job(job)

    # -- tuning jobs ---------------------------------------------------------------------------
    def create_tuning_job(self, request: VertexRequest) -> dict[str, Any]:
        message = protos.parse(aiplatform_v1.HyperparameterTuningJob, request.body)
        body = protos.to_dict(message)
        validate_request(request, body)
        for key in ("studySpec", "maxTrialCount", "parallelTrialCount"):
            require(body, key)
        require(body, "trialJobSpec")
        validate_tuning_job(body)  # the one rule book for study specs
        refuse_unhonoured(body["studySpec"])  # what the local tuning engine cannot carry out
        validate_custom_job_spec(body["trialJobSpec"])
        check_runnable_pools(body["trialJobSpec"], "trialJobSpec")
        check_job_placement(self.store, request.parent, body, "trialJobSpec")
        check_references(self.store, request.parent, body["trialJobSpec"], "trialJobSpec")
        self.executor.gpus.check_fits(body["trialJobSpec"], "trialJobSpec")
        job = self._insert(models.TUNING_JOBS, request.parent, body)
        # Said once for the tuning job (its trials share the spec): tuning.py runs the trials.
        job_log = JobLog(self.executor.root / job["name"].rsplit("/", 1)[1])
        log_notes(job["trialJobSpec"], job_log, job)
        if starting_point(job["studySpec"]):
            job_log(DEFAULTS_NOT_READ)
        self.executor.submit(
            job["name"], lambda control: TuningRun(self.executor, job, control).run()
        )
        return responses.job(job)

    # -- shared verbs --------------------------------------------------------------------------
    def _insert(self, collection: str, parent: str, body: dict[str, Any]) -> dict[str, Any]:
        name = f"{parent}/{collection}/{self.store.new_id()}"
        for output_only in ("state", "error", "startTime", "endTime", "trials"):
            body.pop(output_only, None)
        job = states.new_job(name, body)
        self.store.insert(collection, name, job)
        return job

    def get(self, request: VertexRequest) -> dict[str, Any]:
        return responses.job(self.store.get(request.path, kind=self._kind(request.path)))

    def list(self, request: VertexRequest) -> dict[str, Any]:
        collection = request.path.rsplit("/", 1)[1]
        validate_list_query(request.query)
        jobs = self.store.list(collection, request.parent)
        return responses.job_list(jobs, request.query, collection)

    def cancel(self, request: VertexRequest) -> dict[str, Any]:
        name = request.path.rsplit(":", 1)[0]
        refuse_cancel_when_ended(
            name, self.store.get(name, kind=self._kind(name)), states.is_terminal
        )
        self.executor.set_state(name, states.CANCELLING)
        if not self.executor.stop(name, "cancel"):
            self.executor.finish(name, Outcome(states.CANCELLED, states.CODE_CANCELLED, "CANCELED"))
        return {}

    def delete(self, request: VertexRequest) -> dict[str, Any]:
        return delete_ended(
            self.backend, request.path, self._kind(request.path), states.is_terminal
        )

    @staticmethod
    def _kind(name: str) -> str:
        return "CustomJob" if "/customJobs/" in name else "HyperparameterTuningJob"


def register(context: AreaContext) -> TrainingArea:
    router = context.router
    area = TrainingArea(context.backend, context.executor)
    creators = {
        models.CUSTOM_JOBS: area.create_custom_job,
        models.TUNING_JOBS: area.create_tuning_job,
    }
    for collection, create in creators.items():
        register_job_collection(router, f"{LOCATION}/{collection}", create, area)
    return area
