"""Batch prediction through the real `google.cloud.aiplatform` SDK against the local cloud:
`Model.batch_predict` from gs:// JSONL and CSV and from BigQuery, to gs:// and BigQuery, with
the endpoint's own predictions as the measure; bad rows, instanceConfig, custom serving
containers, cancel, and every request Vertex refuses (nothing created)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pytest
import requests
from google.api_core import exceptions
from google.cloud import aiplatform, aiplatform_v1, bigquery, storage
from palmerpenguins import load_penguins
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.storage.routes import StorageService

SKLEARN_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest"
FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
REPO_ROOT = Path(__file__).resolve().parents[1]
BUCKET = "batch-test"
MACHINE = {"machine_type": "n1-standard-2"}


@pytest.fixture(scope="module")
def penguins() -> tuple[np.ndarray, np.ndarray]:
    frame = load_penguins().dropna(subset=[*FEATURES, "species"])
    return frame[FEATURES].to_numpy(), frame["species"].to_numpy()


@pytest.fixture(scope="module")
def classifier(penguins: tuple[np.ndarray, np.ndarray]) -> Pipeline:
    features, labels = penguins
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(features, labels)


@pytest.fixture(scope="module")
def instances(penguins: tuple[np.ndarray, np.ndarray]) -> list[list[float]]:
    return penguins[0].tolist()


def storage_of(cloud: LocalCloud) -> StorageService:
    return next(s for s in cloud.services if isinstance(s, StorageService))


def put(cloud: LocalCloud, name: str, text: str) -> str:
    storage_of(cloud).write_object(BUCKET, name, text.encode())
    return f"gs://{BUCKET}/{name}"


@pytest.fixture(scope="module")
def model(local_cloud: LocalCloud, classifier: Pipeline) -> aiplatform.Model:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "model.joblib"
        joblib.dump(classifier, path)
        storage_of(local_cloud).write_object(BUCKET, "model/model.joblib", path)
    local_cloud.context().init_aiplatform()
    return aiplatform.Model.upload(
        display_name="penguins",
        artifact_uri=f"gs://{BUCKET}/model",
        serving_container_image_uri=SKLEARN_IMAGE,
    )


@pytest.fixture(scope="module")
def endpoint_predictions(model: aiplatform.Model, instances: list[list[float]]) -> list[Any]:
    """What the model's endpoint answers for every instance: the measure of batch results."""
    endpoint = model.deploy(machine_type="n1-standard-2")
    try:
        return endpoint.predict(instances=instances).predictions
    finally:
        endpoint.undeploy_all()


@pytest.fixture
def sdk(cloud_context: CloudContext) -> CloudContext:
    cloud_context.init_aiplatform()
    return cloud_context


def output_lines(job: aiplatform.BatchPredictionJob, kind: str) -> list[dict[str, Any]]:
    client = storage.Client()
    lines: list[dict[str, Any]] = []
    for blob in job.iter_outputs():
        if blob.name.rsplit("/", 1)[1].startswith(f"prediction.{kind}-"):
            lines += [json.loads(line) for line in blob.download_as_text().splitlines()]
    assert client is not None
    return lines


def jsonl(rows: list[Any]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


# -- gs:// in, gs:// out -----------------------------------------------------------------------
def test_jsonl_to_gcs_equals_endpoint(
    sdk: CloudContext,
    local_cloud: LocalCloud,
    model: aiplatform.Model,
    instances: list[list[float]],
    endpoint_predictions: list[Any],
) -> None:
    source = put(local_cloud, "in/penguins.jsonl", jsonl(instances))
    job = model.batch_predict(
        job_display_name="penguins-jsonl",
        gcs_source=source,
        gcs_destination_prefix=f"gs://{BUCKET}/out",
        instances_format="jsonl",
        starting_replica_count=2,
        max_replica_count=2,
        **MACHINE,
    )
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    directory = job.output_info.gcs_output_directory
    assert directory.startswith(f"gs://{BUCKET}/out/prediction-penguins-")
    names = sorted(blob.name.rsplit("/", 1)[1] for blob in job.iter_outputs())
    assert names == [
        "prediction.errors_stats-00000-of-00002",
        "prediction.errors_stats-00001-of-00002",
        "prediction.results-00000-of-00002",
        "prediction.results-00001-of-00002",
    ]
    results = output_lines(job, "results")
    assert len(results) == len(instances)
    assert [r["instance"] for r in results] == instances  # shards keep the input's order
    assert [r["prediction"] for r in results] == endpoint_predictions
    assert output_lines(job, "errors_stats") == []
    stats = job.completion_stats
    assert (stats.successful_count, stats.failed_count) == (len(instances), 0)
    assert job.gca_resource.model_version_id == "1"


def test_csv_glob_input(
    sdk: CloudContext,
    local_cloud: LocalCloud,
    model: aiplatform.Model,
    instances: list[list[float]],
    endpoint_predictions: list[Any],
) -> None:
    half = len(instances) // 2
    header = ",".join(FEATURES) + "\n"
    for part, rows in enumerate((instances[:half], instances[half:])):
        body = "".join(",".join(repr(v) for v in row) + "\n" for row in rows)
        put(local_cloud, f"csv/part-{part}.csv", header + body)
    job = model.batch_predict(
        gcs_source=f"gs://{BUCKET}/csv/part-*.csv",
        gcs_destination_prefix=f"gs://{BUCKET}/csv-out",
        instances_format="csv",
        **MACHINE,
    )
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    results = output_lines(job, "results")
    assert [r["instance"] for r in results] == instances
    assert [r["prediction"] for r in results] == endpoint_predictions


def test_bad_rows_go_to_errors(
    sdk: CloudContext, local_cloud: LocalCloud, model: aiplatform.Model
) -> None:
    good = [[39.1, 18.7, 181.0, 3750.0], [46.5, 17.9, 192.0, 3500.0]]
    text = jsonl([good[0], [1.0, 2.0], {"a": 1}, good[1]]) + "{not json\n"
    job = model.batch_predict(
        gcs_source=put(local_cloud, "bad/rows.jsonl", text),
        gcs_destination_prefix=f"gs://{BUCKET}/bad-out",
        instances_format="jsonl",
        **MACHINE,
    )
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    assert [r["instance"] for r in output_lines(job, "results")] == good
    errors = output_lines(job, "errors_stats")
    assert [e["instance"] for e in errors] == [[1.0, 2.0], {"a": 1}, "{not json"]
    assert "expects 4 features" in errors[0]["error"]["message"]
    assert "JSON object" in errors[1]["error"]["message"]
    assert "not JSON" in errors[2]["error"]["message"]
    assert {e["error"]["status"] for e in errors} == {"INVALID_ARGUMENT"}
    stats = job.completion_stats
    assert (stats.successful_count, stats.failed_count) == (2, 3)


def create_job(ctx: CloudContext, model: aiplatform.Model, body: dict[str, Any]) -> Any:
    """A job created through the GAPIC client (the SDK's create has no `instanceConfig`),
    then waited for through the SDK."""
    request = {"displayName": "raw", "model": model.resource_name,
               "dedicatedResources": {"machineSpec": {"machineType": "n1-standard-2"}}, **body}  # fmt: skip
    created = ctx.job_client().create_batch_prediction_job(
        parent=ctx.parent,
        batch_prediction_job=aiplatform_v1.BatchPredictionJob.from_json(json.dumps(request)),
    )
    job = aiplatform.BatchPredictionJob(created.name)
    job.wait()
    return job


def gcs_body(source: str, destination: str, fmt: str = "jsonl", **extra: Any) -> dict[str, Any]:
    return {
        "inputConfig": {"instancesFormat": fmt, "gcsSource": {"uris": [source]}},
        "outputConfig": {
            "predictionsFormat": "jsonl",
            "gcsDestination": {"outputUriPrefix": destination},
        },
        **extra,
    }


def test_instance_config_key_and_included_fields(
    sdk: CloudContext, local_cloud: LocalCloud, model: aiplatform.Model
) -> None:
    values = [[39.1, 18.7, 181.0, 3750.0], [46.5, 17.9, 192.0, 3500.0]]
    rows = [
        {"id": key, "species": "?", **dict(zip(FEATURES, row, strict=True))}
        for key, row in zip("ab", values, strict=True)
    ]
    config = {"instanceType": "array", "keyField": "id", "includedFields": FEATURES}
    source = put(local_cloud, "keyed/rows.jsonl", jsonl(rows))
    job = create_job(
        sdk, model, gcs_body(source, f"gs://{BUCKET}/keyed-out", instanceConfig=config)
    )
    results = output_lines(job, "results")
    assert [r["key"] for r in results] == ["a", "b"]
    assert all("instance" not in r for r in results)
    assert [r["prediction"] for r in results] == ["Adelie", "Chinstrap"]
