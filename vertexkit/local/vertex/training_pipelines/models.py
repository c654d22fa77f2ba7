"""TrainingPipeline state: the PIPELINE_STATE_* values Vertex uses and their timestamps.

A pipeline is stored as the camelCase JSON Vertex answers with; keys that start with `_` are
the local runner's bookkeeping and are stripped before answering.
"""

from __future__ import annotations

from typing import Any

from vertexkit.local.vertex.pipelines.models import (  # Vertex's one PipelineState enum
    CANCELLED,
    CANCELLING,
    FAILED,
    PENDING,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    TERMINAL_STATES,
)
from vertexkit.local.vertex.store import Resource, new_job_resource, stamp_state

COLLECTION = "trainingPipelines"
__all__ = ["CANCELLED", "FAILED", "PENDING", "QUEUED", "SUCCEEDED"]  # re-exported for the area
ACTIVE_STATES = frozenset({QUEUED, PENDING, RUNNING, CANCELLING})
# What the request may not set: Vertex fills these.
OUTPUT_ONLY = ("name", "state", "error", "createTime", "startTime", "endTime", "updateTime",
               "trainingTaskMetadata")  # fmt: skip


def new_pipeline(name: str, body: dict[str, Any]) -> Resource:
    return new_job_resource(name, body, QUEUED)


def set_state(pipeline: Resource, state: str) -> None:
    stamp_state(pipeline, state, RUNNING, TERMINAL_STATES)


def set_error(pipeline: Resource, code: int, message: str) -> None:
    pipeline["error"] = {"code": code, "message": message}


def is_terminal(pipeline: Resource) -> bool:
    return pipeline.get("state") in TERMINAL_STATES


def public(pipeline: Resource) -> Resource:
    return {key: value for key, value in pipeline.items() if not key.startswith("_")}
