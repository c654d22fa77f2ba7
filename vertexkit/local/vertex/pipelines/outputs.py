"""The output-only fields Vertex fills on a pipeline job when it is created.

- `serviceAccount`: "If not specified, the Compute Engine default service account in the
  project will be used" (PipelineJob reference): `<PROJECT_NUMBER>-compute@developer...`.
- the label `vertex-ai-pipelines-run-billing-id`: a number Vertex adds to every run; the SDK
  reads it back as the run's int64 id (`preview/pipelinejob/pipeline_jobs.py`, rerun).
- `jobDetail.pipelineContext` / `jobDetail.pipelineRunContext`: the run's metadata contexts
  (`system.Pipeline` per pipeline name, `system.PipelineRun` per job), in the default store.
"""

from __future__ import annotations

import re
import secrets

from vertexkit.local.projects import project_number
from vertexkit.local.vertex.metadata.contexts import ensure_context
from vertexkit.local.vertex.store import Resource, ResourceStore

BILLING_LABEL = "vertex-ai-pipelines-run-billing-id"
PIPELINE_SCHEMA = "system.Pipeline"
PIPELINE_RUN_SCHEMA = "system.PipelineRun"
CONTEXT_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,127}$")


def default_service_account(number: str) -> str:
    return f"{number}-compute@developer.gserviceaccount.com"


def billing_id() -> str:
    """A positive int64 in decimal, as Vertex's ids are (the SDK parses it with int())."""
    return str(10**18 + secrets.randbelow(8 * 10**18))


def filled_fields(job: Resource, project: str) -> Resource:
    """serviceAccount and labels as Vertex answers them for a job of `project` (an ID or the
    project's number: a parent may name either)."""
    number = project if project.isdigit() else project_number(project)
    return {
        "serviceAccount": job.get("serviceAccount") or default_service_account(number),
        "labels": {**(job.get("labels") or {}), BILLING_LABEL: billing_id()},
    }


def context_id(pipeline_name: str) -> str:
    """KFP pipeline names are already valid context IDs; a hand-written spec's may not be."""
    if CONTEXT_ID.match(pipeline_name):
        return pipeline_name
    return re.sub(r"[^a-z0-9-]+", "-", pipeline_name.lower()).strip("-")[:128] or "pipeline"


def run_contexts(store: ResourceStore, location: str, pipeline_name: str, job_id: str) -> Resource:
    """Makes (or finds) the pipeline's context and makes the run's: the job's `jobDetail`."""
    pipeline = ensure_context(store, location, context_id(pipeline_name), PIPELINE_SCHEMA)
    run = ensure_context(store, location, job_id, PIPELINE_RUN_SCHEMA, [pipeline["name"]])
    return {"pipelineContext": pipeline, "pipelineRunContext": run}


def refresh_contexts(store: ResourceStore, job: Resource) -> None:
    """The contexts as stored now (an experiment may have become a parent of the run's)."""
    detail = job.get("jobDetail") or {}
    for key in ("pipelineContext", "pipelineRunContext"):
        current = store.find(detail.get(key, {}).get("name", ""))
        if current is not None:
            detail[key] = {k: v for k, v in current.items() if not k.startswith("_")}
