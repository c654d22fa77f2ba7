"""Vertex ML Metadata (contexts, artifacts, executions) and TensorBoard resources
(tensorboards, their experiments and runs), checked as Vertex checks a create request."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from vertexkit.specs.errors import SpecError
from vertexkit.specs.naming import shorten
from vertexkit.specs.requests import validate_metadata

# Metadata IDs: 4-128 of [a-z0-9-]; TensorBoard experiment and run IDs: 1-128 of the same.
METADATA_ID = re.compile(r"^[a-z0-9][a-z0-9-]{3,127}$")
TENSORBOARD_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,127}$")
EXECUTION_STATES = ("NEW", "RUNNING", "COMPLETE", "FAILED", "CACHED", "CANCELLED")
ARTIFACT_STATES = ("PENDING", "LIVE")


def validate_resource_id(value: str | None, field: str, pattern: re.Pattern[str]) -> None:
    """An ID the client chose (unset means the service picks one)."""
    if value is None or value == "":
        return
    if not pattern.match(value):
        lengths = "4-128" if pattern is METADATA_ID else "1-128"
        raise SpecError(field, f"{lengths} characters of [a-z0-9-], not starting with '-'; "
                        f"got {shorten(value)}")  # fmt: skip


def validate_metadata_node(node: Mapping[str, Any]) -> None:
    """A Context, Artifact or Execution: a schema title, an optional name, labels, metadata."""
    validate_metadata(node, "", display_name_required=False)
    if not node.get("schemaTitle"):
        raise SpecError("schemaTitle", "required: e.g. system.Experiment, system.Artifact")
    metadata = node.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise SpecError("metadata", f"must be a JSON object; got {shorten(metadata)}")
    _check_state(node.get("state"))


def _check_state(state: Any) -> None:
    if state in (None, "", "STATE_UNSPECIFIED"):
        return
    if state not in EXECUTION_STATES + ARTIFACT_STATES:
        allowed = ", ".join(EXECUTION_STATES + ARTIFACT_STATES)
        raise SpecError("state", f"{shorten(state)} is not one of {allowed}")


def validate_tensorboard(tensorboard: Mapping[str, Any]) -> None:
    validate_metadata(tensorboard, "")


def validate_tensorboard_child(child: Mapping[str, Any], *, name_required: bool) -> None:
    """A TensorboardExperiment (display name optional) or TensorboardRun (required)."""
    validate_metadata(child, "", display_name_required=name_required)


def validate_time_series(series: Mapping[str, Any]) -> None:
    """A TensorboardTimeSeries: a display name and a value type."""
    validate_metadata(series, "")
    if series.get("valueType") in (None, "", "VALUE_TYPE_UNSPECIFIED"):
        raise SpecError("valueType", "required: SCALAR, TENSOR or BLOB_SEQUENCE")
