# ruff: noqa: E501  (request bodies on one line read as the REST reference writes them)
"""The request fields `vertex/dispositions/` decides in `core/fields.py` and the areas' code:
each refused one is a 400 naming it with nothing created, each one with no local effect is a
note in the create operation or the job log, each honoured one changes what happens. Through
the `aiplatform_v1` GAPIC clients (REST) against the local cloud; no mocks.

Sources: the aiplatform_v1 REST reference of each resource, named beside each check.
"""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import json
from typing import Any

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1
from kfp import compiler, dsl

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.vertex.pipelines.routes import PipelinesArea


@dsl.component(install_kfp_package=False)
def echo(x: int) -> int:
    return x


@dsl.pipeline(name="field-decisions")
def tiny_pipeline(x: int = 1) -> int:
    return echo(x=x).output


@pytest.fixture(scope="module")
def pipeline_spec(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("spec") / "tiny.json"
    compiler.Compiler().compile(tiny_pipeline, str(path))
    return json.loads(path.read_text())


def notes_of(operation: Any) -> list[str]:
    return [failure.message for failure in operation.metadata.generic_metadata.partial_failures]


# -- notes in the create operation ------------------------------------------------------------
def test_a_tensorboard_s_encryption_key_is_noted_in_its_create_operation(
    cloud_context: CloudContext,
) -> None:
    # Tensorboard.encryptionSpec (REST reference): "Customer-managed encryption key spec for a
    # Tensorboard. If set, this Tensorboard and all sub-resources of this Tensorboard will be
    # secured by this key." Nothing is encrypted locally: said once, in the operation.
    client = cloud_context._gapic(aiplatform_v1.TensorboardServiceClient)
    key = "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"
    tensorboard = aiplatform_v1.Tensorboard(
        display_name="keyed", encryption_spec={"kms_key_name": key}
    )
    operation = client.create_tensorboard(parent=cloud_context.parent, tensorboard=tensorboard)
    operation.result(timeout=30)
    assert any(
        n.startswith("tensorboard.encryptionSpec: no local effect") for n in notes_of(operation)
    )
    plain = client.create_tensorboard(
        parent=cloud_context.parent, tensorboard=aiplatform_v1.Tensorboard(display_name="plain")
    )
    plain.result(timeout=30)
    assert notes_of(plain) == []


def test_a_metadata_store_s_dataplex_lineage_is_noted(cloud_context: CloudContext) -> None:
    # MetadataStore.dataplexConfig.enabledPipelinesLineage (REST reference): "Whether or not
    # Data Lineage synchronization is enabled for Vertex Pipelines." No Dataplex here.
    client = cloud_context._gapic(aiplatform_v1.MetadataServiceClient)
    store = aiplatform_v1.MetadataStore(dataplex_config={"enabled_pipelines_lineage": True})
    operation = client.create_metadata_store(
        parent=cloud_context.parent, metadata_store=store, metadata_store_id="lineage"
    )
    operation.result(timeout=30)
    assert notes_of(operation) == [
        "metadataStore.dataplexConfig.enabledPipelinesLineage: no local effect; there is no "
        "Dataplex here: lineage stays in the local metadata store"
    ]


# -- etags: read-modify-write ------------------------------------------------------------------
def test_a_stale_etag_is_aborted_and_the_current_one_updates(cloud_context: CloudContext) -> None:
    # Tensorboard.etag (REST reference): "Used to perform a consistent read-modify-write
    # updates. If not set, a blind "overwrite" update happens."
    client = cloud_context._gapic(aiplatform_v1.TensorboardServiceClient)
    board = client.create_tensorboard(
        parent=cloud_context.parent, tensorboard=aiplatform_v1.Tensorboard(display_name="etagged")
    ).result()
    mask = {"paths": ["description"]}
    stale = aiplatform_v1.Tensorboard(name=board.name, description="late", etag="not-the-etag")
    with pytest.raises(exceptions.Conflict, match="etag"):
        client.update_tensorboard(tensorboard=stale, update_mask=mask).result()
    assert client.get_tensorboard(name=board.name).description == ""
    fresh = aiplatform_v1.Tensorboard(name=board.name, description="now", etag=board.etag)
    updated = client.update_tensorboard(tensorboard=fresh, update_mask=mask).result()
    assert updated.description == "now" and updated.etag != board.etag
    blind = aiplatform_v1.Tensorboard(name=board.name, description="blind")
    assert (
        client.update_tensorboard(tensorboard=blind, update_mask=mask).result().description
        == "blind"
    )


def test_a_metadata_context_takes_an_etag_read_before_another_update(
    cloud_context: CloudContext,
) -> None:
    """Google's system test (python-aiplatform tests/system/aiplatform/test_experiments.py,
    test_delete_backing_tensorboard_experiment_run_success, vendored in tests/google_system)
    updates an experiment's context through an SDK object whose etag predates another update,
    and passes against Vertex: metadata nodes take it, and each update gets a new etag."""
    client = cloud_context._gapic(aiplatform_v1.MetadataServiceClient)
    store = f"{cloud_context.parent}/metadataStores/default"
    context = client.create_context(
        parent=store,
        context=aiplatform_v1.Context(display_name="etagged", schema_title="system.ContextType"),
    )
    mask = {"paths": ["description"]}
    first = client.update_context(
        context=aiplatform_v1.Context(name=context.name, description="first", etag=context.etag),
        update_mask=mask,
    )
    late = aiplatform_v1.Context(name=context.name, description="late", etag=context.etag)
    updated = client.update_context(context=late, update_mask=mask)
    assert updated.description == "late" and updated.etag not in (context.etag, first.etag)


# -- pipeline jobs ----------------------------------------------------------------------------
def pipeline_job(spec: dict[str, Any], runtime: dict[str, Any], **fields: Any) -> dict[str, Any]:
    runtime = {"gcsOutputDirectory": "gs://field-decisions/root", **runtime}
    return {"displayName": "fields", "pipelineSpec": spec, "runtimeConfig": runtime, **fields}


def pipeline_client(cloud_context: CloudContext) -> aiplatform_v1.PipelineServiceClient:
    return cloud_context._gapic(aiplatform_v1.PipelineServiceClient)


def job_count(client: aiplatform_v1.PipelineServiceClient, parent: str) -> int:
    return len(list(client.list_pipeline_jobs(parent=parent)))


@pytest.mark.parametrize(
    ("runtime", "field"),
    [
        # RuntimeConfig.inputArtifacts: "The runtime artifacts of the PipelineJob".
        ({"inputArtifacts": {"data": {"artifactId": "123"}}}, "runtimeConfig.inputArtifacts"),
        # RuntimeConfig.parameters (deprecated): read as parameterValues, so a wrong type is
        # refused as parameterValues' is.
        ({"parameters": {"x": {"stringValue": "one"}}}, "parameterValues"),
    ],
)
def test_pipeline_job_runtime_refusals_name_the_field_and_create_nothing(
    cloud_context: CloudContext, pipeline_spec: dict[str, Any], runtime: dict[str, Any], field: str
) -> None:
    client = pipeline_client(cloud_context)
    before = job_count(client, cloud_context.parent)
    job = aiplatform_v1.PipelineJob.from_json(json.dumps(pipeline_job(pipeline_spec, runtime)))
    with pytest.raises(exceptions.BadRequest, match=field):
        client.create_pipeline_job(parent=cloud_context.parent, pipeline_job=job)
    assert job_count(client, cloud_context.parent) == before


def test_pipeline_job_notes_go_to_its_job_log(
    cloud_context: CloudContext, local_cloud: LocalCloud, pipeline_spec: dict[str, Any]
) -> None:
    # PipelineJob.preflightValidations and reservedIpRanges (REST reference): component checks
    # before creation, VPC ranges for the job's workloads; neither changes a local run.
    client = pipeline_client(cloud_context)
    # PipelineJob.templateUri: "A template uri from where the PipelineJob.pipeline_spec, if
    # empty, will be downloaded"; stored and answered back beside the spec sent.
    template = "https://us-central1-kfp.pkg.dev/p/repo/field-decisions/v1"
    body = pipeline_job(pipeline_spec, {"parameterValues": {"x": 2}}, preflightValidations=True,
                        reservedIpRanges=["vertex-range"], templateUri=template)  # fmt: skip
    job = client.create_pipeline_job(
        parent=cloud_context.parent,
        pipeline_job=aiplatform_v1.PipelineJob.from_json(json.dumps(body)),
    )
    area = next(a for a in local_cloud.vertex.areas if isinstance(a, PipelinesArea))
    log = (area.runner.jobs_home / job.name.rsplit("/", 1)[1] / "job.log").read_text()
    assert "pipelineJob.reservedIpRanges: no local effect" in log
    assert "pipelineJob.preflightValidations: no local effect" in log
    assert client.get_pipeline_job(name=job.name).template_uri == template


# -- batch prediction, training pipelines, tuning ------------------------------------------------
def test_a_batch_job_with_an_unmanaged_container_model_is_refused(
    cloud_context: CloudContext,
) -> None:
    # BatchPredictionJob.unmanagedContainerModel (REST reference): "Contains model information
    # necessary to perform batch prediction without requiring uploading to model registry."
    client = cloud_context._gapic(aiplatform_v1.JobServiceClient)
    job = aiplatform_v1.BatchPredictionJob(
        display_name="unmanaged",
        unmanaged_container_model={
            "artifact_uri": "gs://b/model",
            "container_spec": {"image_uri": "x"},
        },
        input_config={"instances_format": "jsonl", "gcs_source": {"uris": ["gs://b/in.jsonl"]}},
        output_config={
            "predictions_format": "jsonl",
            "gcs_destination": {"output_uri_prefix": "gs://b/out"},
        },
    )
    with pytest.raises(exceptions.BadRequest, match="unmanagedContainerModel"):
        client.create_batch_prediction_job(parent=cloud_context.parent, batch_prediction_job=job)
    listed = client.list_batch_prediction_jobs(parent=cloud_context.parent)
    assert [j for j in listed if j.display_name == "unmanaged"] == []  # the shared cloud's


def test_a_tuning_job_with_a_safety_metric_is_refused(cloud_context: CloudContext) -> None:
    # StudySpec.MetricSpec.safetyConfig (REST reference): "Used for safe search. In the case,
    # the metric will be a safety metric." The local optimiser has no safe search.
    client = cloud_context._gapic(aiplatform_v1.JobServiceClient)
    spec = aiplatform_v1.StudySpec(
        metrics=[
            {"metric_id": "loss", "goal": "MINIMIZE", "safety_config": {"safety_threshold": 1.0}}
        ],
        parameters=[
            {"parameter_id": "lr", "double_value_spec": {"min_value": 0.1, "max_value": 1.0}}
        ],
    )
    job = aiplatform_v1.HyperparameterTuningJob(
        display_name="safe", study_spec=spec, max_trial_count=1, parallel_trial_count=1,
        trial_job_spec={"worker_pool_specs": [{"replica_count": 1, "machine_spec": {"machine_type": "n1-standard-4"},
                                               "container_spec": {"image_uri": "python:3.11"}}]},
    )  # fmt: skip
    with pytest.raises(exceptions.BadRequest, match=r"metrics\[0\]\.safetyConfig"):
        client.create_hyperparameter_tuning_job(
            parent=cloud_context.parent, hyperparameter_tuning_job=job
        )
    listed = client.list_hyperparameter_tuning_jobs(parent=cloud_context.parent)
    assert [j for j in listed if j.display_name == "safe"] == []  # others' jobs share the cloud


def test_a_study_s_first_trial_tries_the_default_values(cloud_context: CloudContext) -> None:
    # ParameterSpec.DoubleValueSpec.defaultValue (REST reference): "A default value for a
    # DOUBLE parameter that is assumed to be a relatively good starting point ... Currently
    # only supported by the Vertex AI Vizier service."
    vizier = cloud_context._gapic(aiplatform_v1.VizierServiceClient)
    spec = aiplatform_v1.StudySpec(
        metrics=[{"metric_id": "y", "goal": "MAXIMIZE"}],
        parameters=[
            {"parameter_id": "x", "double_value_spec": {"min_value": -5, "max_value": 5, "default_value": 2.5}},
            {"parameter_id": "k", "categorical_value_spec": {"values": ["a", "b", "c"], "default_value": "c"}},
        ],
    )  # fmt: skip
    study = vizier.create_study(
        parent=cloud_context.parent,
        study=aiplatform_v1.Study(display_name="defaults", study_spec=spec),
    )
    request = aiplatform_v1.SuggestTrialsRequest(
        parent=study.name, suggestion_count=1, client_id="c"
    )
    trial = vizier.suggest_trials(request=request).result(timeout=30).trials[0]
    assert {p.parameter_id: p.value for p in trial.parameters} == {"x": 2.5, "k": "c"}


def test_persist_ml_use_assignment_is_refused(cloud_context: CloudContext) -> None:
    # InputDataConfig.persistMlUseAssignment (REST reference): "Whether to persist the ML use
    # assignment to data item system labels." Nothing is written back to a local dataset.
    client = cloud_context._gapic(aiplatform_v1.PipelineServiceClient)
    pipeline = aiplatform_v1.TrainingPipeline(
        display_name="persisted",
        training_task_definition="gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml",
        training_task_inputs={"workerPoolSpecs": []},
        input_data_config={"dataset_id": "123", "persist_ml_use_assignment": True,
                           "gcs_destination": {"output_uri_prefix": "gs://b/split"}},
    )  # fmt: skip
    with pytest.raises(exceptions.BadRequest, match=r"inputDataConfig\.persistMlUseAssignment"):
        client.create_training_pipeline(parent=cloud_context.parent, training_pipeline=pipeline)


def test_a_persistent_resource_s_ip_ranges_are_noted(cloud_context: CloudContext) -> None:
    # PersistentResource.reservedIpRanges (REST reference): "A list of names for the reserved
    # IP ranges under the VPC network that can be used for this persistent resource."
    client = cloud_context._gapic(aiplatform_v1.PersistentResourceServiceClient)
    resource = aiplatform_v1.PersistentResource(
        resource_pools=[{"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1}],
        reserved_ip_ranges=["vertex-range"],
    )
    operation = client.create_persistent_resource(
        parent=cloud_context.parent, persistent_resource=resource, persistent_resource_id="ranged"
    )
    assert any(n.startswith("persistentResource.reservedIpRanges: no local effect")
               for n in notes_of(operation))  # fmt: skip


def test_metadata_fields_are_stored_and_answered_back(cloud_context: CloudContext) -> None:
    # Artifact.uri/state/metadata, Execution.state/metadata, Context.metadata (REST reference:
    # each describes the node; Vertex keeps what was sent). A name in the body is not the
    # node's name: Vertex names it from its parent and the contextId parameter.
    client = cloud_context._gapic(aiplatform_v1.MetadataServiceClient)
    store = f"{cloud_context.parent}/metadataStores/default"
    artifact = client.create_artifact(parent=store, artifact=aiplatform_v1.Artifact(
        schema_title="system.Dataset", uri="gs://b/data.csv", state="LIVE",
        metadata={"rows": 3.0, "source": "test"}))  # fmt: skip
    got = client.get_artifact(name=artifact.name)
    assert (got.uri, got.state.name, dict(got.metadata)) == (
        "gs://b/data.csv",
        "LIVE",
        {"rows": 3.0, "source": "test"},
    )
    execution = client.create_execution(parent=store, execution=aiplatform_v1.Execution(
        schema_title="system.ContainerExecution", state="RUNNING", metadata={"step": 1.0}))  # fmt: skip
    got_execution = client.get_execution(name=execution.name)
    assert (got_execution.state.name, dict(got_execution.metadata)) == ("RUNNING", {"step": 1.0})
    context = client.create_context(parent=store, context_id="named-by-id", context=aiplatform_v1.Context(
        name=f"{store}/contexts/named-in-body", schema_title="system.ContextType", metadata={"k": "v"}))  # fmt: skip
    assert context.name.endswith("/contexts/named-by-id")
    assert dict(client.get_context(name=context.name).metadata) == {"k": "v"}
    schema = client.create_metadata_schema(parent=store, metadata_schema=aiplatform_v1.MetadataSchema(
        schema_version="0.0.1", schema="title: test.Thing\ntype: object\n", schema_type="ARTIFACT_TYPE"))  # fmt: skip
    got_schema = client.get_metadata_schema(name=schema.name)
    assert (got_schema.schema, got_schema.schema_type.name) == (
        "title: test.Thing\ntype: object\n",
        "ARTIFACT_TYPE",
    )
