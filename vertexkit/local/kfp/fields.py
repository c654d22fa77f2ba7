"""Every request field of the KFP v2beta1 messages the local API accepts, with its local meaning:
honoured, accepted with no local effect (kept and answered, said here and in docs/kfp.md), or
refused with a 400 naming it. Output-only fields in a request are refused too, and so is a field
the message does not have: nothing is accepted and dropped in silence.

Field names are the proto's (backend/api/v2beta1/*.proto in kubeflow/pipelines); a request may
spell them in lowerCamelCase as protojson allows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from vertexkit.local.kfp.errors import invalid

HONOURED = "honoured"
NO_EFFECT = "no local effect"
REFUSED = "refused"
OUTPUT_ONLY = "output only"


@dataclass(frozen=True)
class Field:
    disposition: str
    note: str = ""
    message: dict[str, Field] | None = field(default=None, compare=False)
    refuse_empty: bool = False  # REFUSED fields: also when sent empty (else only when set)


def _out(note: str = "") -> Field:
    return Field(OUTPUT_ONLY, note or "set by the server")


RUNTIME_CONFIG = {
    "parameters": Field(
        HONOURED, "the PipelineJob's parameterValues, checked against the pipeline's inputs"
    ),
    "pipeline_root": Field(
        HONOURED, "gs:// only (the local Cloud Storage); empty: gs://mlpipeline/v2/artifacts"
    ),
}
VERSION_REFERENCE = {
    "pipeline_id": Field(HONOURED, "required"),
    "pipeline_version_id": Field(HONOURED, "empty: the pipeline's latest version"),
}
_RUN_SOURCE = {
    "pipeline_version_id": Field(HONOURED, "deprecated: as pipeline_version_reference's"),
    "pipeline_spec": Field(
        HONOURED, "a compiled PipelineSpec; a non-empty platform_spec (kfp-kubernetes) is refused"
    ),
    "pipeline_version_reference": Field(HONOURED, message=VERSION_REFERENCE),
    "runtime_config": Field(HONOURED, message=RUNTIME_CONFIG),
    "service_account": Field(
        NO_EFFECT,
        "a Kubernetes service account: tasks run as local "
        "processes with the local cloud's credentials; kept and answered",
    ),
    "plugins_input": Field(REFUSED, "no KFP plugin (MLflow) runs on the local cloud"),
}
RUN = {
    "experiment_id": Field(HONOURED, "empty: the Default experiment"),
    "display_name": Field(HONOURED, "required"),
    "description": Field(HONOURED),
    **_RUN_SOURCE,
    **{
        name: _out()
        for name in (
            "run_id",
            "storage_state",
            "created_at",
            "scheduled_at",
            "finished_at",
            "state",
            "error",
            "run_details",
            "recurring_run_id",
            "state_history",
            "plugins_output",
        )
    },
}
EXPERIMENT = {
    "display_name": Field(HONOURED, "required, unique in its namespace"),
    "description": Field(HONOURED),
    "namespace": Field(
        HONOURED,
        "a partition of experiments and runs (no authorization: healthz answers multi_user false)",
    ),
    **{
        name: _out()
        for name in ("experiment_id", "created_at", "storage_state", "last_run_created_at")
    },
}
PIPELINE = {
    "display_name": Field(HONOURED, "empty: name"),
    "name": Field(HONOURED, "unique in its namespace; empty: display_name"),
    "description": Field(HONOURED),
    "namespace": Field(HONOURED, "as an experiment's"),
    "tags": Field(HONOURED, "kept, answered"),
    **{name: _out() for name in ("pipeline_id", "created_at", "error")},
}
PIPELINE_VERSION = {
    "pipeline_id": Field(HONOURED, "the path's, when given in both"),
    "display_name": Field(HONOURED, "empty: name"),
    "name": Field(HONOURED, "unique in its pipeline; empty: display_name"),
    "description": Field(HONOURED),
    "pipeline_spec": Field(HONOURED, "required locally"),
    "package_url": Field(
        REFUSED,
        "the local KFP API fetches no URL: send pipeline_spec or "
        "upload the file (pipelines/upload_version)",
    ),
    "code_source_url": Field(NO_EFFECT, "kept and answered"),
    "tags": Field(HONOURED, "kept, answered"),
    **{name: _out() for name in ("pipeline_version_id", "created_at", "error")},
}
PIPELINE_AND_VERSION = {
    "pipeline": Field(HONOURED, message=PIPELINE),
    "pipeline_version": Field(HONOURED, message=PIPELINE_VERSION),
}
_SCHEDULE = {
    "start_time": Field(HONOURED, "no run before it"),
    "end_time": Field(HONOURED, "no run after it"),
}
TRIGGER = {
    "cron_schedule": Field(
        HONOURED,
        message={
            **_SCHEDULE,
            "cron": Field(HONOURED, "6 fields, seconds first (robfig/cron), UTC"),
        },
    ),
    "periodic_schedule": Field(
        HONOURED, message={**_SCHEDULE, "interval_second": Field(HONOURED, "at least 1")}
    ),
}
RECURRING_RUN = {
    "display_name": Field(HONOURED, "required"),
    "description": Field(HONOURED),
    **_RUN_SOURCE,
    "max_concurrency": Field(HONOURED, "1..10 active runs; a due run waits for a slot"),
    "trigger": Field(HONOURED, "exactly one of cron_schedule, periodic_schedule", message=TRIGGER),
    "mode": Field(HONOURED, "ENABLE or DISABLE"),
    "no_catchup": Field(
        HONOURED, "true: only the latest missed time fires; false: each, oldest first"
    ),
    "namespace": Field(HONOURED, "as an experiment's"),
    "experiment_id": Field(HONOURED, "empty: the Default experiment"),
    **{
        name: _out() for name in ("recurring_run_id", "created_at", "updated_at", "status", "error")
    },
}
MESSAGES = {
    "Run": RUN,
    "Experiment": EXPERIMENT,
    "Pipeline": PIPELINE,
    "PipelineVersion": PIPELINE_VERSION,
    "CreatePipelineAndVersionRequest": PIPELINE_AND_VERSION,
    "RecurringRun": RECURRING_RUN,
}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def parse(body: Any, message: dict[str, Field], path: str) -> dict[str, Any]:
    """The request's fields in snake_case, each checked against its disposition."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise invalid(f"{path}: expected a JSON object, got {type(body).__name__}")
    parsed: dict[str, Any] = {}
    for key, value in body.items():
        name = snake(key)
        where = f"{path}.{name}"
        spec = message.get(name)
        if spec is None:
            raise invalid(f"{where}: unknown field (allowed: {', '.join(sorted(message))})")
        if spec.disposition == OUTPUT_ONLY and value not in (None, "", [], {}):
            raise invalid(f"{where} is output only: the server sets it")
        if spec.disposition == OUTPUT_ONLY:
            continue
        if spec.disposition == REFUSED and (spec.refuse_empty or value not in (None, "", {}, [])):
            raise invalid(f"{where}: {spec.note}")
        if spec.disposition == REFUSED:
            continue
        if spec.message is not None and value is not None:
            value = parse(value, spec.message, where)
        parsed[name] = value
    return parsed


def check_query(query: dict[str, str], allowed: set[str]) -> None:
    unknown = sorted(set(query) - allowed)
    if unknown:
        listed = ", ".join(sorted(allowed)) or "none"
        raise invalid(f"unknown query parameter(s) {', '.join(unknown)} (allowed: {listed})")


def markdown() -> str:
    """The table of every field's local meaning, as docs/kfp.md carries it."""
    lines = ["| message | field | local meaning | note |", "|---|---|---|---|"]

    def walk(message: dict[str, Field], label: str, prefix: str) -> None:
        for name, spec in message.items():
            lines.append(f"| {label} | `{prefix}{name}` | {spec.disposition} | {spec.note} |")
            if spec.message is not None:
                walk(spec.message, label, f"{prefix}{name}.")

    for label, message in MESSAGES.items():
        walk(message, label, "")
    return "\n".join(lines) + "\n"
