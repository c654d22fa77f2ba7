"""Batch prediction jobs in the console: the Training page lists them and a job's page shows its
model, its source and destination, and how many rows succeeded or failed."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import joblib
import pytest
import requests
from google.cloud import aiplatform
from google.cloud.aiplatform import jobs as sdk_jobs
from sklearn.linear_model import LogisticRegression

from vertexkit.local import LocalCloud
from vertexkit.local.console import batch_predictions

SKLEARN_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest"
BUCKET = "console-batch"
DONE = {
    "name": "projects/p/locations/l/batchPredictionJobs/5",
    "displayName": "score <nightly>",
    "model": "projects/p/locations/l/models/9",
    "state": "JOB_STATE_SUCCEEDED",
    "inputConfig": {"instancesFormat": "jsonl", "gcsSource": {"uris": ["gs://b/in.jsonl"]}},
    "outputInfo": {"gcsOutputDirectory": "gs://b/out/prediction-m-2026"},
    "completionStats": {"successfulCount": "7", "failedCount": "1"},
}


def test_page_shows_model_source_destination_and_counts() -> None:
    html = batch_predictions.batch_prediction_page(DONE)
    assert '<a href="/console/projects/p/locations/l/models/9">9</a>' in html
    assert "gs://b/in.jsonl" in html and "gs://b/out/prediction-m-2026" in html
    assert "score &lt;nightly&gt;" in html  # escaped
    assert batch_predictions.counts(DONE) == ("7", "1")


def test_a_bigquery_job_names_its_table() -> None:
    job = {
        **DONE,
        "inputConfig": {"bigquerySource": {"inputUri": "bq://p.d.rows"}},
        "outputInfo": {"bigqueryOutputTable": "predictions_2026"},
    }
    assert batch_predictions.source(job) == "bq://p.d.rows"
    assert batch_predictions.destination(job) == "predictions_2026"


def test_training_page_lists_a_real_job_and_its_page_counts_its_rows(
    local_cloud: LocalCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sdk_jobs, "_JOB_WAIT_TIME", 0.1)  # the SDK polls every 5 s otherwise
    storage = local_cloud.storage
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "model.joblib"
        joblib.dump(LogisticRegression().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1]), path)
        storage.write_object(BUCKET, "model/model.joblib", path)
    rows = "\n".join(json.dumps([value]) for value in (0.5, 2.5, 3.0))
    storage.write_object(BUCKET, "in/rows.jsonl", rows.encode())
    local_cloud.context().init_aiplatform()
    model = aiplatform.Model.upload(
        display_name="console-batch",
        artifact_uri=f"gs://{BUCKET}/model",
        serving_container_image_uri=SKLEARN_IMAGE,
    )
    job = model.batch_predict(
        job_display_name="console-batch-job",
        gcs_source=f"gs://{BUCKET}/in/rows.jsonl",
        gcs_destination_prefix=f"gs://{BUCKET}/out",
        instances_format="jsonl",
        machine_type="n1-standard-2",
    )
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    listing = requests.get(f"{local_cloud.url}/console/training", timeout=30).text
    assert f'href="/console/{job.resource_name}"' in listing
    page = requests.get(f"{local_cloud.url}/console/{job.resource_name}", timeout=30)
    assert page.status_code == 200
    assert "console-batch-job" in page.text and f"gs://{BUCKET}/in/rows.jsonl" in page.text
    assert "<td>succeeded rows</td><td>3</td>" in page.text.replace("\n", "")
