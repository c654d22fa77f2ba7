"""The Model, Endpoint and DeployedModel request fields the local cloud refuses (a 400 naming
the field, nothing created) or accepts with no local effect (a note in the operation's
`metadata.genericMetadata.partialFailures`), as `vertexkit/local/vertex/registry/
dispositions.py` decides. Through the GAPIC clients against the local cloud; no mocks."""
# ruff: noqa: F811
from __future__ import annotations

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform, aiplatform_v1

from tests.vertex_registry_test import (  # noqa: F401 (fixtures)
    SKLEARN_IMAGE,
    artifact,
    classifier,
    penguins,
    sdk,
)
from vertexkit.context import CloudContext


def endpoint_names(sdk: CloudContext) -> set[str]:
    return {endpoint.resource_name for endpoint in aiplatform.Endpoint.list()}


def test_request_response_logging_is_refused(sdk: CloudContext) -> None:
    # Endpoint.predictRequestResponseLoggingConfig.enabled (REST reference, Endpoint): "If
    # logging is enabled or not" - requests and responses go to BigQuery; nothing logs locally.
    before = endpoint_names(sdk)
    endpoint = aiplatform_v1.Endpoint(
        display_name="logged",
        predict_request_response_logging_config={"enabled": True, "sampling_rate": 1.0},
    )
    with pytest.raises(exceptions.BadRequest) as raised:
        sdk.endpoint_client().create_endpoint(
            parent=sdk.parent, endpoint=endpoint
        ).result()
    assert "predictRequestResponseLoggingConfig.enabled" in raised.value.message
    assert endpoint_names(sdk) == before


def test_default_checkpoint_is_refused(sdk: CloudContext, artifact: str) -> None:
    # Model.defaultCheckpointId (REST reference, Model): "The default checkpoint id of a model
    # version" - the local registry keeps no checkpoints.
    model = aiplatform_v1.Model(
        display_name="checkpointed",
        artifact_uri=artifact,
        container_spec={"image_uri": SKLEARN_IMAGE},
        default_checkpoint_id="step-100",
    )
    with pytest.raises(exceptions.BadRequest) as raised:
        sdk.model_client().upload_model(parent=sdk.parent, model=model).result()
    assert "defaultCheckpointId" in raised.value.message
    assert not aiplatform.Model.list(filter='display_name="checkpointed"')


def test_network_is_noted_in_the_create_operation(sdk: CloudContext) -> None:
    # Endpoint.network (REST reference, Endpoint): "The full name of the Google Compute Engine
    # network to which the Endpoint should be peered" - no VPC here.
    endpoint = aiplatform_v1.Endpoint(
        display_name="peered", network="projects/12345/global/networks/default"
    )
    operation = sdk.endpoint_client().create_endpoint(
        parent=sdk.parent, endpoint=endpoint
    )
    created = operation.result()
    notes = [f.message for f in operation.metadata.generic_metadata.partial_failures]
    assert any("endpoint.network: no local effect" in note for note in notes), notes
    assert [f.code for f in operation.metadata.generic_metadata.partial_failures] == [0]
    assert created.network == endpoint.network  # stored and answered back, as Vertex does
