"""Resource names carry the project number; a user's free-form data comes back as written.

Expected values: Google's system test `test_e2e_metadata_schema.py::
test_google_dataset_artifact_create` (python-aiplatform 91cc8ce4: a VertexDataset artifact's
`metadata.resourceName` `projects/<ID>/...` is given back unchanged) and recorded Vertex traffic
(GoogleCloudPlatform/k8s-config-connector `aiplatform/v1alpha1/vertexaipipelinejob/
vertexaipipelinejob-maximal/_http.log`: contexts' `name` and `parentContexts` answered as
`projects/${projectNumber}`, the `labels` sent given back as sent).
"""

from __future__ import annotations

import uuid

import pytest
from google.cloud import aiplatform_v1
from google.protobuf import json_format

from vertexkit.context import CloudContext
from vertexkit.local.projects import project_number
from vertexkit.local.vertex.core import names


@pytest.fixture
def metadata(cloud_context: CloudContext) -> aiplatform_v1.MetadataServiceClient:
    return cloud_context._gapic(aiplatform_v1.MetadataServiceClient)


def test_a_name_field_carries_the_number_and_the_same_text_in_metadata_is_kept(
    cloud_context: CloudContext, metadata: aiplatform_v1.MetadataServiceClient
) -> None:
    number = project_number(cloud_context.project)
    store = f"{cloud_context.parent}/metadataStores/default"
    by_id = f"{cloud_context.parent}/datasets/d"
    by_number = by_id.replace(f"projects/{cloud_context.project}/", f"projects/{number}/")
    parent = metadata.create_context(
        parent=store,
        context_id=f"p-{uuid.uuid4().hex[:8]}",
        context={"display_name": by_id, "schema_title": "system.PipelineRun"},
    )
    child = metadata.create_context(
        parent=store,
        context_id=f"c-{uuid.uuid4().hex[:8]}",
        context={"schema_title": "system.PipelineRun"},
    )
    # Sent with the project ID, as a user's code may: answered with the number.
    metadata.add_context_children(
        context=parent.name,
        child_contexts=[
            child.name.replace(f"projects/{number}/", f"projects/{cloud_context.project}/")
        ],
    )
    child = metadata.get_context(name=child.name)
    assert parent.name.startswith(f"projects/{number}/locations/us-central1/metadataStores/")
    assert parent.display_name == by_id  # a user's text
    assert list(child.parent_contexts) == [parent.name]  # a resource reference: the number

    artifact = metadata.create_artifact(
        parent=store,
        artifact=aiplatform_v1.Artifact(
            schema_title="google.VertexDataset",
            description=by_id,
            metadata={"resourceName": by_id, "nested": {"names": [by_id, by_number]}},
        ),
    )
    assert artifact.name.startswith(f"projects/{number}/")
    expected = {"resourceName": by_id, "nested": {"names": [by_id, by_number]}}
    for answer in (artifact, metadata.get_artifact(name=artifact.name)):
        assert json_format.MessageToDict(answer._pb.metadata) == expected
        assert answer.description == by_id


def test_an_operation_s_any_is_walked_though_its_key_is_free_form_elsewhere() -> None:
    """`metadata`/`response` are Structs on artifacts but Anys (with `@type`) on an operation,
    whose response is a resource named by number."""
    project_names = names.ProjectNames(["local-project"])
    number = project_number("local-project")
    answer = {
        "name": "projects/local-project/locations/us-central1/operations/1",
        "metadata": {"@type": "x.GenericOperationMetadata", "target": "projects/local-project"},
        "response": {"@type": "x.Artifact", "name": "projects/local-project/a",
                     "metadata": {"resourceName": "projects/local-project/a"}},
    }  # fmt: skip
    named = project_names.outward(answer)
    assert named["name"] == f"projects/{number}/locations/us-central1/operations/1"
    assert named["metadata"]["target"] == f"projects/{number}"
    assert named["response"]["name"] == f"projects/{number}/a"
    assert named["response"]["metadata"] == {"resourceName": "projects/local-project/a"}
    assert answer["name"].startswith("projects/local-project/")  # the store's object untouched


def test_a_task_output_named_like_a_free_form_field_is_still_a_named_artifact() -> None:
    """PipelineTaskDetail.outputs is map<string, ArtifactList>: its keys are the component's
    output names (`metrics`, `metadata`...), and the artifacts under them are named by number
    (recorded traffic, k8s-config-connector `vertexaipipelinejob-maximal/_http.log`), while
    each artifact's own `metadata` Struct stays as written."""
    project_names = names.ProjectNames(["local-project"])
    number = project_number("local-project")
    artifact = "projects/local-project/locations/us-central1/metadataStores/default/artifacts/7"
    task = {"outputs": {"metrics": {"artifacts": [
        {"name": artifact, "metadata": {"source": "projects/local-project/x"}}]}}}  # fmt: skip
    [named] = project_names.outward(task)["outputs"]["metrics"]["artifacts"]
    assert named["name"] == artifact.replace("local-project", number)
    assert named["metadata"] == {"source": "projects/local-project/x"}


def test_the_free_form_keys_are_those_of_the_aiplatform_v1_descriptors() -> None:
    """FREE_FORM_KEYS is generated: a new Struct/Value/map field in a new aiplatform_v1 fails
    here until it is listed."""
    assert names.free_form_keys() == set(names.FREE_FORM_KEYS)
