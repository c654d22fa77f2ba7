"""Managed tabular datasets through the high-level SDK (`aiplatform.TabularDataset`) and as a
training pipeline's input, against the local cloud, as a Vertex user writes them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform, aiplatform_v1
from google.cloud.aiplatform import training_jobs

from vertexkit.context import CloudContext

PENGUINS = "bq://bigquery-public-data.ml_datasets.penguins"
TABULAR = "gs://google-cloud-aiplatform/schema/dataset/metadata/tabular_1.0.0.yaml"
CUSTOM_TASK = "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"
CSV = "species,culmen_length_mm,body_mass_g\nAdelie,39.1,3750\nGentoo,46.1,4500\n"


@pytest.fixture
def sdk(cloud_context: CloudContext) -> CloudContext:
    client = cloud_context.storage_client()
    for bucket in ("vertexkit-staging", "vertexkit-data"):
        if client.lookup_bucket(bucket) is None:
            client.create_bucket(bucket)
    client.bucket("vertexkit-data").blob("penguins/part-1.csv").upload_from_string(CSV)
    cloud_context.init_aiplatform(staging_bucket="gs://vertexkit-staging")
    return cloud_context


def test_a_dataset_from_bigquery_reads_its_columns(sdk: CloudContext) -> None:
    dataset = aiplatform.TabularDataset.create(
        display_name="penguins-bq", bq_source=PENGUINS, labels={"team": "ml"}
    )
    resource = dataset.gca_resource
    assert resource.metadata_schema_uri == TABULAR
    assert resource.metadata["inputConfig"]["bigquerySource"]["uri"] == PENGUINS
    assert "species" in dataset.column_names and "body_mass_g" in dataset.column_names
    assert dataset.labels == {"team": "ml"}
    again = aiplatform.TabularDataset(dataset.resource_name)
    assert again.display_name == "penguins-bq"
    listed = aiplatform.TabularDataset.list(filter='display_name="penguins-bq"')
    assert dataset.resource_name in {d.resource_name for d in listed}


def test_a_dataset_from_csv_reads_the_header_and_deletes(sdk: CloudContext) -> None:
    uri = "gs://vertexkit-data/penguins/part-1.csv"
    dataset = aiplatform.TabularDataset.create(display_name="penguins-csv", gcs_source=[uri])
    assert dataset.gca_resource.metadata["inputConfig"]["gcsSource"]["uri"] == [uri]
    # The SDK reads the header itself and answers a set as a list (its own TODO).
    assert set(dataset.column_names) == {"species", "culmen_length_mm", "body_mass_g"}
    dataset.delete()
    with pytest.raises(exceptions.NotFound):
        aiplatform.TabularDataset(dataset.resource_name)


TRAINER = Path(__file__).parents[1] / "vertexkit/local/vertex/datasets/testdata/dataset_trainer.py"
TRAIN_IMAGE = "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest"
SERVE_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest"
ADELIE = [39.1, 18.7, 181.0, 3750.0]


def test_custom_training_job_on_a_tabular_dataset_deploys_and_predicts(
    sdk: CloudContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(training_jobs, "_JOB_WAIT_TIME", 0.1)
    dataset = aiplatform.TabularDataset.create(display_name="penguins", bq_source=PENGUINS)
    job = aiplatform.CustomTrainingJob(
        display_name="penguins-on-a-dataset",
        script_path=str(TRAINER),
        container_uri=TRAIN_IMAGE,
        model_serving_container_image_uri=SERVE_IMAGE,
    )
    model = job.run(
        dataset=dataset,
        training_fraction_split=0.7,
        validation_fraction_split=0.1,
        test_fraction_split=0.2,
        base_output_dir="gs://vertexkit-staging/penguins-dataset",
        machine_type="n1-standard-4",
    )
    assert job.gca_resource.input_data_config.dataset_id == dataset.name
    exported = [
        blob.name
        for blob in sdk.storage_client().list_blobs(
            "vertexkit-staging", prefix="penguins-dataset/dataset-"
        )
    ]
    assert [name.rsplit("/", 1)[1] for name in sorted(exported)] == [
        "test-00000-of-00001.csv", "training-00000-of-00001.csv", "validation-00000-of-00001.csv"
    ]  # fmt: skip
    assert exported[0].startswith(f"penguins-dataset/dataset-{dataset.name}-tables-")
    endpoint = model.deploy(machine_type="n1-standard-2")
    try:
        assert endpoint.predict(instances=[ADELIE]).predictions[0].startswith("Adelie")
    finally:
        endpoint.undeploy_all()
        endpoint.delete()


# -- refused before anything is created --------------------------------------------------------
def good_dataset() -> dict:
    return {
        "display_name": "refused",
        "metadata_schema_uri": TABULAR,
        "metadata": {"inputConfig": {"bigquerySource": {"uri": PENGUINS}}},
    }


def source(request: dict) -> dict:
    return request["metadata"]["inputConfig"]


BAD_DATASETS = {
    "region": ("location", exceptions.BadRequest, lambda r: r),
    "no display name": ("displayName", exceptions.BadRequest, lambda r: r.update(display_name="")),
    "bad label": ("labels", exceptions.BadRequest, lambda r: r.update(labels={"Bad": "x"})),
    "no schema": ("metadataSchemaUri", exceptions.BadRequest,
                  lambda r: r.pop("metadata_schema_uri")),
    "not a schema": ("metadataSchemaUri", exceptions.BadRequest,
                     lambda r: r.update(metadata_schema_uri="gs://elsewhere/schema.yaml")),
    "image dataset": ("metadataSchemaUri", exceptions.MethodNotImplemented,
                      lambda r: r.update(metadata_schema_uri=TABULAR.replace("tabular", "image"))),
    "no input config": ("metadata.inputConfig", exceptions.BadRequest,
                        lambda r: r.update(metadata={})),
    "both sources": ("metadata.inputConfig", exceptions.BadRequest,
                     lambda r: source(r).update(gcsSource={"uri": ["gs://b/x.csv"]})),
    "not a table uri": ("metadata.inputConfig.bigquerySource.uri", exceptions.BadRequest,
                        lambda r: source(r).update(bigquerySource={"uri": "bq://only.two"})),
    "missing table": ("metadata.inputConfig.bigquerySource.uri", exceptions.BadRequest,
                      lambda r: source(r).update(
                          bigquerySource={"uri": "bq://bigquery-public-data.ml_datasets.nope"})),
    "not gs": ("metadata.inputConfig.gcsSource.uri[0]", exceptions.BadRequest,
               lambda r: r["metadata"].update(inputConfig={"gcsSource": {"uri": ["/tmp/x.csv"]}})),
    "missing csv": ("metadata.inputConfig.gcsSource.uri[0]", exceptions.BadRequest,
                    lambda r: r["metadata"].update(
                        inputConfig={"gcsSource": {"uri": ["gs://vertexkit-data/none.csv"]}})),
}  # fmt: skip


def dataset_client(sdk: CloudContext) -> aiplatform_v1.DatasetServiceClient:
    return sdk.dataset_client()


def dataset_names(sdk: CloudContext) -> set[str]:
    return {d.name for d in dataset_client(sdk).list_datasets(parent=sdk.parent)}


@pytest.mark.parametrize(("field", "error", "spoil"), BAD_DATASETS.values(), ids=BAD_DATASETS)
def test_bad_datasets_are_refused_before_anything_is_created(
    sdk: CloudContext, field: str, error: type[Exception], spoil: Callable[[dict], object]
) -> None:
    parent = (
        sdk.parent.replace("us-central1", "mars-central1") if field == "location" else sdk.parent
    )
    before = dataset_names(sdk)
    request = good_dataset()
    spoil(request)
    with pytest.raises(error) as refused:
        dataset_client(sdk).create_dataset(parent=parent, dataset=request)
    assert field in refused.value.message
    assert dataset_names(sdk) == before, "a refused request created a dataset"


def pipeline_request(dataset_id: str) -> dict:
    return {
        "display_name": "refused",
        "training_task_definition": CUSTOM_TASK,
        "training_task_inputs": {
            "worker_pool_specs": [{
                "machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
                "container_spec": {"image_uri": TRAIN_IMAGE, "command": ["true"]},
            }],
        },
        "input_data_config": {
            "dataset_id": dataset_id,
            "gcs_destination": {"output_uri_prefix": "gs://vertexkit-staging/refused"},
        },
    }  # fmt: skip


def config(request: dict) -> dict:
    return request["input_data_config"]


BAD_INPUT_CONFIGS = {
    "no dataset id": ("inputDataConfig.datasetId", exceptions.BadRequest,
                      lambda r: config(r).pop("dataset_id")),
    "unknown dataset": ("inputDataConfig.datasetId", exceptions.NotFound,
                        lambda r: config(r).update(dataset_id="4242")),
    "negative fraction": (
        "inputDataConfig.fractionSplit.testFraction", exceptions.BadRequest,
        lambda r: config(r).update(
            fraction_split={"training_fraction": 0.5, "test_fraction": -0.1}),
    ),
    "fractions over one": ("inputDataConfig.fractionSplit", exceptions.BadRequest,
                           lambda r: config(r).update(fraction_split={
                               "training_fraction": 0.9, "test_fraction": 0.2})),
    "filter split on tabular": ("inputDataConfig.filterSplit", exceptions.BadRequest,
                                lambda r: config(r).update(filter_split={
                                    "training_filter": "a", "validation_filter": "b",
                                    "test_filter": "c"})),
    "unknown predefined column": ("inputDataConfig.predefinedSplit.key", exceptions.BadRequest,
                                  lambda r: config(r).update(predefined_split={"key": "nope"})),
    "no destination": ("inputDataConfig.gcsDestination", exceptions.BadRequest,
                       lambda r: config(r).pop("gcs_destination")),
    "destination not gs": ("inputDataConfig.gcsDestination.outputUriPrefix",
                           exceptions.BadRequest,
                           lambda r: config(r).update(gcs_destination={"output_uri_prefix": "/x"})),
    "bigquery destination with a dataset": (
        "inputDataConfig.bigqueryDestination.outputUri", exceptions.BadRequest,
        lambda r: (config(r).pop("gcs_destination"), config(r).update(
            bigquery_destination={"output_uri": "bq://local-project.some_dataset"}))),
}  # fmt: skip


@pytest.mark.parametrize(
    ("field", "error", "spoil"), BAD_INPUT_CONFIGS.values(), ids=BAD_INPUT_CONFIGS
)
def test_bad_input_data_configs_are_refused_before_anything_is_created(
    sdk: CloudContext, field: str, error: type[Exception], spoil: Callable[[dict], object]
) -> None:
    dataset = aiplatform.TabularDataset.create(display_name="refused-input", bq_source=PENGUINS)
    client = sdk.pipeline_client()
    before = {p.name for p in client.list_training_pipelines(parent=sdk.parent)}
    request = pipeline_request(dataset.name)
    spoil(request)
    with pytest.raises(error) as refused:
        client.create_training_pipeline(parent=sdk.parent, training_pipeline=request)
    assert field in refused.value.message
    after = {p.name for p in client.list_training_pipelines(parent=sdk.parent)}
    assert after == before, "a refused request created a training pipeline"


SPLIT_TRAINER = """
import os
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery

assert os.environ["AIP_DATA_FORMAT"] == "bigquery", os.environ["AIP_DATA_FORMAT"]
project = os.environ["CLOUD_ML_PROJECT_ID"]
client = bigquery.Client(credentials=AnonymousCredentials(), project=project)
for split in ("TRAINING", "VALIDATION", "TEST"):
    table = os.environ[f"AIP_{split}_DATA_URI"].removeprefix("bq://")
    rows = list(client.query(f"SELECT DISTINCT split FROM `{table}`").result())
    assert [row.split for row in rows] == [split.lower()], (split, rows)
print("splits as predefined")
"""

SPLIT_CSV = "x,split\n" + "".join(
    f"{i},{name}\n" for i, name in enumerate(["training"] * 6 + ["validation", "test", "other"])
)


def test_a_predefined_split_exported_to_bigquery(
    sdk: CloudContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(training_jobs, "_JOB_WAIT_TIME", 0.1)
    uri = "gs://vertexkit-data/splits/rows.csv"
    sdk.storage_client().bucket("vertexkit-data").blob("splits/rows.csv").upload_from_string(
        SPLIT_CSV
    )
    dataset = aiplatform.TabularDataset.create(display_name="splits", gcs_source=[uri])
    script = tmp_path / "split_trainer.py"
    script.write_text(SPLIT_TRAINER)
    job = aiplatform.CustomTrainingJob(
        display_name="predefined", script_path=str(script), container_uri=TRAIN_IMAGE
    )
    job.run(
        dataset=dataset,
        predefined_split_column_name="split",
        bigquery_destination=f"bq://{sdk.project}",
        replica_count=1,
    )
    assert job.state.name == "PIPELINE_STATE_SUCCEEDED"
