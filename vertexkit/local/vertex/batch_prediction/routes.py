"""batchPredictionJobs: create, get, list, cancel, delete (the SDK's `Model.batch_predict` and
`BatchPredictionJob.create`, GCPC's ModelBatchPredictOp, our `batch_predict` component).

A create request is parsed with the `aiplatform_v1` types, checked once by
`vertexkit.specs.batch_prediction`, and its model looked up and checked servable, all before
anything is stored; the run is `run.BatchRun` on the training executor (same job states).
"""

from __future__ import annotations

from typing import Any

from vertexkit.local.errors import ApiError, bad_request, failed_precondition
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.batch_prediction.models import COLLECTION, KIND
from vertexkit.local.vertex.batch_prediction.run import BatchRun
from vertexkit.local.vertex.core import fields
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.jobs import states as jobs
from vertexkit.local.vertex.jobs.verbs import JobMethods, cancel_on, fail_left_running, job_recipe
from vertexkit.local.vertex.registry.models import ModelRegistry, split_ref
from vertexkit.local.vertex.registry.serving import prebuilt_framework, runnable_command
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource
from vertexkit.local.vertex.training.execution import Executor
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.runtime.prebuilt import ServingError
from vertexkit.specs.batch_prediction import validate_batch_prediction_job
from vertexkit.specs.serving import validate_container_spec

LOCATION = "projects/{project}/locations/{location}"
IN_PROCESS_FRAMEWORKS = ("sklearn", "xgboost")
NOT_SERVED_FORMATS = ("tf-record", "tf-record-gzip", "file-list")
# What the request may not set: Vertex fills these.
OUTPUT_ONLY = ("name", "modelVersionId", "state", "error", "outputInfo", "partialFailures",
               "resourcesConsumed", "completionStats", "createTime", "startTime", "endTime",
               "updateTime")  # fmt: skip
BATCH_PREDICTION_JOBS = job_recipe(COLLECTION, KIND, aiplatform_v1.BatchPredictionJob,
                                   COLLECTION, OUTPUT_ONLY)  # fmt: skip


class BatchPredictionArea(Lifecycle):
    def __init__(self, backend: VertexBackend, executor: Executor) -> None:
        self.backend = backend
        self.executor = executor

    def start(self) -> None:
        fail_left_running(
            self.backend, COLLECTION, jobs.ACTIVE_STATES, self.executor.finish, jobs.FAILED
        )


class BatchPredictionJobs(JobMethods):
    """A job's checks and its model version, then its run (`run.BatchRun`)."""

    def __init__(self, backend: VertexBackend, executor: Executor, registry: ModelRegistry) -> None:
        super().__init__(backend, BATCH_PREDICTION_JOBS, stop=cancel_on(executor))
        self.executor = executor
        self.registry = registry

    def check(self, request: VertexRequest, body: Resource) -> None:
        body["modelVersionId"] = self.checked(body, request.parent)["versionId"]

    def created(self, resource: Resource) -> None:
        # The version checked, by its ID: the model's default may have moved since.
        model = split_ref(resource["model"])[0]
        version = self.registry.resolve_name(f"{model}@{resource['modelVersionId']}")[1]
        self.executor.submit(
            resource["name"],
            lambda control: BatchRun(self.executor, resource, version, control).run(),
        )

    def checked(self, body: dict[str, Any], location: str) -> Resource:
        """Every rule, in the order Vertex reports them; returns the model version to serve."""
        fields.check_refused(body, fields.BATCH_REFUSED, "")
        fmt = (body.get("inputConfig") or {}).get("instancesFormat")
        if fmt in NOT_SERVED_FORMATS:
            raise ApiError(
                501, f"inputConfig.instancesFormat: {fmt} is not served by the local cloud; "
                "it reads jsonl, csv and bigquery.",
            )  # fmt: skip
        validate_batch_prediction_job(body)
        version = self.model_version(body["model"], location)
        supported = version.get("supportedInputStorageFormats") or []
        if fmt not in supported:
            raise bad_request(
                f"inputConfig.instancesFormat: the model takes {supported}; got {fmt!r}"
            )
        check_servable(version)
        validate_container_spec(version.get("containerSpec") or {})
        check_explanation(body, version)
        return version

    def model_version(self, model: str, location: str) -> Resource:
        if not model.startswith(location + "/models/"):
            raise bad_request(
                f"model: {model!r} is not a model of {location} (projects/P/locations/L/models/ID)"
            )
        try:
            return self.registry.resolve_name(model)[1]
        except ApiError as exc:
            raise ApiError(exc.code, f"model: {exc.message}") from exc


def check_servable(version: Resource) -> None:
    """The model must run here: a prebuilt scikit-learn/XGBoost image, or a container command."""
    image = (version.get("containerSpec") or {}).get("imageUri", "")
    framework = prebuilt_framework(image)
    if framework and framework not in IN_PROCESS_FRAMEWORKS:
        raise failed_precondition(
            f"model: the prebuilt image {image} ({framework}) cannot serve here; the local cloud "
            "serves the scikit-learn and XGBoost prebuilt images, or a custom container command."
        )
    if framework is None:
        try:
            runnable_command(version.get("containerSpec") or {})
        except ServingError as exc:
            raise failed_precondition(f"model: {exc.message}") from exc


def check_explanation(body: dict[str, Any], version: Resource) -> None:
    """`generateExplanation` is carried out with the online `:explain`'s sampled Shapley;
    `explanationSpec` "Can be specified only if generate_explanation is set to true", and with
    it "either the Model.explanation_spec or explanation_spec must be populated"
    (BatchPredictionJob, REST reference)."""
    from vertexkit.local.vertex.registry.explain import merged_spec

    override = body.get("explanationSpec") or {}
    if not body.get("generateExplanation"):
        if override:
            raise bad_request("explanationSpec: can be set only with generateExplanation true")
        return
    if body["outputConfig"]["predictionsFormat"] == "bigquery":
        raise bad_request(
            "generateExplanation: the local cloud writes explanations to jsonl output only, "
            "not to a BigQuery explanation column; use a gcsDestination"
        )
    base = version.get("explanationSpec") or {}
    if not base and not override:
        raise bad_request(
            "generateExplanation: needs the Model's explanation_spec or the job's "
            "explanationSpec; neither is set"
        )
    merged_spec(base, override)  # refused here unless sampled Shapley can carry it out


def register(context: AreaContext) -> BatchPredictionArea:
    router = context.router
    area = BatchPredictionArea(context.backend, context.executor)
    jobs_ = BatchPredictionJobs(context.backend, context.executor, context.models)
    jobs_.register(router, f"{LOCATION}/{COLLECTION}")
    return area
