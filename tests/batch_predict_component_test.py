"""The `batch_predict` component in a compiled pipeline on the local cloud, as `vertexkit run`
runs it: a model trained and uploaded in the run, predicted in batch once from our VertexModel
and once from a VertexModel shaped as GCPC's ModelUploadOp writes it."""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from google_cloud_pipeline_components.types.artifact_types import VertexModel
from kfp import compiler, dsl
from kfp.dsl import Input, Model, Output

from vertexkit import runner
from vertexkit.components import batch_predict, upload_model

IMAGE = "python:3.11"
INSTANCES = [[0.0, 0.1], [0.2, 0.0], [1.0, 0.9], [0.9, 1.1]]


@dsl.component(base_image=IMAGE)
def train_and_write_instances(model: Output[Model], bucket: str) -> str:
    import json
    import os

    import joblib
    from google.cloud import storage
    from sklearn.linear_model import LogisticRegression

    features = [[0.0, 0.1], [0.2, 0.0], [1.0, 0.9], [0.9, 1.1]]
    classifier = LogisticRegression().fit(features, [0, 0, 1, 1])
    os.makedirs(model.path, exist_ok=True)
    joblib.dump(classifier, os.path.join(model.path, "model.joblib"))
    client = storage.Client()
    target = client.bucket(bucket)
    if not target.exists():
        target = client.create_bucket(bucket)
    text = "".join(json.dumps(row) + "\n" for row in features)
    target.blob("batch/instances.jsonl").upload_from_string(text)
    return f"gs://{bucket}/batch/instances.jsonl"


@dsl.component(base_image=IMAGE)
def as_gcpc_model(model: Input[VertexModel], gcpc_model: Output[VertexModel]) -> None:
    """What GCPC's ModelUploadOp outputs: the model's API URI and its unversioned name."""
    name = model.metadata["resourceName"].split("@")[0]
    region = name.split("/")[3]
    gcpc_model.uri = f"https://{region}-aiplatform.googleapis.com/v1/{name}"
    gcpc_model.metadata["resourceName"] = name


@dsl.pipeline(name="batch-predict-chain")
def batch_pipeline(bucket: str) -> None:
    trained = train_and_write_instances(bucket=bucket)
    uploaded = upload_model(
        display_name="batch-model", model_dir=trained.outputs["model"], framework="sklearn"
    )
    batch_predict(
        model=uploaded.outputs["model"],
        job_display_name="ours",
        gcs_source_uris=[trained.outputs["Output"]],
        gcs_destination_output_uri_prefix=f"gs://{bucket}/ours",
        starting_replica_count=2,
    )
    gcpc = as_gcpc_model(model=uploaded.outputs["model"])
    batch_predict(
        model=gcpc.outputs["gcpc_model"],
        job_display_name="gcpc",
        gcs_source_uris=[trained.outputs["Output"]],
        gcs_destination_output_uri_prefix=f"gs://{bucket}/gcpc",
    )


def test_batch_predict_component_in_a_compiled_pipeline(tmp_path: Path) -> None:
    results: dict[str, list[Any]] = {}

    def read_results(run: runner.FinishedRun) -> None:
        from google.cloud import aiplatform, storage

        run.context.init_aiplatform()
        for job in aiplatform.BatchPredictionJob.list():
            assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
            lines = [
                json.loads(line)
                for blob in job.iter_outputs()
                if "prediction.results-" in blob.name
                for line in blob.download_as_text().splitlines()
            ]
            results[job.display_name] = [(r["instance"], r["prediction"]) for r in lines]
        assert storage.Client() is not None

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pipeline.yaml"
        compiler.Compiler().compile(pipeline_func=batch_pipeline, package_path=str(path))
        pipeline_yaml = path.read_text()
    run = runner.run_pipeline_job(
        "batch-predict-chain", {"bucket": "batch-component"}, pipeline_yaml, home=tmp_path,
        emit=lambda line: None, while_running=read_results,
    )  # fmt: skip
    expected = list(zip(INSTANCES, [0, 0, 1, 1], strict=True))
    assert {name: [(i, p) for i, p in rows] for name, rows in results.items()} == {
        "ours": expected,
        "gcpc": expected,
    }
    details = {t["taskName"]: t for t in run.job["jobDetail"]["taskDetails"]}
    [artifact] = details["batch-predict"]["outputs"]["batch_prediction_job"]["artifacts"]
    assert artifact["metadata"]["gcsOutputDirectory"].startswith("gs://batch-component/ours/")
    assert artifact["metadata"]["resourceName"].split("/")[4] == "batchPredictionJobs"


@pytest.mark.slow
def test_training_pipeline_batch_predict_step(tmp_path: Path) -> None:
    """The built-in training pipeline with its optional step on: the penguins table scored by
    the new version into a new dataset, one prediction per row, species left out."""
    found: dict[str, Any] = {}

    def read_table(run: runner.FinishedRun) -> None:
        from google.cloud import aiplatform

        run.context.init_aiplatform()
        [job] = aiplatform.BatchPredictionJob.list()
        client = run.context.bigquery_client()
        dataset = job.output_info.bigquery_output_dataset.removeprefix("bq://")
        table = client.get_table(f"{dataset}.{job.output_info.bigquery_output_table}")
        source = client.get_table("bigquery-public-data.ml_datasets.penguins")
        found.update(
            state=job.state.name,
            rows=(table.num_rows, source.num_rows),
            columns=[field.name for field in table.schema],
            failed=job.completion_stats.failed_count,
        )

    pipeline_yaml, params = runner.prepare(
        "training",
        ["batch_predict_source=bq://bigquery-public-data.ml_datasets.penguins",
         "batch_predict_destination=bq://local-project"],
    )  # fmt: skip
    runner.run_pipeline_job(
        "training", params, pipeline_yaml, home=tmp_path, emit=lambda line: None,
        while_running=read_table,
    )  # fmt: skip
    assert found["state"] == "JOB_STATE_SUCCEEDED"
    assert found["rows"][0] == found["rows"][1] and found["failed"] == 0
    assert "species" not in found["columns"] and found["columns"][-1] == "prediction"
