"""Vertex's pipeline-level placeholders, resolved to what Vertex gives a task.

GCPC operators default `project`, `location` and `persistent_resource_id` to
`{{$.pipeline_google_cloud_project_id}}`, `{{$.pipeline_google_cloud_location}}` and
`{{$.pipeline_persistent_resource_id}}`; a user's component may take
`dsl.PIPELINE_JOB_RESOURCE_NAME_PLACEHOLDER` and friends. kfp.local knows only some of them
(and gives the pipeline root as a local path, the job name as its own run name); the rest end
in an IndexError inside its placeholder parser. Vertex fills them from the PipelineJob, and so
does this, before kfp.local's own resolution runs.
"""

from __future__ import annotations

import json
import re
from typing import Any

# The whole executor input, escaped N times for a JSON string (GCPC's
# create_custom_training_job_from_component puts it inside the custom job's payload).
EXECUTOR_INPUT_ESCAPED = re.compile(r"\{\{\$\.json_escape\[(\d)\]\}\}")


def job_placeholders(settings: dict[str, Any]) -> dict[str, str]:
    """Placeholder -> value for the job described by the driver's run settings."""
    job_name = settings.get("pipelineJobName") or ""
    parts = job_name.split("/")
    project, location = (parts[1], parts[3]) if len(parts) >= 6 else ("", "")
    create_time = settings.get("createTime") or ""
    return {
        "{{$.pipeline_google_cloud_project_id}}": project,
        "{{$.pipeline_google_cloud_location}}": location,
        "{{$.pipeline_job_resource_name}}": job_name,
        "{{$.pipeline_job_name}}": parts[-1],  # the job's ID, as Vertex gives it
        "{{$.pipeline_root}}": settings.get("pipelineRootUri") or settings["pipelineRoot"],
        "{{$.pipeline_service_account}}": settings.get("serviceAccount") or "",
        "{{$.pipeline_network}}": settings.get("network") or "",
        "{{$.pipeline_encryption_key_name}}": settings.get("kmsKeyName") or "",
        "{{$.pipeline_persistent_resource_id}}": settings.get("persistentResourceId") or "",
        "{{$.pipeline_job_create_time_utc}}": create_time,
        # An unscheduled run is "scheduled" when it is created.
        "{{$.pipeline_job_schedule_time_utc}}": settings.get("scheduleTime") or create_time,
    }


def job_settings(job: dict[str, Any]) -> dict[str, Any]:
    """What the placeholders need from a stored PipelineJob, for the driver's run settings."""
    runtime = job.get("runtimeConfig", {}).get("defaultRuntime", {})
    persistent = runtime.get("persistentResourceRuntimeDetail", {})
    return {
        "pipelineJobName": job["name"],
        "createTime": job.get("createTime", ""),
        "serviceAccount": job.get("serviceAccount", ""),
        "network": job.get("network", ""),
        "kmsKeyName": job.get("encryptionSpec", {}).get("kmsKeyName", ""),
        "persistentResourceId": persistent.get("persistentResourceName", "").rsplit("/", 1)[-1],
    }


def resolve(element: str, values: dict[str, str]) -> str:
    """`element` with every Vertex placeholder in it replaced."""
    if "{{$.pipeline_" not in element:
        return element
    for placeholder, value in values.items():
        element = element.replace(placeholder, value)
    return element


def resolve_escaped_executor_input(element: str, executor_input: dict[str, Any]) -> str:
    """`{{$.json_escape[N]}}` -> the executor input's JSON, escaped N times as a JSON string's
    contents (kfp.local refuses every json_escape placeholder)."""

    return EXECUTOR_INPUT_ESCAPED.sub(
        lambda match: escaped_executor_input(executor_input, int(match.group(1))), element
    )


def escaped_executor_input(executor_input: dict[str, Any], times: int) -> str:
    """The executor input's JSON, escaped `times` times as a JSON string's contents."""
    text = json.dumps(executor_input)
    for _ in range(times):
        text = json.dumps(text)[1:-1]
    return text
