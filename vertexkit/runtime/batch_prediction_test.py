"""The BatchPredictionJob the component builds, and its refusals before anything is created."""

from __future__ import annotations

import pytest

from vertexkit.runtime.batch_prediction import (
    BatchPredictConfig,
    build_batch_prediction_job,
    model_resource_name,
)
from vertexkit.specs import SpecError

MODEL = "projects/p/locations/us-central1/models/7@2"


def config(**overrides: object) -> BatchPredictConfig:
    values: dict = {"display_name": "bp", "model": MODEL, "gcs_source_uris": ["gs://bkt/a.jsonl"],
                    "gcs_destination_output_uri_prefix": "gs://bkt/out"}  # fmt: skip
    return BatchPredictConfig(**{**values, **overrides})  # type: ignore[arg-type]


def test_gcs_job() -> None:
    job = build_batch_prediction_job(
        config(starting_replica_count=3, batch_size=100, key_field="id")
    )
    assert job["inputConfig"] == {
        "instancesFormat": "jsonl",
        "gcsSource": {"uris": ["gs://bkt/a.jsonl"]},
    }
    assert job["outputConfig"]["gcsDestination"] == {"outputUriPrefix": "gs://bkt/out"}
    assert job["dedicatedResources"]["startingReplicaCount"] == 3
    assert job["dedicatedResources"]["maxReplicaCount"] == 3  # raised to the starting count
    assert job["manualBatchTuningParameters"] == {"batchSize": 100}
    assert job["instanceConfig"] == {"keyField": "id"}


def test_bigquery_job() -> None:
    job = build_batch_prediction_job(
        config(gcs_source_uris=[], bigquery_source_input_uri="bq://p.d.t",
               gcs_destination_output_uri_prefix="", bigquery_destination_output_uri="bq://p")
    )  # fmt: skip
    assert job["inputConfig"] == {"instancesFormat": "bigquery",
                                  "bigquerySource": {"inputUri": "bq://p.d.t"}}  # fmt: skip
    assert job["outputConfig"] == {"predictionsFormat": "bigquery",
                                   "bigqueryDestination": {"outputUri": "bq://p"}}  # fmt: skip


REFUSED = {
    "no-source": ({"gcs_source_uris": []}, "inputConfig.gcsSource.uris"),
    "source-not-gs": ({"gcs_source_uris": ["/data/a.jsonl"]}, "inputConfig.gcsSource.uris[0]"),
    "csv-out": ({"predictions_format": "csv"}, "outputConfig.predictionsFormat"),
    "gpu-on-e2": ({"machine_type": "e2-standard-4", "accelerator_type": "NVIDIA_TESLA_T4"},
                  "dedicatedResources.machineSpec.acceleratorType"),
    "both-field-lists": ({"included_fields": ["a"], "excluded_fields": ["b"]},
                         "instanceConfig.excludedFields"),
}  # fmt: skip


@pytest.mark.parametrize(("overrides", "field"), REFUSED.values(), ids=REFUSED)
def test_refused_before_creating(overrides: dict, field: str) -> None:
    with pytest.raises(SpecError) as refused:
        build_batch_prediction_job(config(**overrides))
    assert refused.value.field == field


def test_model_resource_name_from_ours_gcpcs_or_the_uri() -> None:
    assert model_resource_name({"resourceName": MODEL}, "") == MODEL
    uri = (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/models/7"
    )
    assert model_resource_name({}, uri) == "projects/p/locations/us-central1/models/7"
