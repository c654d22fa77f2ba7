"""Resource IDs Vertex gives out itself are numbers: a name whose ID in such a collection is not
one is malformed, and Vertex answers it 400 INVALID_ARGUMENT, not 404 NOT_FOUND (measured
against real Vertex: the API-contract issue's replay of GoogleCloudPlatform/k8s-config-connector
traffic), so a client's "not found: create it" path is not taken for a typo."""

from __future__ import annotations

from vertexkit.specs.errors import SpecError

# The families whose IDs only Vertex chooses (their create takes no ID parameter in
# aiplatform.v1: customJobs.create, datasets.create, tensorboards.create, studies.create ...).
NUMERIC_ID_FAMILIES = {
    "customJobs": "CustomJob", "hyperparameterTuningJobs": "HyperparameterTuningJob",
    "trainingPipelines": "TrainingPipeline", "batchPredictionJobs": "BatchPredictionJob",
    "datasets": "Dataset", "tensorboards": "Tensorboard", "studies": "Study",
}  # fmt: skip


def check_numeric_id(path: str) -> None:
    """Raises a SpecError naming `name` when `path` names a resource of a numeric-ID family
    (or anything under it) by an ID that is not a number."""
    segments = path.split(":", 1)[0].strip("/").split("/")
    if len(segments) < 6 or segments[0] != "projects" or segments[2] != "locations":
        return
    kind = NUMERIC_ID_FAMILIES.get(segments[4])
    if kind and not segments[5].isdigit():
        name = "/".join(segments[:6])
        why = f'"{segments[5]}" is not a valid {kind} ID: Vertex gives {segments[4]} numeric IDs'
        raise SpecError("name", f"{why} ({name})")
