"""Vertex ML Metadata's bulk and graph methods through `aiplatform_v1.MetadataServiceClient`
over REST against the local cloud: purge (dry run and forced), artifact lineage, metadata
schemas and store deletion. Expected values are the REST reference's
(cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.metadataStores...)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform_v1

from vertexkit.context import CloudContext

Event = aiplatform_v1.Event


@pytest.fixture
def api(cloud_context: CloudContext) -> aiplatform_v1.MetadataServiceClient:
    return aiplatform_v1.MetadataServiceClient(
        credentials=AnonymousCredentials(), transport="rest",
        client_options=cloud_context.vertex_client_options(),
    )  # fmt: skip


@pytest.fixture
def store(cloud_context: CloudContext, api: aiplatform_v1.MetadataServiceClient) -> str:
    store_id = f"store-{uuid.uuid4().hex[:8]}"
    return (
        api.create_metadata_store(
            parent=cloud_context.parent, metadata_store={}, metadata_store_id=store_id
        )
        .result()
        .name
    )


def artifact(api: aiplatform_v1.MetadataServiceClient, store: str, name: str) -> str:
    body = {"display_name": name, "schema_title": "system.Dataset", "uri": f"gs://b/{name}"}
    return api.create_artifact(parent=store, artifact=body, artifact_id=name).name


def execution(
    api: aiplatform_v1.MetadataServiceClient, store: str, name: str, inputs: list[str],
    outputs: list[str],
) -> str:  # fmt: skip
    created = api.create_execution(
        parent=store, execution={"display_name": name, "schema_title": "system.Run"},
        execution_id=name,
    )  # fmt: skip
    events = [{"artifact": a, "type_": Event.Type.INPUT} for a in inputs]
    events += [{"artifact": a, "type_": Event.Type.OUTPUT} for a in outputs]
    api.add_execution_events(execution=created.name, events=events)
    return created.name


def test_purge_without_force_is_a_dry_run_with_a_sample(
    api: aiplatform_v1.MetadataServiceClient, store: str
) -> None:
    names = {artifact(api, store, f"old-one-{i}") for i in range(3)}
    artifact(api, store, "kept-one")
    flt = 'display_name="old-one-0" OR display_name="old-one-1" OR display_name="old-one-2"'
    # Reference (PurgeArtifactsRequest.force): false returns a sample of what would go.
    dry = api.purge_artifacts(request={"parent": store, "filter": flt, "force": False}).result()
    assert dry.purge_count == 3 and set(dry.purge_sample) == names
    assert len(list(api.list_artifacts(parent=store))) == 4
    done = api.purge_artifacts(request={"parent": store, "filter": flt, "force": True}).result()
    # Reference (PurgeArtifactsResponse.purgeSample): only populated if force is false.
    assert done.purge_count == 3 and list(done.purge_sample) == []
    assert [a.display_name for a in api.list_artifacts(parent=store)] == ["kept-one"]


def test_purge_needs_a_filter(api: aiplatform_v1.MetadataServiceClient, store: str) -> None:
    # Reference: "Required. A required filter matching the Executions to be purged."
    with pytest.raises(exceptions.BadRequest, match="filter"):
        api.purge_executions(request={"parent": store, "filter": "", "force": True})
    with pytest.raises(exceptions.BadRequest, match="filter"):
        api.purge_contexts(request={"parent": store, "filter": "display_name ~~ 'x'"})


def lineage(api: aiplatform_v1.MetadataServiceClient, **request: object) -> Any:
    return api.query_artifact_lineage_subgraph(request=request)


def test_artifact_lineage_follows_events_up_to_max_hops(
    api: aiplatform_v1.MetadataServiceClient, store: str
) -> None:
    raw, clean, model = (artifact(api, store, n) for n in ("raw-data", "clean-data", "the-model"))
    prep = execution(api, store, "prep-step", [raw], [clean])
    train = execution(api, store, "train-step", [clean], [model])
    whole = api.query_artifact_lineage_subgraph(artifact=raw)
    assert {a.name for a in whole.artifacts} == {raw, clean, model}
    assert {e.name for e in whole.executions} == {prep, train}
    assert len(whole.events) == 4
    # maxHops=0 ("only input artifact") cannot be sent: proto3 drops a zero int32 from the
    # request, which then reads as "no value" (the whole graph). One hop: the train execution.
    one = lineage(api, artifact=model, max_hops=1)
    assert [a.name for a in one.artifacts] == [model]
    assert [e.name for e in one.executions] == [train]
    near = lineage(api, artifact=model, max_hops=2)
    assert {a.name for a in near.artifacts} == {model, clean}
    assert [e.name for e in near.executions] == [train]
    # Reference (filter): the condition an artifact meets to be part of the subgraph.
    kept = lineage(api, artifact=raw, filter='display_name!="clean-data"')
    assert {a.name for a in kept.artifacts} == {raw}
    # Reference (maxHops): "Negative Value: INVALID_ARGUMENT error is returned".
    with pytest.raises(exceptions.BadRequest, match="maxHops"):
        lineage(api, artifact=raw, max_hops=-1)


def test_a_metadata_schema_is_created_listed_and_unique_by_title_and_version(
    api: aiplatform_v1.MetadataServiceClient, store: str
) -> None:
    body = {
        "schema_version": "1.0.0",
        "schema": "title: acme.Model\ntype: object\n",
        "schema_type": aiplatform_v1.MetadataSchema.MetadataSchemaType.ARTIFACT_TYPE,
    }
    created = api.create_metadata_schema(
        parent=store, metadata_schema=body, metadata_schema_id="acme-model"
    )  # fmt: skip
    assert created.name == f"{store}/metadataSchemas/acme-model"
    assert api.get_metadata_schema(name=created.name).schema_version == "1.0.0"
    assert [s.name for s in api.list_metadata_schemas(parent=store)] == [created.name]
    # Reference (MetadataSchema.schema): title and version must be unique within a store.
    with pytest.raises(exceptions.Conflict):
        api.create_metadata_schema(parent=store, metadata_schema=body)
    with pytest.raises(exceptions.BadRequest, match="schemaVersion"):
        api.create_metadata_schema(parent=store, metadata_schema={**body, "schema_version": "x"})


def test_deleting_a_store_deletes_what_it_holds(
    api: aiplatform_v1.MetadataServiceClient, store: str
) -> None:
    name = artifact(api, store, "doomed")
    # Reference: "Deletes a single MetadataStore and all its child resources".
    api.delete_metadata_store(name=store).result()
    with pytest.raises(exceptions.NotFound):
        api.get_metadata_store(name=store)
    with pytest.raises(exceptions.NotFound):
        api.get_artifact(name=name)
