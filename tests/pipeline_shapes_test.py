"""What a pipeline job answers (the output fields Vertex fills, its first state, its metadata
contexts) and what is refused before anything exists, through Google's own clients.

Each expected value names its Google source beside it.
"""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import re
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.api_core import exceptions
from google.cloud import aiplatform
from google.cloud.aiplatform import pipeline_jobs
from google.cloud.aiplatform.metadata import utils as metadata_utils

from tests.pipeline_jobs_test import SERVICE_ACCOUNT, compile_pipeline, fresh_root, tiny_pipeline
from vertexkit.local import LocalCloud
from vertexkit.local.projects import numbered_name, project_number

BILLING_LABEL = "vertex-ai-pipelines-run-billing-id"  # SDK: preview/pipelinejob/pipeline_jobs.py


def empty_spec(name: str = "shapes") -> dict[str, Any]:
    """A pipeline with no tasks: valid, and it needs no components."""
    return {
        "pipelineInfo": {"name": name},
        "root": {"dag": {"tasks": {}}},
        "schemaVersion": "2.1.0",
        "sdkVersion": "kfp-2.7.0",
    }


def job_body(spec: dict[str, Any], root: str, display_name: str = "shapes") -> dict[str, Any]:
    return {
        "display_name": display_name,
        "pipeline_spec": spec,
        "runtime_config": {"gcs_output_directory": root},
    }


@pytest.fixture(autouse=True)
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline_jobs, "_JOB_WAIT_TIME", 0.2)
    monkeypatch.setattr(pipeline_jobs, "_WAIT_TIME_MULTIPLIER", 1)


def test_created_job_answers_the_fields_vertex_fills(local_cloud: LocalCloud) -> None:
    ctx = local_cloud.context()
    client = ctx.pipeline_client()
    name = f"shapes-{uuid.uuid4().hex[:8]}"
    job_id = f"{name}-run"
    created = client.create_pipeline_job(
        parent=ctx.parent, pipeline_job=job_body(empty_spec(name), fresh_root()),
        pipeline_job_id=job_id,
    )  # fmt: skip
    # Google's sample output of a just-created pipeline job: "PipelineState.PIPELINE_STATE_PENDING"
    assert created.state.name == "PIPELINE_STATE_PENDING"
    # PipelineJob reference, serviceAccount: "If not specified, the Compute Engine default
    # service account in the project will be used": PROJECT_NUMBER-compute@developer...
    number = project_number(ctx.project)
    assert created.service_account == f"{number}-compute@developer.gserviceaccount.com"
    # the SDK reads this label back as the run's int64 id (int(labels[BILLING_LABEL]))
    assert int(created.labels[BILLING_LABEL]) > 0
    # PipelineJobDetail reference: pipelineContext "the context of the pipeline",
    # pipelineRunContext "the context of the current pipeline run"; schema titles are the SDK's
    # metadata constants SYSTEM_PIPELINE / SYSTEM_PIPELINE_RUN.
    store = f"{numbered_name(ctx.parent)}/metadataStores/default"  # named by project number
    pipeline_context = created.job_detail.pipeline_context
    run_context = created.job_detail.pipeline_run_context
    assert pipeline_context.name == f"{store}/contexts/{name}"
    assert pipeline_context.schema_title == "system.Pipeline"
    assert run_context.name == f"{store}/contexts/{job_id}"
    assert run_context.schema_title == "system.PipelineRun"
    assert list(run_context.parent_contexts) == [pipeline_context.name]
    ctx.init_aiplatform()
    runs = f'schema_title="system.PipelineRun" AND parent_contexts:"{pipeline_context.name}"'
    listed = aiplatform.Context.list(filter=runs)
    assert [c.resource_name for c in listed] == [run_context.name]


def test_a_given_service_account_is_kept(local_cloud: LocalCloud) -> None:
    ctx = local_cloud.context()
    body = {**job_body(empty_spec(), fresh_root()), "service_account": SERVICE_ACCOUNT}
    created = ctx.pipeline_client().create_pipeline_job(parent=ctx.parent, pipeline_job=body)
    assert created.service_account == SERVICE_ACCOUNT


def test_submit_with_an_experiment_associates_the_run(
    local_cloud: LocalCloud, tmp_path: Path
) -> None:
    # SDK pipeline_jobs.py: submit(experiment=) -> _get_context() reads
    # job_detail.pipeline_run_context, the experiment adds it as a child (addContextChildren);
    # get_associated_experiment() reads pipeline_run_context.parent_contexts back.
    local_cloud.context().init_aiplatform(service_account=SERVICE_ACCOUNT)
    experiment = aiplatform.Experiment.get_or_create(f"shapes-{uuid.uuid4().hex[:8]}")
    job = aiplatform.PipelineJob(
        display_name="tiny",
        template_path=compile_pipeline(tiny_pipeline, tmp_path / "tiny.yaml"),
        pipeline_root=fresh_root(),
        job_id=f"tiny-{uuid.uuid4().hex[:12]}",
        enable_caching=False,
    )
    job.submit(experiment=experiment)
    job.wait()
    again = aiplatform.PipelineJob.get(job.resource_name)
    assert again.get_associated_experiment().resource_name == experiment.resource_name
    # metadata.py get_pipeline_df: Context(resource_name=pipeline) must be a system.Pipeline
    assert aiplatform.get_pipeline_df(pipeline="tiny-two-step") is not None
    # the filters the SDK writes (metadata/utils.py _make_filter_string): a list of schema
    # titles in parentheses OR'd, AND parent_contexts
    both = metadata_utils._make_filter_string(
        schema_title=["system.PipelineRun", "system.ExperimentRun"],
        parent_contexts=[experiment.resource_name],
    )
    assert both.startswith("(") and " AND " in both
    runs = aiplatform.Context.list(filter=both)
    assert [c.resource_name for c in runs] == [
        again.gca_resource.job_detail.pipeline_run_context.name
    ]
    # Experiment.list wraps the user's filter: `schema_title="system.Experiment" AND (...)`
    found = aiplatform.Experiment.list(filter=f'display_name="{experiment.name}"')
    assert [e.resource_name for e in found] == [experiment.resource_name]


def test_a_dotdot_output_directory_is_refused_before_anything_exists(
    local_cloud: LocalCloud,
) -> None:
    ctx = local_cloud.context()
    client, storage = ctx.pipeline_client(), ctx.storage_client()
    bucket = f"shapes-{uuid.uuid4().hex[:12]}"
    before = [j.name for j in client.list_pipeline_jobs(parent=ctx.parent)]
    body = job_body(empty_spec(), f"gs://{bucket}/root/../../elsewhere")
    with pytest.raises(exceptions.BadRequest, match=re.escape("runtimeConfig.gcsOutputDirectory")):
        client.create_pipeline_job(parent=ctx.parent, pipeline_job=body)
    assert [j.name for j in client.list_pipeline_jobs(parent=ctx.parent)] == before
    assert storage.lookup_bucket(bucket) is None


def tasks_spec(components: dict[str, Any] | None) -> dict[str, Any]:
    """The KFP IR shape (pipeline_spec.proto): a root task names its component by
    componentRef.name, a key of `components`."""
    spec = empty_spec()
    spec["root"]["dag"]["tasks"] = {
        "add": {"componentRef": {"name": "comp-add"}, "taskInfo": {"name": "add"}}
    }
    if components is not None:
        spec["components"] = components
    return spec


@pytest.mark.parametrize(
    "components,field",
    [
        (None, "pipelineSpec.components"),
        ({"comp-other": {"executorLabel": "exec-other"}}, "tasks.add.componentRef.name"),
    ],
    ids=["no-components", "unknown-component"],
)
def test_a_task_without_its_component_is_refused_at_create(
    local_cloud: LocalCloud, components: dict[str, Any] | None, field: str
) -> None:
    ctx = local_cloud.context()
    client = ctx.pipeline_client()
    before = [j.name for j in client.list_pipeline_jobs(parent=ctx.parent)]
    body = job_body(tasks_spec(components), fresh_root())
    with pytest.raises(exceptions.BadRequest, match=re.escape(field)):
        client.create_pipeline_job(parent=ctx.parent, pipeline_job=body)
    assert [j.name for j in client.list_pipeline_jobs(parent=ctx.parent)] == before


@pytest.mark.parametrize("payload", ["[]", '"text"', "1"])
def test_a_body_that_is_not_an_object_is_googles_payload_error(
    local_cloud: LocalCloud, payload: str
) -> None:
    ctx = local_cloud.context()
    answer = httpx.post(
        f"{local_cloud.url}/v1/{ctx.parent}/customJobs",
        content=payload,
        headers={"content-type": "application/json"},
    )
    # Google's wording for a JSON body that is not an object (a googleapis.com 400, as
    # reported in google-wallet/rest-samples#22)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert error["message"] == (
        'Invalid JSON payload received. Unknown name "": Root element must be a message.'
    )
