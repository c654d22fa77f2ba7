"""What each Model, Endpoint and DeployedModel request field means locally: the one table.

Beside what the registry honours (see `vertexkit/local/vertex/dispositions/decided.py`), a
field is one of:

- refused with a 400 naming the field, before anything is stored (REFUSED): what the local
  cloud cannot do, where accepting it would be a silent wrong answer;
- accepted with no local effect (NOTES): one line in the upload, create or deploy operation's
  `metadata.genericMetadata.partialFailures` (code 0: the request itself goes on).

Each entry is `camelCase path within its resource -> (proto message, why)`; the message lets
the dispositions table find the field. Sources: the aiplatform_v1 REST reference (Model,
Endpoint, DeployedModel, ExplanationMetadata, PredictRequestResponseLoggingConfig).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex.store import Resource, ResourceStore

Table = dict[str, tuple[str, str]]
UNSET = (None, "", [], {}, False, 0)

NO_CHECKPOINTS = (
    "the local registry keeps one artifact per model version and no checkpoints of it, so no "
    "checkpoint can be chosen: leave it unset"
)

# -- refused ----------------------------------------------------------------------------------
MODEL_REFUSED: Table = {
    "defaultCheckpointId": ("Model", NO_CHECKPOINTS),
}
ENDPOINT_REFUSED: Table = {
    # "If logging is enabled, predict requests and responses are logged to BigQuery": nothing
    # logs them locally, so an empty table would be a silent wrong answer.
    "predictRequestResponseLoggingConfig.enabled": (
        "PredictRequestResponseLoggingConfig",
        "the local cloud does not log predict requests and responses to BigQuery; leave it "
        "unset and log them in your own code",
    ),
    "genAiAdvancedFeaturesConfig.ragConfig.enableRag": (
        "GenAiAdvancedFeaturesConfig.RagConfig",
        "the local cloud has no RAG features for generative models",
    ),
}
DEPLOYED_REFUSED: Table = {
    "checkpointId": ("DeployedModel", NO_CHECKPOINTS),
}

# -- no local effect: one operation note each, when set -----------------------------------------
ENCRYPTION = "nothing is encrypted with this key: the files stay unencrypted in the local home"
PSC = "there is no Private Service Connect here: the endpoint is served on 127.0.0.1"
MODEL_NOTES: Table = {
    "encryptionSpec": ("Model", ENCRYPTION),
}
ENDPOINT_NOTES: Table = {
    "encryptionSpec": ("Endpoint", ENCRYPTION),
    "network": ("Endpoint", "there is no VPC peering here: the endpoint is served on 127.0.0.1"),
    "enablePrivateServiceConnect": ("Endpoint", PSC),
    "privateServiceConnectConfig": ("Endpoint", PSC),
    "privateServiceConnectConfig.enablePrivateServiceConnect": ("PrivateServiceConnectConfig", PSC),
    "privateServiceConnectConfig.projectAllowlist": ("PrivateServiceConnectConfig", PSC),
    "privateServiceConnectConfig.pscAutomationConfigs": ("PrivateServiceConnectConfig", PSC),
    "predictRequestResponseLoggingConfig.samplingRate": (
        "PredictRequestResponseLoggingConfig",
        "nothing is logged locally, so nothing is sampled",
    ),
    "dedicatedEndpointEnabled": (
        "Endpoint",
        "every local endpoint is served on its own local URL; no dedicated DNS is made",
    ),
    "privateModelServerEnabled": ("Endpoint", "the model server runs on this machine"),
}
DEPLOYED_NOTES: Table = {
    "serviceAccount": (
        "DeployedModel",
        "the model server runs as your local user with the local cloud's credentials",
    ),
    "enableAccessLogging": (
        "DeployedModel",
        "no access logs are written to Cloud Logging; the server's own log is kept",
    ),
    "fasterDeploymentConfig.fastTryoutEnabled": (
        "FasterDeploymentConfig",
        "a local deploy is one process on this machine either way",
    ),
    "systemLabels": ("DeployedModel", "there is no billing here for them to label"),
    "speculativeDecodingSpec": (
        "DeployedModel",
        "the model server decodes as it does; speculation only changes Vertex's speed",
    ),
}
# ExplanationMetadata's input and output fields that the local sampled Shapley does not read:
# it switches the instance's features on and off and calls the model's own predict.
NO_TENSORS = "the local sampled Shapley feeds instances to predict, not tensors"
INPUT_NOTES: Table = {
    "inputTensorName": ("ExplanationMetadata.InputMetadata", NO_TENSORS),
    "encoding": ("ExplanationMetadata.InputMetadata", NO_TENSORS),
    "modality": ("ExplanationMetadata.InputMetadata", NO_TENSORS),
    "featureValueDomain": ("ExplanationMetadata.InputMetadata", "features are not re-scaled"),
    "indicesTensorName": ("ExplanationMetadata.InputMetadata", NO_TENSORS),
    "denseShapeTensorName": ("ExplanationMetadata.InputMetadata", NO_TENSORS),
    "indexFeatureMapping": ("ExplanationMetadata.InputMetadata", NO_TENSORS),
    "encodedTensorName": ("ExplanationMetadata.InputMetadata", NO_TENSORS),
    "encodedBaselines": ("ExplanationMetadata.InputMetadata", NO_TENSORS),
    "visualization": ("ExplanationMetadata.InputMetadata", "no image attributions are drawn"),
    "groupName": ("ExplanationMetadata.InputMetadata", "each feature is attributed on its own"),
}
OUTPUT_NOTES: Table = {
    "indexDisplayNameMapping": (
        "ExplanationMetadata.OutputMetadata",
        "attributions carry no outputDisplayName locally",
    ),
    "displayNameMappingKey": (
        "ExplanationMetadata.OutputMetadata",
        "attributions carry no outputDisplayName locally",
    ),
    "outputTensorName": ("ExplanationMetadata.OutputMetadata", NO_TENSORS),
}
METADATA_NOTES: Table = {
    "featureAttributionsSchemaUri": ("ExplanationMetadata", "the schema is not read locally"),
    "latentSpaceSource": ("ExplanationMetadata", "no example-based explanations locally"),
}


# -- the checks ---------------------------------------------------------------------------------
def _value(doc: dict[str, Any], path: str) -> Any:
    for key in path.split("."):
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc


def _set(doc: dict[str, Any], table: Table) -> Iterator[tuple[str, str]]:
    for path, (_, why) in table.items():
        if _value(doc, path) not in UNSET:
            yield path, why


def check_refused(doc: dict[str, Any], table: Table, prefix: str) -> None:
    """A 400 naming the first refused field set in `doc`."""
    for path, why in _set(doc, table):
        raise bad_request(f"{prefix}.{path}: {why}.")


def notes(doc: dict[str, Any], table: Table, prefix: str) -> list[str]:
    """One line per set field with no local effect: `<field>: no local effect; <why>`."""
    return [f"{prefix}.{path}: no local effect; {why}" for path, why in _set(doc, table)]


def explanation_notes(spec: dict[str, Any], prefix: str) -> list[str]:
    """The ExplanationMetadata fields that are set and not read, per input and output."""
    metadata = spec.get("metadata") or {}
    prefix = f"{prefix}.metadata"
    lines = notes(metadata, METADATA_NOTES, prefix)
    for kind, table in (("inputs", INPUT_NOTES), ("outputs", OUTPUT_NOTES)):
        for key, entry in (metadata.get(kind) or {}).items():
            lines += notes(entry or {}, table, f"{prefix}.{kind}[{key!r}]")
    return lines


def model_notes(model: dict[str, Any]) -> list[str]:
    lines = notes(model, MODEL_NOTES, "model")
    return lines + explanation_notes(model.get("explanationSpec") or {}, "model.explanationSpec")


def endpoint_notes(endpoint: dict[str, Any]) -> list[str]:
    return notes(endpoint, ENDPOINT_NOTES, "endpoint")


def deployed_notes(deployed: dict[str, Any]) -> list[str]:
    lines = notes(deployed, DEPLOYED_NOTES, "deployedModel")
    spec = deployed.get("explanationSpec") or {}
    return lines + explanation_notes(spec, "deployedModel.explanationSpec")


def with_notes(store: ResourceStore, operation: Resource, lines: list[str]) -> Resource:
    """`operation` with `lines` in `metadata.genericMetadata.partialFailures` (code 0, as the
    deploy's serving notes): the one place the registry says what had no local effect."""
    if not lines:
        return operation

    def change(doc: Resource) -> None:
        generic = doc["metadata"]["genericMetadata"]
        failures = generic.setdefault("partialFailures", [])
        failures += [{"code": 0, "message": line} for line in lines]

    stored = store.mutate(operation["name"], change, "Operation")
    return {k: v for k, v in stored.items() if not k.startswith("_")}


ALL_TABLES: tuple[tuple[Table, bool], ...] = (  # (table, refused?) for the dispositions table
    (MODEL_REFUSED, True),
    (ENDPOINT_REFUSED, True),
    (DEPLOYED_REFUSED, True),
    (MODEL_NOTES, False),
    (ENDPOINT_NOTES, False),
    (DEPLOYED_NOTES, False),
    (INPUT_NOTES, False),
    (OUTPUT_NOTES, False),
    (METADATA_NOTES, False),
)
