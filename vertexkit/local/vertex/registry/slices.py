"""Model evaluation slices: `models.evaluations.slices` get, list and batchImport.

Slices (an evaluation's metrics for one value of one dimension, e.g. `annotationSpec=Adelie`)
are written only by Vertex's own evaluation pipelines; `models.evaluations.import` takes a
ModelEvaluation, which has no slices. So a local evaluation has none: list answers an empty page,
get a 404, and batchImport (whose evaluated annotations belong to an existing slice) a 404 for
the slice it names.
"""

from __future__ import annotations

from typing import Any

from vertexkit.local.errors import not_found
from vertexkit.local.vertex.protos import parse
from vertexkit.local.vertex.registry.models import ModelRegistry
from vertexkit.local.vertex.store import Resource
from vertexkit.runtime.gapic import aiplatform_v1


def list_slices(models: ModelRegistry, location: str, model: str, evaluation: str) -> list:
    models.get_evaluation(location, model, evaluation)  # a missing evaluation is a 404
    return []


def get_slice(
    models: ModelRegistry, location: str, model: str, evaluation: str, slice_id: str
) -> Resource:
    found = models.get_evaluation(location, model, evaluation)
    raise not_found(f"ModelEvaluationSlice {found['name']}/slices/{slice_id} does not exist.")


def batch_import(
    models: ModelRegistry,
    location: str,
    model: str,
    evaluation: str,
    slice_id: str,
    body: dict[str, Any],
) -> Resource:
    parse(aiplatform_v1.BatchImportEvaluatedAnnotationsRequest, body)
    return get_slice(models, location, model, evaluation, slice_id)
