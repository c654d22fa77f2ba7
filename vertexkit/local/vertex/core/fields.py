"""Request fields the local cloud refuses, or accepts and says it has no effect, for the areas
with no table of their own (the training area has `training/dispositions.py`, the registry
`registry/dispositions.py`).

Each table entry is `camelCase path within the resource -> (proto message, why)`; the message
lets `vertex/dispositions/decided.py` find the field. A note travels where the user reads what
a request did: a job's `job.log`, or a create operation's
`metadata.genericMetadata.partialFailures` (code 0: the request itself goes on), as the
registry's deploy notes do. Sources for the fields: the aiplatform_v1 REST reference of each
resource (Dataset, MetadataStore, Tensorboard, PersistentResource, DeploymentResourcePool,
PipelineJob, BatchPredictionJob).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from vertexkit.local.errors import ApiError
from vertexkit.local.vertex.store import Resource, ResourceStore
from vertexkit.specs import SpecError

Table = dict[str, tuple[str, str]]
UNSET = (None, "", [], {}, False, 0)

ENCRYPTION = "nothing is encrypted with this key: the files stay unencrypted in the local home"
RUNS_AS_YOU = "local processes run as your user with the local cloud's credentials"
NO_PSC = "there is no Private Service Connect interface on this machine"
NO_IP_RANGES = "local processes listen on 127.0.0.1; no IP range is reserved"

# -- no local effect: one note each, when set ---------------------------------------------------
DATASET_NOTES: Table = {"encryptionSpec": ("Dataset", ENCRYPTION)}
METADATA_STORE_NOTES: Table = {
    "encryptionSpec": ("MetadataStore", ENCRYPTION),
    "dataplexConfig.enabledPipelinesLineage": (
        "MetadataStore.DataplexConfig",
        "there is no Dataplex here: lineage stays in the local metadata store",
    ),
}
TENSORBOARD_NOTES: Table = {"encryptionSpec": ("Tensorboard", ENCRYPTION)}
PERSISTENT_RESOURCE_NOTES: Table = {
    "pscInterfaceConfig": ("PersistentResource", NO_PSC),
    "reservedIpRanges": ("PersistentResource", NO_IP_RANGES),
    "resourceRuntimeSpec.serviceAccountSpec.serviceAccount": (
        "ServiceAccountSpec",
        f"{RUNS_AS_YOU}, not as this default service account",
    ),
}
POOL_NOTES: Table = {
    "encryptionSpec": ("DeploymentResourcePool", ENCRYPTION),
    "serviceAccount": ("DeploymentResourcePool", f"{RUNS_AS_YOU}, not as this service account"),
}
PIPELINE_JOB_NOTES: Table = {
    "reservedIpRanges": ("PipelineJob", NO_IP_RANGES),
    "pscInterfaceConfig": ("PipelineJob", NO_PSC),
    "preflightValidations": (
        "PipelineJob",
        "the local cloud checks the job's components as it runs them, not before",
    ),
}
BATCH_NOTES: Table = {
    "serviceAccount": ("BatchPredictionJob", f"{RUNS_AS_YOU}, not as this service account"),
    "encryptionSpec": ("BatchPredictionJob", ENCRYPTION),
}

# -- refused, before anything is stored ---------------------------------------------------------
NO_MULTIMODAL = (
    "the local cloud reads batch instances from Cloud Storage (jsonl, csv) and BigQuery only; "
    "it has no Vertex multimodal datasets"
)
BATCH_REFUSED: Table = {
    "unmanagedContainerModel": (
        "BatchPredictionJob",
        "the local cloud predicts with a model of its Model Registry; upload the container "
        "model (Model.upload) and name it in model",
    ),
    "inputConfig.vertexMultimodalDatasetSource": ("BatchPredictionJob.InputConfig", NO_MULTIMODAL),
    "outputConfig.vertexMultimodalDatasetDestination": (
        "BatchPredictionJob.OutputConfig",
        NO_MULTIMODAL,
    ),
}
PIPELINE_JOB_REFUSED: Table = {
    "runtimeConfig.inputArtifacts": (
        "PipelineJob.RuntimeConfig",
        "the local executor does not bind metadata artifacts to pipeline inputs; pass the "
        "artifact's URI as a parameter",
    ),
}
INPUT_DATA_REFUSED: Table = {
    "persistMlUseAssignment": (
        "InputDataConfig",
        "the local cloud does not write each row's split back to the dataset as an "
        "ml_use label; leave it unset",
    ),
}


# -- the checks -----------------------------------------------------------------------------------
def value_at(doc: dict[str, Any], path: str) -> Any:
    for key in path.split("."):
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc


def set_fields(doc: dict[str, Any], table: Table) -> Iterator[tuple[str, str]]:
    for path, (_, why) in table.items():
        if value_at(doc, path) not in UNSET:
            yield path, why


def check_refused(doc: dict[str, Any], table: Table, prefix: str) -> None:
    """SpecError (Google's 400 naming the field) for the first refused field that is set."""
    for path, why in set_fields(doc, table):
        raise SpecError(f"{prefix}.{path}" if prefix else path, why)


def notes(doc: dict[str, Any], table: Table, prefix: str) -> list[str]:
    """One line per set field that changes nothing here: `<field>: no local effect; <why>`."""
    return [f"{prefix}.{path}: no local effect; {why}" for path, why in set_fields(doc, table)]


def noted_operation(store: ResourceStore, operation: Resource, lines: list[str]) -> Resource:
    """`operation` with `lines` in `metadata.genericMetadata.partialFailures` (code 0)."""
    if not lines:
        return operation

    def change(doc: Resource) -> None:
        generic = doc["metadata"].setdefault("genericMetadata", {})
        generic.setdefault("partialFailures", []).extend({"code": 0, "message": line}
                                                         for line in lines)  # fmt: skip

    stored = store.mutate(operation["name"], change, "Operation")
    return {k: v for k, v in stored.items() if not k.startswith("_")}


def check_etag(current: Resource, body: dict[str, Any], kind: str) -> None:
    """A request's etag must be the resource's own: Vertex's read-modify-write guard ("If not
    set, a blind overwrite update happens", the etag field of each resource's REST reference);
    a stale one is ABORTED, as AIP-154 asks of a mismatched etag."""
    sent = body.get("etag") if isinstance(body, dict) else None
    if sent and sent != current.get("etag"):
        raise ApiError(
            409,
            f"etag: {kind} {current.get('name')} has changed since it was read (etag {sent!r} "
            "is stale); get it again and retry the update",
            status="ABORTED",
        )


ALL_TABLES: tuple[tuple[Table, bool], ...] = (  # (table, refused?) for the dispositions table
    (DATASET_NOTES, False),
    (METADATA_STORE_NOTES, False),
    (TENSORBOARD_NOTES, False),
    (PERSISTENT_RESOURCE_NOTES, False),
    (POOL_NOTES, False),
    (PIPELINE_JOB_NOTES, False),
    (BATCH_NOTES, False),
    (BATCH_REFUSED, True),
    (PIPELINE_JOB_REFUSED, True),
    (INPUT_DATA_REFUSED, True),
)
