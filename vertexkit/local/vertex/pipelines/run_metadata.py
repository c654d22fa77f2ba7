"""A pipeline run in Vertex ML Metadata, as Vertex writes it and the SDK reads it back.

What the SDK queries (google/cloud/aiplatform, 1.x):
- `PipelineJob._query_experiment_row` (`get_experiment_df`, a run the experiment's context has
  as a child): the `system.Run` execution `in_context(<run context>)`, its metadata `input:NAME`
  as the row's parameters and its state; the `system.Metrics` / `google.*Metrics` artifacts
  `in_context(<run context>)`, their metadata as the row's metrics.
- `aiplatform.get_pipeline_df(pipeline=)` (`metadata.py`, `_query_runs_to_data_frame`): the
  `system.Run` executions `in_context(<pipeline context>)`, each a row named by its display
  name, its metadata as `param.*` columns, the metadata of its output artifacts as `metric.*`.

So each run gets one `system.Run` execution (the pipeline's root DAG; ID and display name the
job's ID) in the run's context and the pipeline's, with the run's parameters as `input:NAME`
and, when it ends, the pipeline's output parameters as `output:NAME` and OUTPUT events to its
output artifacts; the run's context carries the same metadata. Every artifact a task consumes
or produces is an Artifact in the run's context (a cached task's outputs are the first run's
artifacts: one artifact per URI, its ID derived from the URI), and every task's execution is an
Execution with INPUT and OUTPUT events, which the task detail names.
"""

from __future__ import annotations

import hashlib
from typing import Any

from vertexkit.local.vertex.core.filters import CONTEXTS_KEY
from vertexkit.local.vertex.metadata.contexts import SCHEMA_VERSION
from vertexkit.local.vertex.store import Resource, ResourceStore, now_rfc3339

ARTIFACTS = "metadataArtifacts"
EXECUTIONS = "metadataExecutions"
CONTEXTS = "metadataContexts"
RUN_SCHEMA = "system.Run"
INPUT, OUTPUT = "INPUT", "OUTPUT"
# PipelineJob.state -> Execution.State of the run's execution
RUN_STATES = {
    "PIPELINE_STATE_SUCCEEDED": "COMPLETE",
    "PIPELINE_STATE_FAILED": "FAILED",
    "PIPELINE_STATE_CANCELLED": "CANCELLED",
}


def contexts_of(job: Resource) -> tuple[str, str]:
    """(the run's context, the pipeline's context) named in the job's `jobDetail`."""
    detail = job.get("jobDetail") or {}
    run = (detail.get("pipelineRunContext") or {}).get("name", "")
    pipeline = (detail.get("pipelineContext") or {}).get("name", "")
    return run, pipeline


def metadata_store(job: Resource) -> str:
    return contexts_of(job)[0].rsplit("/contexts/", 1)[0]


def run_execution_name(job: Resource) -> str:
    return f"{metadata_store(job)}/executions/{job['name'].rsplit('/', 1)[-1]}"


def start_run(store: ResourceStore, job: Resource, parameters: dict[str, Any]) -> None:
    """The run's `system.Run` execution, RUNNING, with its parameters as `input:NAME`."""
    run, pipeline = contexts_of(job)
    if not run:
        return
    metadata = {f"input:{name}": value for name, value in parameters.items()}
    name = run_execution_name(job)
    if store.find(name) is None:
        execution = _node(name, job["name"].rsplit("/", 1)[-1], RUN_SCHEMA, metadata)
        execution.update(state="RUNNING", **{CONTEXTS_KEY: [c for c in (run, pipeline) if c]})
        store.insert(EXECUTIONS, name, execution)
    _add_context_metadata(store, run, metadata)


def end_run(
    store: ResourceStore,
    job: Resource,
    parameters: dict[str, Any],
    artifacts: dict[str, Any],
) -> None:
    """The run's execution ended with the job: its state, `output:NAME` and OUTPUT events."""
    name = run_execution_name(job)
    if not contexts_of(job)[0] or store.find(name) is None:
        return
    metadata = {f"output:{key}": value for key, value in parameters.items()}
    state = RUN_STATES.get(job.get("state", ""), "FAILED")
    events = [_event(a["name"], OUTPUT) for a in _listed(artifacts) if a.get("name")]

    def change(execution: Resource) -> None:
        execution["state"] = state
        execution["metadata"] = {**execution.get("metadata", {}), **metadata}
        execution.setdefault("_events", []).extend(events)
        execution["updateTime"] = execution["etag"] = now_rfc3339()

    store.mutate(name, change)
    _add_context_metadata(store, contexts_of(job)[0], metadata)


def named_artifacts(store: ResourceStore, job: Resource, artifacts: dict[str, Any]) -> None:
    """Each artifact of a task's `inputs`/`outputs` (`{key: {"artifacts": [...]}}`) stored
    in the metadata store and in the run's context, its `name` filled in place."""
    run = contexts_of(job)[0]
    if not run:
        return
    for artifact in _listed(artifacts):
        name = f"{metadata_store(job)}/artifacts/{artifact_id(artifact['uri'])}"
        artifact["name"] = name
        stored = store.find(name)
        if stored is None:
            node = _node(name, artifact.get("displayName", ""), artifact["schemaTitle"],
                         artifact.get("metadata") or {})  # fmt: skip
            node.update(uri=artifact["uri"], state="LIVE", **{CONTEXTS_KEY: [run]})
            node["schemaVersion"] = artifact.get("schemaVersion", SCHEMA_VERSION)
            store.insert(ARTIFACTS, name, node)
        elif run not in stored.get(CONTEXTS_KEY, []):
            store.mutate(name, lambda node: node.setdefault(CONTEXTS_KEY, []).append(run))
        for key in ("createTime", "updateTime"):
            artifact[key] = (stored or store.get(name))[key]


def task_execution(store: ResourceStore, job: Resource, task: Resource) -> None:
    """The task's execution stored (its INPUT and OUTPUT events to the named artifacts), and
    the task detail's `execution` as the stored one."""
    run = contexts_of(job)[0]
    if not run or "execution" not in task:
        return
    name = f"{metadata_store(job)}/executions/{store.new_id()}"
    events = [_event(a["name"], INPUT) for a in _listed(task.get("inputs") or {}) if "name" in a]
    events += [_event(a["name"], OUTPUT) for a in _listed(task.get("outputs") or {}) if "name" in a]
    shown = task["execution"]
    node = _node(name, shown["displayName"], shown["schemaTitle"], shown.get("metadata") or {})
    node.update(state=shown["state"], _events=events, **{CONTEXTS_KEY: [run]})
    store.insert(EXECUTIONS, name, node)
    task["execution"] = {k: v for k, v in node.items() if not k.startswith("_")}


def artifact_id(uri: str) -> str:
    """A numeric ID per URI, as Vertex's artifact IDs are numbers: one artifact per URI."""
    return str(int(hashlib.sha256(uri.encode()).hexdigest()[:15], 16))


def _node(name: str, display: str, schema: str, metadata: dict[str, Any]) -> Resource:
    now = now_rfc3339()
    return {
        "name": name,
        "displayName": display,
        "schemaTitle": schema,
        "schemaVersion": SCHEMA_VERSION,
        "metadata": dict(metadata),
        "createTime": now,
        "updateTime": now,
        "etag": now,
    }


def _event(artifact: str, kind: str) -> Resource:
    return {"artifact": artifact, "type": kind, "eventTime": now_rfc3339()}


def _listed(artifacts: dict[str, Any]) -> list[Resource]:
    return [a for entry in artifacts.values() for a in (entry or {}).get("artifacts", [])]


def _add_context_metadata(store: ResourceStore, context: str, metadata: dict[str, Any]) -> None:
    if not metadata or store.find(context) is None:
        return

    def change(node: Resource) -> None:
        node["metadata"] = {**node.get("metadata", {}), **metadata}
        node["updateTime"] = node["etag"] = now_rfc3339()  # a changed node gets a new etag

    store.mutate(context, change)
