"""customJobs and hyperparameterTuningJobs: create, get, list, cancel, delete, on the job
recipe (`jobs.verbs`); this area adds each create's checks and starts its run.

Requests are parsed with the `aiplatform_v1` types (unknown field -> 400 naming it) and checked
by `vertexkit.specs` before anything is stored or run.
"""

from __future__ import annotations

from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.jobs import states
from vertexkit.local.vertex.jobs.lifecycle import JobLog
from vertexkit.local.vertex.jobs.verbs import JobMethods, cancel_on, fail_left_running, job_recipe
from vertexkit.local.vertex.persistent_resources.jobs import check_job_placement
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource
from vertexkit.local.vertex.studies.optimizer import starting_point
from vertexkit.local.vertex.training import models
from vertexkit.local.vertex.training.dispositions import check_references, log_notes
from vertexkit.local.vertex.training.execution import Executor
from vertexkit.local.vertex.training.runnable import check_runnable_pools
from vertexkit.local.vertex.training.tuning import TuningRun, refuse_unhonoured
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs import validate_custom_job_spec, validate_tuning_job
from vertexkit.specs.requests import validate_metadata

LOCATION = "projects/{project}/locations/{location}"
# Vertex fills these; a tuning job's trials too.
OUTPUT_ONLY = ("name", "state", "error", "createTime", "startTime", "endTime", "updateTime",
               "trials")  # fmt: skip
CUSTOM_JOBS = job_recipe(models.CUSTOM_JOBS, "CustomJob", aiplatform_v1.CustomJob,
                         models.CUSTOM_JOBS, OUTPUT_ONLY)  # fmt: skip
TUNING_JOBS = job_recipe(
    models.TUNING_JOBS, "HyperparameterTuningJob", aiplatform_v1.HyperparameterTuningJob,
    models.TUNING_JOBS, OUTPUT_ONLY,
)  # fmt: skip


def require(body: dict[str, Any], key: str) -> None:
    if not body.get(key):
        raise bad_request(f"{key}: is required")


# ParameterSpec.*ValueSpec.defaultValue (REST reference): "Currently only supported by the Vertex
# AI Vizier service. Not supported by HyperparameterTuningJob or TrainingPipeline."
DEFAULTS_NOT_READ = (
    "studySpec.parameters: a defaultValue is set: no local effect; a tuning job does not start "
    "from it (on Vertex neither: only a Vizier Study does)"
)


class CustomJobs(JobMethods):
    """A custom job's checks before it is stored; its run once it is."""

    def __init__(self, backend: VertexBackend, executor: Executor) -> None:
        super().__init__(backend, CUSTOM_JOBS, stop=cancel_on(executor))
        self.executor = executor

    def check(self, request: VertexRequest, body: Resource) -> None:
        validate_metadata(body, "")
        require(body, "jobSpec")
        validate_custom_job_spec(body["jobSpec"])
        check_runnable_pools(body["jobSpec"], "jobSpec")
        check_job_placement(self.store, request.parent, body, "jobSpec")
        check_references(self.store, request.parent, body["jobSpec"], "jobSpec")
        self.executor.gpus.check_fits(body["jobSpec"], "jobSpec")

    def created(self, resource: Resource) -> None:
        self.executor.start_custom_job(resource)


class TuningJobs(JobMethods):
    """A tuning job's checks (the one rule book for study specs, then what the local tuning
    engine cannot carry out); its trials run by `tuning.TuningRun`."""

    def __init__(self, backend: VertexBackend, executor: Executor) -> None:
        super().__init__(backend, TUNING_JOBS, stop=cancel_on(executor))
        self.executor = executor

    def check(self, request: VertexRequest, body: Resource) -> None:
        validate_metadata(body, "")
        for key in ("studySpec", "maxTrialCount", "parallelTrialCount", "trialJobSpec"):
            require(body, key)
        validate_tuning_job(body)
        refuse_unhonoured(body["studySpec"])
        validate_custom_job_spec(body["trialJobSpec"])
        check_runnable_pools(body["trialJobSpec"], "trialJobSpec")
        check_job_placement(self.store, request.parent, body, "trialJobSpec")
        check_references(self.store, request.parent, body["trialJobSpec"], "trialJobSpec")
        self.executor.gpus.check_fits(body["trialJobSpec"], "trialJobSpec")

    def created(self, resource: Resource) -> None:
        # Said once for the tuning job (its trials share the spec).
        job_log = JobLog(self.executor.root / resource["name"].rsplit("/", 1)[1])
        log_notes(resource["trialJobSpec"], job_log, resource)
        if starting_point(resource["studySpec"]):
            job_log(DEFAULTS_NOT_READ)
        self.executor.submit(
            resource["name"], lambda control: TuningRun(self.executor, resource, control).run()
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


def register(context: AreaContext) -> TrainingArea:
    area = TrainingArea(context.backend, context.executor)
    for methods in (CustomJobs(context.backend, context.executor),
                    TuningJobs(context.backend, context.executor)):  # fmt: skip
        methods.register(context.router, f"{LOCATION}/{methods.kind.collection}")
    return area
