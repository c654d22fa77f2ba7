"""trainingPipelines: create, get, list, cancel, delete (the SDK's CustomTrainingJob,
CustomPythonPackageTrainingJob and CustomContainerTrainingJob).

A create request is parsed with the `aiplatform_v1` types (the pipeline, then its task inputs
as a CustomJobSpec), checked by `vertexkit.specs`, and the model target is looked up, all
before anything is stored; the run itself is `run.PipelineRun` on the training executor.
"""

from __future__ import annotations

from typing import Any

from vertexkit.local.errors import ApiError, not_found
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core import fields
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.datasets import sources
from vertexkit.local.vertex.jobs import states as jobs
from vertexkit.local.vertex.jobs.lifecycle import Outcome
from vertexkit.local.vertex.jobs.verbs import JobMethods, fail_left_running, job_recipe
from vertexkit.local.vertex.persistent_resources.jobs import check_job_placement
from vertexkit.local.vertex.registry.models import ModelRegistry, split_ref, validate_aliases
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource, new_job_resource
from vertexkit.local.vertex.training.dispositions import check_references
from vertexkit.local.vertex.training.execution import Executor
from vertexkit.local.vertex.training.runnable import check_runnable_pools
from vertexkit.local.vertex.training_pipelines import models
from vertexkit.local.vertex.training_pipelines.run import PipelineRun, finish_pipeline
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs import validate_custom_job_spec
from vertexkit.specs.datasets import validate_input_data_config
from vertexkit.specs.training_pipelines import CUSTOM_TASK, validate_training_pipeline

LOCATION = "projects/{project}/locations/{location}"
INPUTS = "trainingTaskInputs"
TRAINING_PIPELINES = job_recipe(models.COLLECTION, "TrainingPipeline",
                                aiplatform_v1.TrainingPipeline, models.COLLECTION,
                                models.OUTPUT_ONLY)  # fmt: skip


def check_input_data_config(backend: VertexBackend, config: dict[str, Any], location: str) -> None:
    """A managed dataset as the trainer's input: the config well formed, the dataset there,
    and the column a predefined or timestamp split names among its columns."""
    validate_input_data_config(config)
    fields.check_refused(config, fields.INPUT_DATA_REFUSED, "inputDataConfig")
    dataset = backend.store.find(f"{location}/datasets/{config['datasetId']}")
    if dataset is None:
        raise not_found(f"inputDataConfig.datasetId: dataset {config['datasetId']} does not exist.")
    split = config.get("predefinedSplit") or config.get("timestampSplit")
    if split and split["key"] not in sources.columns(backend, dataset):
        kind = "predefinedSplit" if config.get("predefinedSplit") else "timestampSplit"
        raise ApiError(
            400, f"inputDataConfig.{kind}.key: the dataset has no column {split['key']!r}."
        )


def not_served_task(definition: str) -> ApiError:
    return ApiError(
        501,
        f"trainingTaskDefinition: {definition} is not served by the local cloud; it runs "
        f"custom tasks ({CUSTOM_TASK}).",
    )


def parse_task_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
    """The custom task's inputs as the CustomJobSpec they are (the SDK sends snake_case)."""
    try:
        return protos.to_dict(protos.parse(aiplatform_v1.CustomJobSpec, inputs))
    except ApiError as exc:
        raise ApiError(400, f"{INPUTS}: {exc.message}") from exc


class TrainingPipelinesArea(Lifecycle):
    def __init__(self, backend: VertexBackend, executor: Executor) -> None:
        self.backend = backend
        self.executor = executor

    def start(self) -> None:
        def finish(name: str, outcome: Outcome) -> None:
            finish_pipeline(self.executor, name, outcome)

        fail_left_running(
            self.backend, models.COLLECTION, models.ACTIVE_STATES, finish, models.FAILED
        )


class TrainingPipelines(JobMethods):
    """A pipeline's checks and its task's CustomJobSpec, then its run (`run.PipelineRun`)."""

    def __init__(self, backend: VertexBackend, executor: Executor, registry: ModelRegistry) -> None:
        super().__init__(backend, TRAINING_PIPELINES, queued=models.QUEUED,
                         ended=models.is_terminal, stop=self.stop_pipeline)  # fmt: skip
        self.executor = executor
        self.registry = registry

    def check(self, request: VertexRequest, body: Resource) -> None:
        body["_jobSpec"] = self.checked(body, request.parent)  # private: what the run reads

    def build(self, name: str, body: Resource) -> Resource:
        job_spec = body.pop("_jobSpec")
        return {**new_job_resource(name, body, self.queued), "_jobSpec": job_spec}

    def created(self, resource: Resource) -> None:
        self.executor.submit(
            resource["name"],
            lambda control: PipelineRun(self.executor, self.registry, resource, control).run(),
        )

    def stop_pipeline(self, name: str) -> None:
        self.store.mutate(name, lambda p: models.set_state(p, models.CANCELLING))
        if not self.executor.stop(name, "cancel"):
            finish_pipeline(
                self.executor, name, Outcome(models.CANCELLED, jobs.CODE_CANCELLED, "CANCELED")
            )

    def checked(self, body: dict[str, Any], location: str) -> dict[str, Any]:
        """Every rule, in the order Vertex reports them; returns the task's CustomJobSpec."""
        validate_training_pipeline(body)
        if body["trainingTaskDefinition"] != CUSTOM_TASK:
            raise not_served_task(body["trainingTaskDefinition"])
        if body.get("inputDataConfig"):
            check_input_data_config(self.backend, body["inputDataConfig"], location)
        job_spec = parse_task_inputs(body[INPUTS])
        validate_custom_job_spec(job_spec, INPUTS)
        check_runnable_pools(job_spec, INPUTS)
        check_job_placement(self.store, location, {**body, INPUTS: job_spec}, INPUTS)
        check_references(self.store, location, job_spec, INPUTS)
        self.executor.gpus.check_fits(job_spec, INPUTS)
        if body.get("modelToUpload"):
            self.check_model_target(body, job_spec, location)
        return job_spec

    def check_model_target(
        self, body: dict[str, Any], job_spec: dict[str, Any], location: str
    ) -> None:
        if not (job_spec.get("baseOutputDirectory") or {}).get("outputUriPrefix"):
            raise ApiError(
                400,
                f"{INPUTS}.baseOutputDirectory.outputUriPrefix: required with modelToUpload; "
                "the model is uploaded from <outputUriPrefix>/model",
            )
        validate_aliases(
            list(body["modelToUpload"].get("versionAliases") or []), "modelToUpload.versionAliases"
        )
        parent = body.get("parentModel")
        if parent and self.store.find(split_ref(parent)[0]) is None:
            raise not_found(f"parentModel: model {parent} does not exist.")
        model_id = body.get("modelId")
        if model_id and self.store.find(f"{location}/models/{model_id}") is not None:
            raise ApiError(409, f"modelId: a model with ID {model_id!r} already exists.")


def register(context: AreaContext) -> TrainingPipelinesArea:
    router = context.router
    area = TrainingPipelinesArea(context.backend, context.executor)
    pipelines = TrainingPipelines(context.backend, context.executor, context.models)
    pipelines.register(router, f"{LOCATION}/{models.COLLECTION}")
    return area
