"""What the run page shows about a pipeline job, read from the stored job and its spec.

A task's parameters and input artifacts are resolved the way the orchestrator resolved them:
constants, pipeline parameters (through enclosing groups), and upstream tasks' outputs as they
are recorded in `jobDetail.taskDetails`.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any

from vertexkit.local.vertex.pipelines.models import (
    CANCELLED,
    FAILED,
    TERMINAL_STATES,
    parse_time,
)

Resource = dict[str, Any]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
GCP_RESOURCE_NAME = re.compile(r"/v1/(projects/[^?#]+)$")
# The Vertex console offers Retry on a run that failed or was cancelled.
RETRYABLE_STATES = frozenset({FAILED, CANCELLED})
# The PipelineJob fields a create request sets (the rest are output only or the runner's).
REQUEST_FIELDS = (
    "displayName",
    "pipelineSpec",
    "runtimeConfig",
    "labels",
    "serviceAccount",
    "network",
    "encryptionSpec",
    "reservedIpRanges",
)


def pipeline_name(job: Resource) -> str:
    return ((job.get("pipelineSpec") or {}).get("pipelineInfo") or {}).get("name", "")


def job_id(job: Resource) -> str:
    return job.get("name", "").rsplit("/", 1)[-1]


def retry_body(job: Resource) -> Resource:
    """The create request for a retry: the run's own request fields, nothing it produced."""
    return {key: job[key] for key in REQUEST_FIELDS if key in job}


def is_running(job: Resource) -> bool:
    return job.get("state") not in TERMINAL_STATES


def short_state(state: str) -> str:
    """`PIPELINE_STATE_RUNNING` / `JOB_STATE_RUNNING` -> `RUNNING`."""
    return state.removeprefix("PIPELINE_STATE_").removeprefix("JOB_STATE_") or "PENDING"


def duration(resource: Resource, now: datetime | None = None) -> str:
    start = resource.get("startTime")
    if not start:
        return ""
    end = resource.get("endTime")
    finish = parse_time(end) if end else (now or datetime.now(timezone.utc))
    seconds = max((finish - parse_time(start)).total_seconds(), 0.0)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return (
        f"{minutes} min {rest:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"
    )


def when(timestamp: str | None) -> str:
    """An RFC 3339 time as `2026-11-30 18:34:28` (UTC), or empty."""
    return parse_time(timestamp).strftime("%Y-%m-%d %H:%M:%S") if timestamp else ""


def task_details(job: Resource) -> dict[str, Resource]:
    """Task name -> its latest detail; the root DAG's own entry (no parent) is left out."""
    details = (job.get("jobDetail") or {}).get("taskDetails") or []
    return {t["taskName"]: t for t in details if t.get("parentTaskId")}


def task_states(job: Resource) -> dict[str, str]:
    return {name: detail.get("state", "PENDING") for name, detail in task_details(job).items()}


# Vertex's PipelineTaskDetail.State, as its console names them.
TASK_LABELS = {
    "NOT_TRIGGERED": "Not triggered",  # its condition was false (or an upstream task failed)
    "SKIPPED": "Cached",  # Vertex's state for a task served from the cache
    "SUCCEEDED": "Succeeded",
    "FAILED": "Failed",
    "CANCELLED": "Cancelled",
    "CANCEL_PENDING": "Cancelling",
    "CANCELLING": "Cancelling",
    "RUNNING": "Running",
    "PENDING": "Pending",
    "NOT_STARTED": "Pending",
}
WAITING = frozenset({"PENDING", "NOT_STARTED", ""})


def task_label(state: str) -> str:
    return TASK_LABELS.get(state, state.replace("_", " ").capitalize())


def shown_task_states(job: Resource, tasks: Any) -> dict[str, str]:
    """Each task's state as the run page draws it: its task detail's, and for a task that
    never started (no detail, or still PENDING) in a run that has ended, what Vertex shows:
    NOT_TRIGGERED (a false condition, a failed upstream task), or CANCELLED in a cancelled run."""
    recorded = task_states(job)
    ended = not is_running(job)
    never_ran = "CANCELLED" if job.get("state") == CANCELLED else "NOT_TRIGGERED"
    shown = {}
    for name in tasks:
        state = recorded.get(name, "PENDING")
        shown[name] = never_ran if ended and state in WAITING else state
    return shown


def failed_tasks(job: Resource) -> list[tuple[str, str]]:
    """(task, its error's message) for each failed leaf task, in the order they ran."""
    failed = [
        (detail.get("startTime") or "", name, (detail.get("error") or {}).get("message", ""))
        for name, detail in task_details(job).items()
        if detail.get("state") == "FAILED"
    ]
    return [(name, message) for _, name, message in sorted(failed)]


def run_error(job: Resource) -> str:
    """The run's error as its page's header says it: the failing task and its cause, not only
    the job's own summary ("some tasks failed")."""
    summary = (job.get("error") or {}).get("message", "")
    causes = [
        f"task {name} failed: {message}" if message else f"task {name} failed"
        for name, message in failed_tasks(job)
        if not (message and message in summary)
    ]
    if not causes:
        return summary
    return "; ".join(causes) + (f" ({summary})" if summary else "")


def task_chain(spec: Resource, name: str) -> list[Resource]:
    """The task specs from the root DAG down to task `name` (groups first), or []."""
    components = spec.get("components") or {}

    def search(dag: Resource, path: list[Resource]) -> list[Resource]:
        for task_name, task in (dag.get("tasks") or {}).items():
            if task_name == name:
                return [*path, task]
            ref = (task.get("componentRef") or {}).get("name", "")
            sub = (components.get(ref) or {}).get("dag")
            found = search(sub, [*path, task]) if sub else []
            if found:
                return found
        return []

    return search((spec.get("root") or {}).get("dag") or {}, [])


def pipeline_parameters(job: Resource) -> Resource:
    spec = job.get("pipelineSpec") or {}
    declared = ((spec.get("root") or {}).get("inputDefinitions") or {}).get("parameters") or {}
    values = {k: d.get("defaultValue") for k, d in declared.items() if "defaultValue" in d}
    return {**values, **((job.get("runtimeConfig") or {}).get("parameterValues") or {})}


def output_parameters(detail: Resource) -> Resource:
    metadata = (detail.get("execution") or {}).get("metadata") or {}
    return {k.removeprefix("output:"): v for k, v in metadata.items() if k.startswith("output:")}


def typed_output_parameters(job: Resource, name: str) -> dict[str, tuple[Any, str]]:
    """Output parameter -> (value, its declared type), integers as integers."""
    spec = job.get("pipelineSpec") or {}
    chain = task_chain(spec, name)
    declared = (
        ((component_of(spec, chain[-1]).get("outputDefinitions") or {}).get("parameters") or {})
        if chain
        else {}
    )
    return {
        key: (typed(value, kind), kind)
        for key, value in output_parameters(task_details(job).get(name, {})).items()
        for kind in [(declared.get(key) or {}).get("parameterType", "")]
    }


def resolve_parameter(job: Resource, chain: list[Resource], level: int, spec: Resource) -> Any:
    if "runtimeValue" in spec:
        return (spec["runtimeValue"] or {}).get("constant")
    if "componentInputParameter" in spec:
        key = spec["componentInputParameter"]
        if level == 0:
            return pipeline_parameters(job).get(key)
        outer = ((chain[level - 1].get("inputs") or {}).get("parameters") or {}).get(key)
        return resolve_parameter(job, chain, level - 1, outer) if outer else None
    if "taskOutputParameter" in spec:
        producer = spec["taskOutputParameter"]
        detail = task_details(job).get(producer.get("producerTask", ""), {})
        return output_parameters(detail).get(producer.get("outputParameterKey", ""))
    if "taskFinalStatus" in spec:
        return "(the upstream task's final status)"
    return None


def resolve_artifacts(job: Resource, chain: list[Resource], level: int, spec: Resource) -> list:
    if "taskOutputArtifact" in spec:
        producer = spec["taskOutputArtifact"]
        detail = task_details(job).get(producer.get("producerTask", ""), {})
        outputs = detail.get("outputs") or {}
        return (outputs.get(producer.get("outputArtifactKey", "")) or {}).get("artifacts") or []
    if "componentInputArtifact" in spec and level > 0:
        key = spec["componentInputArtifact"]
        outer = ((chain[level - 1].get("inputs") or {}).get("artifacts") or {}).get(key)
        return resolve_artifacts(job, chain, level - 1, outer) if outer else []
    return []


CHANNEL_PREFIX = "pipelinechannel--"
PLACEHOLDER = re.compile(r"\{\{\$\.inputs\.parameters\[['\"]([^'\"]+)['\"]\]\}\}")


def typed(value: Any, parameter_type: str) -> Any:
    """A parameter as its declared type: JSON (and compiled specs) carry whole numbers as
    floats, so an NUMBER_INTEGER `100.0` is the integer 100 the task received."""
    if parameter_type == "NUMBER_INTEGER" and isinstance(value, float) and value.is_integer():
        return int(value)
    if parameter_type == "NUMBER_INTEGER" and isinstance(value, str):
        try:
            return int(float(value))
        except ValueError:
            return value
    return value


def fill_placeholders(value: Any, known: Resource) -> Any:
    """`{{$.inputs.parameters['pipelinechannel--gcs_root']}}/training` -> `gs://b/training`,
    as the orchestrator fills a compiled f-string; inside lists and dicts too."""
    if isinstance(value, str):

        def sub(match: re.Match[str]) -> str:
            found = known.get(match.group(1))
            if found is None:
                return match.group(0)
            return found if isinstance(found, str) else json.dumps(found)

        return PLACEHOLDER.sub(sub, value)
    if isinstance(value, list):
        return [fill_placeholders(item, known) for item in value]
    if isinstance(value, dict):
        return {key: fill_placeholders(item, known) for key, item in value.items()}
    return value


def component_of(spec: Resource, task: Resource) -> Resource:
    ref = (task.get("componentRef") or {}).get("name", "")
    return (spec.get("components") or {}).get(ref) or {}


def declared_parameters(spec: Resource, task: Resource) -> Resource:
    return ((component_of(spec, task).get("inputDefinitions") or {}).get("parameters")) or {}


def executor_inputs(detail: Resource) -> Resource:
    """The inputs the executor recorded in the task's execution (`input:NAME`), where it did."""
    metadata = (detail.get("execution") or {}).get("metadata") or {}
    return {k.removeprefix("input:"): v for k, v in metadata.items() if k.startswith("input:")}


def source_type(job: Resource, chain: list[Resource], level: int, spec: Resource) -> str:
    """The declared type of what a task input reads: the pipeline's (or enclosing group's)
    parameter, or the producer's output; "" for a constant."""
    pipeline = job.get("pipelineSpec") or {}
    if "componentInputParameter" in spec:
        key = spec["componentInputParameter"]
        if level == 0:
            return pipeline_parameter_types(job).get(key, "")
        declared = declared_parameters(pipeline, chain[level - 1])
        return (declared.get(key) or {}).get("parameterType", "")
    if "taskOutputParameter" in spec:
        producer = spec["taskOutputParameter"].get("producerTask", "")
        found = task_chain(pipeline, producer)
        outputs = (
            (component_of(pipeline, found[-1]).get("outputDefinitions") or {}).get("parameters")
            if found
            else None
        ) or {}
        key = spec["taskOutputParameter"].get("outputParameterKey", "")
        return (outputs.get(key) or {}).get("parameterType", "")
    return ""


def task_parameters(job: Resource, name: str) -> dict[str, tuple[Any, str]]:
    """Parameter -> (value, type) as the task received it: what its execution recorded, or
    resolved from the spec (its inputs, then its component's defaults), placeholders filled,
    whole numbers of integer parameters as integers; the compiler's `pipelinechannel--`
    plumbing is left out."""
    spec = job.get("pipelineSpec") or {}
    chain = task_chain(spec, name)
    if not chain:
        return {}
    level = len(chain) - 1
    given = (chain[-1].get("inputs") or {}).get("parameters") or {}
    declared = declared_parameters(spec, chain[-1])
    resolved = {
        key: typed(
            resolve_parameter(job, chain, level, value),
            (declared.get(key) or {}).get("parameterType") or source_type(job, chain, level, value),
        )
        for key, value in given.items()
    }
    recorded = executor_inputs(task_details(job).get(name, {}))
    result: dict[str, tuple[Any, str]] = {}
    for key in [*declared, *(k for k in given if k not in declared)]:
        if key.startswith(CHANNEL_PREFIX):
            continue
        kind = (declared.get(key) or {}).get("parameterType", "")
        if key in recorded:
            value = recorded[key]
        elif key in resolved:
            value = fill_placeholders(resolved[key], resolved)
        elif "defaultValue" in (declared.get(key) or {}):
            value = declared[key]["defaultValue"]
        else:
            continue
        result[key] = (typed(value, kind), kind)
    return result


def pipeline_parameter_types(job: Resource) -> dict[str, str]:
    spec = job.get("pipelineSpec") or {}
    declared = ((spec.get("root") or {}).get("inputDefinitions") or {}).get("parameters") or {}
    return {key: (d or {}).get("parameterType", "") for key, d in declared.items()}


def typed_pipeline_parameters(job: Resource) -> dict[str, tuple[Any, str]]:
    kinds = pipeline_parameter_types(job)
    return {
        key: (typed(value, kinds.get(key, "")), kinds.get(key, ""))
        for key, value in pipeline_parameters(job).items()
    }


def task_inputs(job: Resource, name: str) -> tuple[Resource, dict[str, list]]:
    """(parameter name -> value, artifact name -> artifacts) as the task received them."""
    chain = task_chain(job.get("pipelineSpec") or {}, name)
    if not chain:
        return {}, {}
    level = len(chain) - 1
    inputs = chain[-1].get("inputs") or {}
    parameters = {
        key: resolve_parameter(job, chain, level, spec)
        for key, spec in (inputs.get("parameters") or {}).items()
    }
    artifacts = {
        key: resolve_artifacts(job, chain, level, spec)
        for key, spec in (inputs.get("artifacts") or {}).items()
    }
    return parameters, artifacts


def gcp_resource_links(value: Any) -> list[tuple[str, str, str | None]]:
    """GCPC's `gcp_resources` JSON -> (type, resource URI, console path of a local resource)."""
    try:
        parsed = json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError:
        return []
    links = []
    for resource in (parsed or {}).get("resources") or []:
        uri = str(resource.get("resourceUri", ""))
        match = GCP_RESOURCE_NAME.search(uri)
        links.append(
            (str(resource.get("resourceType", "")), uri, match.group(1) if match else None)
        )
    return links


def task_log(text: str, task: str) -> str:
    """The lines kfp.local printed for one task: from `Executing task 'T'` to its status line."""
    plain = ANSI.sub("", text).splitlines()
    start = f"Executing task '{task}'"
    end = f"Task '{task}' finished with status"
    begin = next((i for i, line in enumerate(plain) if line.endswith(start)), None)
    if begin is None:
        return ""
    finish = next((i for i in range(begin, len(plain)) if end in plain[i]), len(plain) - 1)
    return "\n".join(plain[begin : finish + 1])
