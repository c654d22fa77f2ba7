"""A user's own test file, written for Vertex AI: Google's clients with their defaults only (no
endpoint, no credentials), the SDK's initializer reloaded between tests as suites and notebooks
do, an async prediction, raw_predict. `tests/local_exec_test.py` runs it under
`vertexkit local exec -- pytest`, which is all it takes to run it on the local cloud.
"""

import asyncio
import importlib
import json
import os

import pytest
from google.cloud import aiplatform, bigquery, storage
from google.cloud.aiplatform import initializer

PROJECT = "local-project"
LOCATION = "us-central1"
BUCKET = "user-sdk-bucket"
SKLEARN_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-3:latest"
# The replica's own storage.Client(), with its defaults too, writes the model.
TRAIN = """
import io, os, joblib
from google.cloud import storage
from sklearn.linear_model import LogisticRegression
model = LogisticRegression().fit([[0.0, 0.0], [1.0, 1.0], [0.0, 0.2], [0.9, 1.0]], [0, 1, 0, 1])
bucket, path = os.environ["AIP_MODEL_DIR"].removeprefix("gs://").split("/", 1)
buffer = io.BytesIO()
joblib.dump(model, buffer)
storage.Client().bucket(bucket).blob(path.rstrip("/") + "/model.joblib").upload_from_string(
    buffer.getvalue()
)
"""


@pytest.fixture(autouse=True)
def reloaded_sdk() -> None:
    importlib.reload(initializer)
    aiplatform.init(project=PROJECT, location=LOCATION, staging_bucket=f"gs://{BUCKET}")


@pytest.fixture(scope="module")
def endpoint() -> aiplatform.Endpoint:
    importlib.reload(initializer)
    aiplatform.init(project=PROJECT, location=LOCATION, staging_bucket=f"gs://{BUCKET}")
    storage.Client().create_bucket(BUCKET)
    job = aiplatform.CustomJob(
        display_name="user-train",
        worker_pool_specs=[
            {
                "machine_spec": {"machine_type": "n1-standard-4"},
                "replica_count": 1,
                "container_spec": {"image_uri": "python:3.11", "command": ["python", "-c", TRAIN]},
            }
        ],
        base_output_dir=f"gs://{BUCKET}/train",
        # After a reload `aiplatform.init` still sets the old module's config (on Vertex too),
        # so what the new config lacks is passed here.
        staging_bucket=f"gs://{BUCKET}",
    )
    job.run()
    model = aiplatform.Model.upload(
        display_name="user-model",
        artifact_uri=f"gs://{BUCKET}/train/model",
        serving_container_image_uri=SKLEARN_IMAGE,
    )
    return model.deploy(machine_type="n1-standard-2")


def test_the_reloaded_sdk_points_at_the_emulator_by_default() -> None:
    assert initializer.global_config.api_endpoint == os.environ["VERTEX_AI_EMULATOR_HOST"]


def test_bigquery_and_storage_clients_work_with_their_defaults() -> None:
    rows = bigquery.Client().query(
        "SELECT COUNT(*) AS n FROM `bigquery-public-data.ml_datasets.penguins`"
    )
    assert [row.n for row in rows.result()] == [344]
    assert storage.Client().project == "local-project"


def test_to_dataframe_takes_the_storage_read_api_with_no_warning() -> None:
    import warnings

    from google.cloud import bigquery_storage_v1

    client = bigquery.Client()
    client.create_dataset("user_reads", exists_ok=True)
    client.query(
        "CREATE OR REPLACE TABLE user_reads.t AS "
        "SELECT x AS id FROM UNNEST(GENERATE_ARRAY(1, 500)) AS x"
    ).result()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*BigQuery Storage.*")  # "... not found"
        frame = client.list_rows("user_reads.t").to_dataframe()
    assert sorted(frame["id"]) == list(range(1, 501))
    # google-cloud-bigquery's own BigQueryReadClient, and one the user builds with no arguments
    assert client._ensure_bqstorage_client() is not None
    session = bigquery_storage_v1.BigQueryReadClient().create_read_session(
        parent=f"projects/{PROJECT}",
        read_session={"table": f"projects/{PROJECT}/datasets/user_reads/tables/t",
                      "data_format": "ARROW"},
    )  # fmt: skip
    assert session.estimated_row_count == 500
    assert (
        bigquery_storage_v1.BigQueryWriteClient()
        .get_write_stream(name=f"projects/{PROJECT}/datasets/user_reads/tables/t/streams/_default")
        .name.endswith("/_default")
    )


def test_predict(endpoint: aiplatform.Endpoint) -> None:
    assert aiplatform.Endpoint(endpoint.resource_name).predict(
        instances=[[1.0, 1.0]]
    ).predictions == [1]


def test_raw_predict(endpoint: aiplatform.Endpoint) -> None:
    body = json.dumps({"instances": [[0.0, 0.0]]}).encode()
    response = aiplatform.Endpoint(endpoint.resource_name).raw_predict(
        body=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 200 and json.loads(response.content)["predictions"] == [0]


def test_predict_through_raw_predict(endpoint: aiplatform.Endpoint) -> None:
    found = aiplatform.Endpoint(endpoint.resource_name).predict(
        instances=[[1.0, 1.0]], use_raw_predict=True
    )
    assert found.predictions == [1]


def test_async_predict(endpoint: aiplatform.Endpoint) -> None:
    async def predict() -> list:
        found = await aiplatform.Endpoint(endpoint.resource_name).predict_async(
            instances=[[0.0, 0.0]]
        )
        return found.predictions

    assert asyncio.run(predict()) == [0]


def test_pipeline_job_submit_and_wait(tmp_path) -> None:
    from kfp import compiler, dsl

    @dsl.component(base_image="python:3.11")
    def double(n: int) -> int:
        return 2 * n

    @dsl.pipeline(name="user-pipeline")
    def pipeline(n: int = 21) -> int:
        return double(n=n).output

    compiler.Compiler().compile(pipeline, str(tmp_path / "pipeline.yaml"))
    job = aiplatform.PipelineJob(
        display_name="user-pipeline",
        template_path=str(tmp_path / "pipeline.yaml"),
        pipeline_root=f"gs://{BUCKET}/pipelines",
    )
    job.submit()  # its bucket-owner check asks Resource Manager: the local cloud answers
    job.wait()
    assert job.state == aiplatform.gapic.PipelineState.PIPELINE_STATE_SUCCEEDED
