"""A TrainingPipeline create request (`trainingPipelines.create`), checked as Vertex checks it.

The pipeline's own fields only: display name, labels, the task definition and inputs being
present, the model to upload and where it goes (`modelId` or `parentModel`, not both). The
task inputs of a custom task are a CustomJobSpec: `validate_custom_job_spec` checks them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vertexkit.specs.errors import SpecError, join_path
from vertexkit.specs.naming import validate_model_id
from vertexkit.specs.requests import validate_metadata

CUSTOM_TASK = "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"
DEFINITION_PREFIX = "gs://google-cloud-aiplatform/schema/trainingjob/definition/"


def validate_training_pipeline(pipeline: Mapping[str, Any]) -> None:
    """Raises SpecError naming the first field Vertex would refuse."""
    validate_metadata(pipeline, "")
    _check_definition(pipeline.get("trainingTaskDefinition"))
    inputs = pipeline.get("trainingTaskInputs")
    if not isinstance(inputs, Mapping) or not inputs:
        raise SpecError("trainingTaskInputs", "required: the task's inputs (a CustomJobSpec)")
    model = pipeline.get("modelToUpload")
    if model:
        validate_model_to_upload(model, "modelToUpload")
    _check_model_target(pipeline, bool(model))


def _check_definition(definition: Any) -> None:
    if not isinstance(definition, str) or not definition:
        raise SpecError("trainingTaskDefinition", f"required; e.g. {CUSTOM_TASK}")
    if not definition.startswith(DEFINITION_PREFIX) or not definition.endswith(".yaml"):
        raise SpecError(
            "trainingTaskDefinition",
            f"{definition!r} is not a training task schema: use one under "
            f"{DEFINITION_PREFIX}, e.g. {CUSTOM_TASK}",
        )


def validate_model_to_upload(model: Mapping[str, Any], path: str) -> None:
    """The Model a pipeline uploads: a serving container, optional name and labels."""
    validate_metadata(model, path, display_name_required=False)
    image = (model.get("containerSpec") or {}).get("imageUri")
    if not image:
        raise SpecError(
            join_path(path, "containerSpec.imageUri"),
            "required: a prebuilt prediction image or a custom serving container",
        )


def _check_model_target(pipeline: Mapping[str, Any], has_model: bool) -> None:
    model_id, parent = pipeline.get("modelId"), pipeline.get("parentModel")
    if model_id and parent:
        raise SpecError("modelId", "cannot be set together with parentModel")
    if (model_id or parent) and not has_model:
        field = "modelId" if model_id else "parentModel"
        raise SpecError(field, "needs modelToUpload: there is no model to upload")
    if model_id:
        validate_model_id(model_id, "modelId")
