"""One training pipeline's run, as Vertex runs a custom task: its inputs (a CustomJobSpec)
become a backing CustomJob, named in `trainingTaskMetadata.backingCustomJob`; when that job
succeeds, the model the trainer saved under `<baseOutputDirectory>/model` is uploaded with
`modelToUpload` (as a new model, `modelId`, or a new version of `parentModel`)."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from vertexkit.local.errors import ApiError
from vertexkit.local.vertex.datasets.export import ExportError, export_splits
from vertexkit.local.vertex.jobs import states as jobs
from vertexkit.local.vertex.jobs.lifecycle import JobControl, Outcome
from vertexkit.local.vertex.registry.models import ModelRegistry
from vertexkit.local.vertex.store import Resource
from vertexkit.local.vertex.training import models as training_models
from vertexkit.local.vertex.training.execution import Executor
from vertexkit.local.vertex.training_pipelines import models
from vertexkit.specs.errors import SpecError

POLL_SECONDS = 0.05
STOP_WAIT_SECONDS = 30.0
NO_MODEL = (
    "There are no files under {uri} to upload as the model: the trainer must save it to the "
    "directory in AIP_MODEL_DIR."
)


class PipelineRun:
    """Runs in the executor's thread for the pipeline; every exit ends the pipeline."""

    def __init__(
        self, executor: Executor, registry: ModelRegistry, pipeline: Resource, control: JobControl
    ) -> None:
        self.executor = executor
        self.store = executor.backend.store
        self.registry = registry
        self.pipeline = pipeline
        self.name = pipeline["name"]
        self.control = control
        self.uploaded: Resource | None = None

    def run(self) -> None:
        try:
            outcome = self._run()
        except Exception as exc:  # a bug must end the pipeline, never leave it RUNNING
            outcome = Outcome(models.FAILED, jobs.CODE_INTERNAL, f"internal: {exc!r}")
        self.finish(outcome)

    def _run(self) -> Outcome:
        self.set_state(models.PENDING)
        if self.control.stop.is_set():  # cancelled before its job started
            return self.stopped()
        failure = self.export_input_data()
        if failure is not None:
            return failure
        job_name = self.start_backing_job()
        job = self.wait_for(job_name)
        if self.control.stop.is_set():
            return self.stopped()
        if job["state"] != jobs.SUCCEEDED:
            error = job.get("error") or {}
            return Outcome(
                models.FAILED, error.get("code", jobs.CODE_INTERNAL), error.get("message", "")
            )
        if not self.pipeline.get("modelToUpload"):
            return Outcome(models.SUCCEEDED)
        return self.upload_model()

    # -- a managed dataset as input ---------------------------------------------------------------
    def export_input_data(self) -> Outcome | None:
        """Exports the dataset's splits and gives every worker pool the AIP_DATA_FORMAT and
        AIP_*_DATA_URI variables Vertex sets; a failed export fails the pipeline."""
        config = self.pipeline.get("inputDataConfig")
        if not config:
            return None
        location = self.name.split(f"/{models.COLLECTION}/")[0]
        dataset = self.store.find(f"{location}/datasets/{config['datasetId']}")
        if dataset is None:
            message = f"inputDataConfig.datasetId: dataset {config['datasetId']} was deleted."
            return Outcome(models.FAILED, jobs.CODE_INVALID_ARGUMENT, message)
        try:
            env = export_splits(self.executor.backend, dataset, config)
        except ExportError as exc:
            return Outcome(models.FAILED, jobs.CODE_INVALID_ARGUMENT, str(exc))
        for pool in self.pipeline["_jobSpec"].get("workerPoolSpecs") or []:
            inner = pool.get("containerSpec") or pool.get("pythonPackageSpec")
            if inner is not None:
                given = [item for item in inner.get("env") or [] if item["name"] not in env]
                inner["env"] = given + [{"name": k, "value": v} for k, v in env.items()]
        return None

    # -- the backing custom job ----------------------------------------------------------------
    def start_backing_job(self) -> str:
        parent = self.name.split(f"/{models.COLLECTION}/")[0]
        job_name = f"{parent}/{training_models.CUSTOM_JOBS}/{self.store.new_id()}"
        body = {"displayName": self.pipeline["displayName"], "jobSpec": self.pipeline["_jobSpec"]}
        if self.pipeline.get("labels"):
            body["labels"] = self.pipeline["labels"]
        if self.pipeline.get("encryptionSpec"):
            # "If set, this TrainingPipeline will be secured by this key" (REST reference): the
            # backing job carries it, so its job log says once that nothing is encrypted here.
            body["encryptionSpec"] = self.pipeline["encryptionSpec"]
        job = self.store.insert(training_models.CUSTOM_JOBS, job_name, jobs.new_job(job_name, body))

        def running(pipeline: Resource) -> None:
            pipeline["trainingTaskMetadata"] = {"backingCustomJob": job_name}
            if pipeline.get("state") != models.CANCELLING:
                models.set_state(pipeline, models.RUNNING)

        self.store.mutate(self.name, running)
        self.executor.start_custom_job(job)
        return job_name

    def wait_for(self, job_name: str) -> Resource:
        """The backing job once it has ended; a stop request (cancel, shutdown) stops it."""
        stop_sent = deadline = None
        while True:
            job = self.store.get(job_name, kind="CustomJob")
            if jobs.is_terminal(job):
                return job
            if self.control.stop.is_set() and stop_sent is None:
                stop_sent = self.executor.stop(job_name, self.control.reason)
                deadline = time.monotonic() + STOP_WAIT_SECONDS
            if deadline is not None and time.monotonic() > deadline:
                return job
            time.sleep(POLL_SECONDS)

    def stopped(self) -> Outcome:
        if self.control.reason == "shutdown":
            return Outcome(models.FAILED, jobs.CODE_INTERNAL, jobs.STOPPED_WITH_CLOUD)
        return Outcome(models.CANCELLED, jobs.CODE_CANCELLED, "CANCELED")

    # -- the model -----------------------------------------------------------------------------
    def upload_model(self) -> Outcome:
        base = self.pipeline["_jobSpec"]["baseOutputDirectory"]["outputUriPrefix"].rstrip("/")
        artifact_uri = f"{base}/model"
        if not self.has_files(artifact_uri):
            return Outcome(
                models.FAILED, jobs.CODE_INVALID_ARGUMENT, NO_MODEL.format(uri=artifact_uri)
            )
        location = self.name.split(f"/{models.COLLECTION}/")[0]
        try:
            operation = self.registry.upload(location, self.upload_request(artifact_uri))
        except (ApiError, SpecError) as exc:  # refused as an upload request would be
            return Outcome(models.FAILED, jobs.CODE_INVALID_ARGUMENT, f"Model upload failed: {exc}")
        response = operation["response"]
        model, version = self.registry.resolve_name(
            f"{response['model']}@{response['modelVersionId']}"
        )
        self.uploaded = self.registry.render(version, model)
        return Outcome(models.SUCCEEDED)

    def upload_request(self, artifact_uri: str) -> dict[str, Any]:
        model = {**self.pipeline["modelToUpload"], "artifactUri": artifact_uri}
        model.setdefault("displayName", self.pipeline["displayName"])
        if self.pipeline.get("encryptionSpec"):  # "also secured by this key if not set separately"
            model.setdefault("encryptionSpec", self.pipeline["encryptionSpec"])
        request: dict[str, Any] = {"model": model}
        for key in ("modelId", "parentModel"):
            if self.pipeline.get(key):
                request[key] = self.pipeline[key]
        return request

    def has_files(self, uri: str) -> bool:
        directory = self.executor.backend.storage.gs_uri_to_path(uri + "/")
        return directory.is_dir() and any(path.is_file() for path in directory.rglob("*"))

    # -- state ---------------------------------------------------------------------------------
    def set_state(self, state: str) -> None:
        def change(pipeline: Resource) -> None:
            if not models.is_terminal(pipeline) and pipeline.get("state") != models.CANCELLING:
                models.set_state(pipeline, state)

        self.store.mutate(self.name, change)

    def finish(self, outcome: Outcome) -> None:
        finish_pipeline(self.executor, self.name, outcome, self.uploaded)


def finish_pipeline(
    executor: Executor, name: str, outcome: Outcome, uploaded: Resource | None = None
) -> None:
    """Ends a pipeline once: its terminal state, its error, the uploaded model's name."""

    def change(pipeline: Resource) -> None:
        if models.is_terminal(pipeline):
            return
        models.set_state(pipeline, outcome.state)
        if outcome.state != models.SUCCEEDED:
            models.set_error(pipeline, outcome.code, outcome.message)
        if uploaded is not None:
            pipeline["modelToUpload"] = uploaded

    with contextlib.suppress(Exception):  # the store may be closed at shutdown
        executor.backend.store.mutate(name, change)
