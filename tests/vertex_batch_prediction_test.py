"""Batch prediction through the real `google.cloud.aiplatform` SDK against the local cloud:
`Model.batch_predict` from gs:// JSONL and CSV and from BigQuery, to gs:// and BigQuery, with
the endpoint's own predictions as the measure; bad rows, instanceConfig, custom serving
containers, cancel, and every request Vertex refuses (nothing created)."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
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
TERMINAL = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}


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
    machine = {"machineSpec": {"machineType": "n1-standard-2"}}
    request = {"displayName": "raw", "model": model.resource_name,
               "dedicatedResources": machine, **body}  # fmt: skip
    created = ctx.job_client().create_batch_prediction_job(
        parent=ctx.parent,
        batch_prediction_job=aiplatform_v1.BatchPredictionJob.from_json(json.dumps(request)),
    )
    return ended(aiplatform.BatchPredictionJob(created.name))


def ended(job: aiplatform.BatchPredictionJob) -> aiplatform.BatchPredictionJob:
    """The job once it has ended (a job got by name has no future for `wait()` to await)."""
    while job.state.name not in TERMINAL:
        time.sleep(0.1)
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


# -- BigQuery in, BigQuery out -----------------------------------------------------------------
@pytest.fixture(scope="module")
def penguins_table(local_cloud: LocalCloud, instances: list[list[float]]) -> str:
    client = local_cloud.context().bigquery_client()
    client.create_dataset("batch_src", exists_ok=True)
    schema = [bigquery.SchemaField(name, "FLOAT") for name in FEATURES]
    rows = [dict(zip(FEATURES, row, strict=True)) for row in instances]
    table = f"{client.project}.batch_src.penguins"
    config = bigquery.LoadJobConfig(schema=schema, write_disposition="WRITE_TRUNCATE")
    client.load_table_from_json(rows, table, job_config=config).result()
    return table


def test_bigquery_to_bigquery_equals_endpoint(
    sdk: CloudContext,
    model: aiplatform.Model,
    penguins_table: str,
    instances: list[list[float]],
    endpoint_predictions: list[Any],
) -> None:
    client = sdk.bigquery_client()
    client.create_dataset("batch_out", exists_ok=True)
    job = model.batch_predict(
        job_display_name="penguins-bq",
        bigquery_source=f"bq://{penguins_table}",
        bigquery_destination_prefix=f"bq://{client.project}.batch_out",
        starting_replica_count=3,
        **MACHINE,
    )
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    info = job.output_info
    assert info.bigquery_output_dataset == f"bq://{client.project}.batch_out"
    assert info.bigquery_output_table.startswith("predictions_")
    table = f"{client.project}.batch_out.{info.bigquery_output_table}"
    assert [field.name for field in client.get_table(table).schema] == [*FEATURES, "prediction"]
    rows = client.query(f"SELECT * FROM `{table}`").to_dataframe(create_bqstorage_client=False)
    assert len(rows) == len(instances)
    expected = {tuple(row): p for row, p in zip(instances, endpoint_predictions, strict=True)}
    got = {tuple(row[FEATURES]): row["prediction"] for _, row in rows.iterrows()}
    assert got == expected
    errors_table = table.replace(".predictions_", ".errors_")
    assert client.get_table(errors_table).num_rows == 0
    # what the SDK reads back
    assert len(list(job.iter_outputs(bq_max_results=1000))) == len(instances)


def test_bigquery_project_destination_makes_a_dataset(
    sdk: CloudContext, model: aiplatform.Model, penguins_table: str
) -> None:
    client = sdk.bigquery_client()
    job = model.batch_predict(
        bigquery_source=f"bq://{penguins_table}",
        bigquery_destination_prefix=client.project,
        **MACHINE,
    )
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    dataset = job.output_info.bigquery_output_dataset.removeprefix("bq://")
    assert dataset.startswith(f"{client.project}.prediction_penguins_")
    assert job.output_info.bigquery_output_table == "predictions"
    assert {t.table_id for t in client.list_tables(dataset)} == {"predictions", "errors"}


# -- custom serving containers, cancel ---------------------------------------------------------
def custom_model(command: list[str], **kwargs: Any) -> aiplatform.Model:
    return aiplatform.Model.upload(
        display_name="custom-serving",
        artifact_uri=f"gs://{BUCKET}/model",
        serving_container_image_uri="europe-docker.pkg.dev/my-project/serving/penguins:1",
        serving_container_command=command,
        serving_container_environment_variables={"PYTHONPATH": str(REPO_ROOT)},
        **kwargs,
    )


def test_custom_container_with_parameters(
    sdk: CloudContext,
    local_cloud: LocalCloud,
    model: aiplatform.Model,
    instances: list[list[float]],
    endpoint_predictions: list[Any],
) -> None:
    served = custom_model(
        ["python", "-m", "trainers.custom_serving"],
        serving_container_predict_route="/predict",
        serving_container_health_route="/health",
    )
    job = served.batch_predict(
        gcs_source=put(local_cloud, "custom/rows.jsonl", jsonl(instances)),
        gcs_destination_prefix=f"gs://{BUCKET}/custom-out",
        instances_format="jsonl",
        model_parameters={"probabilities": True},
        starting_replica_count=2,
        batch_size=16,
        **MACHINE,
    )
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    predictions = [r["prediction"] for r in output_lines(job, "results")]
    assert [p["label"] for p in predictions] == endpoint_predictions
    assert all(sum(p["probabilities"].values()) == pytest.approx(1.0) for p in predictions)


def test_cancel_ends_replicas(
    sdk: CloudContext, local_cloud: LocalCloud, instances: list[list[float]]
) -> None:
    slow = REPO_ROOT / "vertexkit/local/vertex/batch_prediction/testdata/slow_server.py"
    served = custom_model(["python", str(slow)])
    job = served.batch_predict(
        gcs_source=put(local_cloud, "slow/rows.jsonl", jsonl(instances[:4])),
        gcs_destination_prefix=f"gs://{BUCKET}/slow-out",
        instances_format="jsonl",
        sync=False,
        **MACHINE,
    )
    job.wait_for_resource_creation()
    while job.state.name != "JOB_STATE_RUNNING":
        time.sleep(0.1)
    while not local_cloud_processes(local_cloud, job.resource_name):
        time.sleep(0.1)
    job.cancel()
    ended(job)
    assert job.state.name == "JOB_STATE_CANCELLED"
    assert job.error.code == 1
    assert local_cloud_processes(local_cloud, job.resource_name) == []
    assert not job.output_info.gcs_output_directory


def local_cloud_processes(cloud: LocalCloud, job_name: str) -> list[Any]:
    """The process groups the local cloud records for this job's replicas and containers."""
    job_id = job_name.rsplit("/", 1)[1]
    store = cloud.vertex.backend.store
    return [r for r in store.recorded_processes() if f"/batch_prediction/{job_id}/" in r.owner]


# -- refusals: each names its field, nothing is created ----------------------------------------
def good_request(model: aiplatform.Model) -> dict[str, Any]:
    return {
        "displayName": "refused",
        "model": model.resource_name,
        "dedicatedResources": {"machineSpec": {"machineType": "n1-standard-2"}},
        **gcs_body(f"gs://{BUCKET}/in/penguins.jsonl", f"gs://{BUCKET}/refused"),
    }


def setter(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Sets (or with None, removes) the dotted `path` of a request."""

    def spoil(request: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = request
        for part in parents:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value

    return spoil


BQ_IN = {"instancesFormat": "bigquery", "bigquerySource": {"inputUri": "bq://p.d.t"}}
BAD = exceptions.BadRequest
BAD_REQUESTS: dict[str, tuple[str, type[Exception], Callable[[dict[str, Any]], None]]] = {
    "no-display-name": ("displayName", BAD, setter("displayName", None)),
    "bad-label": ("labels", BAD, setter("labels", {"Bad Key": "x"})),
    "no-model": ("model", BAD, setter("model", None)),
    "model-not-found": (
        "model", exceptions.NotFound,
        setter("model", "projects/local-project/locations/us-central1/models/404"),
    ),
    "model-elsewhere": (
        "model", BAD, setter("model", "projects/local-project/locations/europe-west4/models/1")
    ),
    "no-instances-format": ("inputConfig.instancesFormat", BAD,
                            setter("inputConfig.instancesFormat", None)),
    "tf-record-not-served": ("inputConfig.instancesFormat", exceptions.MethodNotImplemented,
                             setter("inputConfig.instancesFormat", "tf-record")),
    "no-source": ("inputConfig", BAD, setter("inputConfig.gcsSource", None)),
    "source-not-gs": ("inputConfig.gcsSource.uris[0]", BAD,
                      setter("inputConfig.gcsSource.uris", ["/tmp/rows.jsonl"])),
    "source-without-bucket": ("inputConfig.gcsSource.uris[0]", BAD,
                              setter("inputConfig.gcsSource.uris", ["gs://"])),
    "bq-source-not-a-table": (
        "inputConfig.bigquerySource.inputUri", BAD,
        setter("inputConfig", {**BQ_IN, "bigquerySource": {"inputUri": "bq://p.d"}}),
    ),
    "jsonl-from-bigquery": ("inputConfig.instancesFormat", BAD,
                            setter("inputConfig", {**BQ_IN, "instancesFormat": "jsonl"})),
    "csv-predictions": ("outputConfig.predictionsFormat", BAD,
                        setter("outputConfig.predictionsFormat", "csv")),
    "destination-not-gs": ("outputConfig.gcsDestination.outputUriPrefix", BAD,
                           setter("outputConfig.gcsDestination.outputUriPrefix", "s3://b/out")),
    "bq-destination-four-parts": (
        "outputConfig.bigqueryDestination.outputUri", BAD,
        setter("outputConfig", {"predictionsFormat": "bigquery",
                                "bigqueryDestination": {"outputUri": "bq://p.d.t.x"}}),
    ),
    "bigquery-format-to-gcs": ("outputConfig.predictionsFormat", BAD,
                               setter("outputConfig.predictionsFormat", "bigquery")),
    "no-machine": ("dedicatedResources", BAD, setter("dedicatedResources", None)),
    "unknown-machine": ("dedicatedResources.machineSpec.machineType", BAD,
                        setter("dedicatedResources.machineSpec.machineType", "n9-giant-1")),
    "h100-on-n1": (
        "dedicatedResources.machineSpec.acceleratorType", BAD,
        setter("dedicatedResources.machineSpec",
               {"machineType": "n1-standard-2", "acceleratorType": "NVIDIA_H100_80GB",
                "acceleratorCount": 1}),
    ),
    "starting-over-max": (
        "dedicatedResources.startingReplicaCount", BAD,
        setter("dedicatedResources", {"machineSpec": {"machineType": "n1-standard-2"},
                                      "startingReplicaCount": 5, "maxReplicaCount": 2}),
    ),
    "negative-batch-size": ("manualBatchTuningParameters.batchSize", BAD,
                            setter("manualBatchTuningParameters", {"batchSize": -1})),
    "unknown-instance-type": ("instanceConfig.instanceType", BAD,
                              setter("instanceConfig", {"instanceType": "table"})),
    "included-and-excluded": (
        "instanceConfig.excludedFields", BAD,
        setter("instanceConfig", {"includedFields": ["a"], "excludedFields": ["b"]}),
    ),
    "included-fields-on-csv": (
        "instanceConfig.includedFields", BAD,
        lambda r: (setter("inputConfig.instancesFormat", "csv")(r),
                   setter("instanceConfig", {"includedFields": ["a"]})(r)),
    ),
    "key-field-excluded": (
        "instanceConfig.keyField", BAD,
        setter("instanceConfig", {"keyField": "id", "excludedFields": ["id"]}),
    ),
}  # fmt: skip


@pytest.mark.parametrize(("field", "error", "spoil"), BAD_REQUESTS.values(), ids=BAD_REQUESTS)
def test_bad_requests_are_refused_before_anything_is_created(
    sdk: CloudContext,
    model: aiplatform.Model,
    field: str,
    error: type[Exception],
    spoil: Callable[[dict[str, Any]], None],
) -> None:
    client = sdk.job_client()
    before = {job.name for job in client.list_batch_prediction_jobs(parent=sdk.parent)}
    request = good_request(model)
    spoil(request)
    with pytest.raises(error) as refused:
        client.create_batch_prediction_job(
            parent=sdk.parent,
            batch_prediction_job=aiplatform_v1.BatchPredictionJob.from_json(json.dumps(request)),
        )
    assert field in refused.value.message
    after = {job.name for job in client.list_batch_prediction_jobs(parent=sdk.parent)}
    assert after == before, "a refused request created a job"


@pytest.mark.parametrize(
    ("field", "spoil"),
    [
        ("instanceConfg", setter("instanceConfg", {})),
        ("inputConfig", setter("inputConfig.bigquerySource", {"inputUri": "bq://p.d.t"})),
    ],
    ids=["unknown-field", "two-sources"],
)
def test_requests_no_client_sends_are_refused(
    sdk: CloudContext,
    local_cloud: LocalCloud,
    model: aiplatform.Model,
    field: str,
    spoil: Callable[[dict[str, Any]], None],
) -> None:
    """Bodies the GAPIC client cannot build (an unknown field, two sources of one oneof), sent
    as raw REST: refused naming the field, nothing created."""
    client = sdk.job_client()
    before = {job.name for job in client.list_batch_prediction_jobs(parent=sdk.parent)}
    request = good_request(model)
    spoil(request)
    url = f"{local_cloud.url}/v1/{sdk.parent}/batchPredictionJobs"
    answer = requests.post(url, json=request, timeout=30)
    assert answer.status_code == 400 and field in answer.json()["error"]["message"]
    after = {job.name for job in client.list_batch_prediction_jobs(parent=sdk.parent)}
    assert after == before


def test_bigquery_bad_rows_go_to_the_errors_table(
    sdk: CloudContext, model: aiplatform.Model, instances: list[list[float]]
) -> None:
    client = sdk.bigquery_client()
    client.create_dataset("batch_bad", exists_ok=True)
    schema = [bigquery.SchemaField("id", "STRING")] + [
        bigquery.SchemaField(name, "FLOAT") for name in FEATURES
    ]
    missing = [None, *instances[1][1:]]
    rows = [{"id": "good", **dict(zip(FEATURES, instances[0], strict=True))},
            {"id": "missing", **dict(zip(FEATURES, missing, strict=True))}]  # fmt: skip
    table = f"{client.project}.batch_bad.rows"
    config = bigquery.LoadJobConfig(schema=schema, write_disposition="WRITE_TRUNCATE")
    client.load_table_from_json(rows, table, job_config=config).result()
    job = create_job(
        sdk,
        model,
        {
            "inputConfig": {"instancesFormat": "bigquery",
                            "bigquerySource": {"inputUri": f"bq://{table}"}},
            "outputConfig": {"predictionsFormat": "bigquery",
                             "bigqueryDestination": {"outputUri": f"bq://{client.project}.batch_bad"}},
            "instanceConfig": {"excludedFields": ["id"]},
        },
    )  # fmt: skip
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    stats = job.completion_stats
    assert (stats.successful_count, stats.failed_count) == (1, 1)
    predictions = f"{client.project}.batch_bad.{job.output_info.bigquery_output_table}"
    errors = predictions.replace(".predictions_", ".errors_")
    [failed] = list(client.list_rows(errors))
    assert failed["bill_length_mm"] is None and failed["errors"]["code"] == 3
    assert "NaN" in failed["errors"]["message"]
    assert [row["bill_length_mm"] for row in client.list_rows(predictions)] == [instances[0][0]]


# -- XGBoost, restart --------------------------------------------------------------------------
def test_xgboost_prebuilt_model_predicts_as_its_booster(
    sdk: CloudContext, local_cloud: LocalCloud, penguins: tuple[np.ndarray, np.ndarray]
) -> None:
    import xgboost

    features, labels = penguins
    booster = xgboost.train(
        {"objective": "binary:logistic", "max_depth": 2},
        xgboost.DMatrix(features, label=(labels == "Gentoo").astype(int)),
        num_boost_round=5,
    )
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "model.bst"
        booster.save_model(str(path))
        storage_of(local_cloud).write_object(BUCKET, "xgb/model.bst", path)
    model = aiplatform.Model.upload(
        display_name="penguins-xgb",
        artifact_uri=f"gs://{BUCKET}/xgb",
        serving_container_image_uri="us-docker.pkg.dev/vertex-ai/prediction/xgboost-cpu.2-1:latest",
    )
    rows = features[:40].tolist()
    job = model.batch_predict(
        gcs_source=put(local_cloud, "xgb/rows.jsonl", jsonl(rows)),
        gcs_destination_prefix=f"gs://{BUCKET}/xgb-out",
        instances_format="jsonl",
        starting_replica_count=2,
        **MACHINE,
    )
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    expected = booster.predict(xgboost.DMatrix(np.asarray(rows))).tolist()
    assert [r["prediction"] for r in output_lines(job, "results")] == pytest.approx(expected)


def test_restart_fails_a_job_left_running(tmp_path: Path) -> None:
    from vertexkit.local.vertex.store import ResourceStore

    home = tmp_path / "home"
    with LocalCloud(home=home):
        pass
    # An unclean stop (the process died): a job still marked RUNNING in the state file.
    store = ResourceStore(home / "vertex" / "vertex.sqlite")
    name = "projects/local-project/locations/us-central1/batchPredictionJobs/777"
    store.insert("batchPredictionJobs", name, {"name": name, "state": "JOB_STATE_RUNNING"})
    store.close()
    with LocalCloud(home=home) as cloud:
        job = cloud.context().job_client().get_batch_prediction_job(name=name)
    assert job.state.name == "JOB_STATE_FAILED"
    assert "local cloud stopped while the job was running" in job.error.message
