"""Pipelines that mix vertexkit's components with Google Cloud Pipeline Components operators run
on the local cloud from compiled YAML, through GCPC's own launchers (unmodified, from the
installed package), whose Google clients the local cloud's hook points at it.

What is checked is read back as a user reads it: the job's task details, the Model Registry,
the endpoint, and a prediction through the SDK.
"""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import json
from pathlib import Path
from typing import Any

import pytest
from google.cloud import aiplatform
from google_cloud_pipeline_components.types.artifact_types import UnmanagedContainerModel
from google_cloud_pipeline_components.v1.batch_predict_job import ModelBatchPredictOp
from google_cloud_pipeline_components.v1.bigquery import BigqueryQueryJobOp
from google_cloud_pipeline_components.v1.custom_job import (
    CustomTrainingJobOp,
    create_custom_training_job_from_component,
)
from google_cloud_pipeline_components.v1.endpoint import (
    EndpointCreateOp,
    ModelDeployOp,
    ModelUndeployOp,
)
from google_cloud_pipeline_components.v1.model import ModelUploadOp
from kfp import dsl
from kfp.dsl import Dataset, Input

from tests.user_pipelines_test import IMAGE, run_pipeline, tasks
from vertexkit import runner
from vertexkit.components import (
    bigquery_export_dataset,
    custom_training_job,
    evaluate_model,
    upload_model,
)
from vertexkit.local import LocalCloud

PROJECT = "local-project"
BUCKET = f"gs://{PROJECT}{runner.PIPELINE_BUCKET_SUFFIX}"
SKLEARN_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-3:latest"
PENGUINS = "SELECT * FROM `bigquery-public-data.ml_datasets.penguins` WHERE sex IS NOT NULL"
INSTANCE = ["Biscoe", 45.1, 14.5, 215, 5000, "FEMALE"]  # feature_columns.json's order
GCPC_TASKS_A = ("train-penguins", "model-upload", "model-upload-2", "endpoint-create")


# -- (a) export -> GCPC custom job -> importer -> GCPC upload -> evaluate -> GCPC deploy ----------
@dsl.component(base_image=IMAGE)
def train_penguins(train: Input[Dataset], validation: Input[Dataset]) -> str:
    """Runs inside the GCPC custom job's replica: trains into the job's AIP_MODEL_DIR."""
    import os
    import subprocess
    import sys

    model_dir = os.environ["AIP_MODEL_DIR"]
    subprocess.run(
        [sys.executable, "-m", "tabular_trainer.task", "--training-data-uri", train.uri,
         "--validation-data-uri", validation.uri, "--model-dir", model_dir,
         "--n-estimators", "20"],
        check=True,
    )  # fmt: skip
    return model_dir


TRAINING_DIR_A = f"{BUCKET}/gcpc-a/training"
train_in_custom_job = create_custom_training_job_from_component(
    train_penguins, display_name="gcpc-train", base_output_directory=TRAINING_DIR_A
)


@dsl.pipeline(name="gcpc-mixed")
def mixed_pipeline(project: str, location: str = "us-central1") -> None:
    split = bigquery_export_dataset(
        project=project, gcs_prefix=f"{BUCKET}/gcpc-a/data", query=PENGUINS
    )
    train = train_in_custom_job(
        train=split.outputs["train"], validation=split.outputs["validation"]
    )
    unmanaged = dsl.importer(
        artifact_uri=f"{TRAINING_DIR_A}/model",
        artifact_class=UnmanagedContainerModel,
        metadata={"containerSpec": {"imageUri": SKLEARN_IMAGE}},
    ).after(train)
    first = ModelUploadOp(display_name="gcpc-penguins", unmanaged_container_model=unmanaged.output)
    second = ModelUploadOp(
        display_name="gcpc-penguins",
        unmanaged_container_model=unmanaged.output,
        parent_model=first.outputs["model"],
    )
    evaluate_model(
        project=project, location=location, model=second.outputs["model"],
        test_data=split.outputs["test"],
    )  # fmt: skip
    endpoint = EndpointCreateOp(display_name="gcpc-endpoint")
    ModelDeployOp(
        model=second.outputs["model"],
        endpoint=endpoint.outputs["endpoint"],
        traffic_split={"0": 100},
        dedicated_resources_machine_type="n1-standard-2",
        dedicated_resources_min_replica_count=1,
        dedicated_resources_max_replica_count=1,
    )


def gcp_resource_uris(task: dict[str, Any]) -> list[str]:
    raw = task["execution"]["metadata"]["output:gcp_resources"]
    return [resource["resourceUri"] for resource in json.loads(raw)["resources"]]


def test_gcpc_operators_run_beside_vertexkit_components(tmp_path: Path) -> None:
    run = run_pipeline(mixed_pipeline, tmp_path / "home")
    details = tasks(run)
    assert {t["state"] for t in details.values()} == {"SUCCEEDED"}, details.keys()
    for name in GCPC_TASKS_A:  # GCPC's gcp_resources, in the task details like ours
        uris = gcp_resource_uris(details[name])
        assert uris and all("aiplatform.googleapis.com/v1/projects/" in u for u in uris), uris
    with LocalCloud(home=tmp_path / "home") as cloud:
        cloud.context().init_aiplatform()
        [model] = aiplatform.Model.list(filter='display_name="gcpc-penguins"')
        assert model.version_id == "1" and len(model.versioning_registry.list_versions()) == 2
        version_2 = aiplatform.Model(f"{model.resource_name}@2")
        assert version_2.get_model_evaluation() is not None  # evaluate_model imported it
        [endpoint] = aiplatform.Endpoint.list(filter='display_name="gcpc-endpoint"')
        [deployed] = endpoint.list_models()
        assert deployed.model_version_id == "2"
        prediction = endpoint.predict(instances=[INSTANCE])
        assert prediction.predictions[0].split()[0] in ("Adelie", "Chinstrap", "Gentoo")


# -- (b) vertexkit training + upload -> GCPC deploy, beside GCPC's query and custom job ---------
@dsl.pipeline(name="gcpc-deploy")
def deploy_pipeline(project: str, location: str = "us-central1") -> None:
    snapshot = BigqueryQueryJobOp(
        query="SELECT COUNT(*) AS n FROM `bigquery-public-data.ml_datasets.penguins`",
        location="US",
    )
    CustomTrainingJobOp(
        display_name="gcpc-echo",
        worker_pool_specs=[
            {
                "machine_spec": {"machine_type": "n1-standard-4"},
                "replica_count": 1,
                "container_spec": {"image_uri": IMAGE, "command": ["python", "-c", "print(7)"]},
            }
        ],
    ).after(snapshot)
    split = bigquery_export_dataset(
        project=project, gcs_prefix=f"{BUCKET}/gcpc-b/data", query=PENGUINS
    )
    train = custom_training_job(
        project=project, location=location, display_name="train",
        base_output_directory=f"{BUCKET}/gcpc-b/training", trainer_dir="trainers/tabular",
        python_module="tabular_trainer.task", framework="sklearn",
        training_data=split.outputs["train"], validation_data=split.outputs["validation"],
    )  # fmt: skip
    model = upload_model(
        project=project, location=location, display_name="vk-penguins",
        model_dir=train.outputs["model"], framework="sklearn",
    )  # fmt: skip
    endpoint = EndpointCreateOp(display_name="gcpc-b-endpoint")
    deploy = ModelDeployOp(
        model=model.outputs["model"],
        endpoint=endpoint.outputs["endpoint"],
        dedicated_resources_machine_type="n1-standard-2",
        dedicated_resources_min_replica_count=1,
        dedicated_resources_max_replica_count=1,
    )
    ModelUndeployOp(model=model.outputs["model"], endpoint=endpoint.outputs["endpoint"]).after(
        deploy
    )
    ModelBatchPredictOp(
        job_display_name="gcpc-batch",
        model=model.outputs["model"],
        bigquery_source_input_uri="bq://bigquery-public-data.ml_datasets.penguins",
        instances_format="bigquery",
        predictions_format="bigquery",
        excluded_fields=["species"],
        bigquery_destination_output_uri=f"bq://{PROJECT}",
        machine_type="n1-standard-2",
    )


@pytest.fixture(scope="module")
def deploy_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gcpc-b") / "home"


@pytest.fixture(scope="module")
def deploy_run(deploy_home: Path) -> runner.FinishedRun:
    return run_pipeline(deploy_pipeline, deploy_home)


def test_vertexkit_model_deploys_and_undeploys_through_gcpc(
    deploy_run: runner.FinishedRun, deploy_home: Path
) -> None:
    details = tasks(deploy_run)
    assert {t["state"] for t in details.values()} == {"SUCCEEDED"}, details.keys()
    for task in ("model-deploy", "model-undeploy"):  # each names its operation
        [operation] = gcp_resource_uris(details[task])
        assert "/operations/" in operation, operation
    with LocalCloud(home=deploy_home) as cloud:
        cloud.context().init_aiplatform()
        [endpoint] = aiplatform.Endpoint.list(filter='display_name="gcpc-b-endpoint"')
        assert endpoint.list_models() == []  # ModelUndeployOp took back what ModelDeployOp made
        [model] = aiplatform.Model.list(filter='display_name="vk-penguins"')
        assert model.version_id == "1"


def test_gcpc_batch_prediction_scores_the_table(deploy_run: runner.FinishedRun) -> None:
    batch = tasks(deploy_run)["model-batch-predict"]
    [job] = gcp_resource_uris(batch)
    assert "/batchPredictionJobs/" in job
    [table] = batch["outputs"]["bigquery_output_table"]["artifacts"]
    assert table["metadata"]["tableId"] == "predictions", table


def test_gcpc_query_and_custom_job_land_on_the_local_cloud(
    deploy_run: runner.FinishedRun,
) -> None:
    details = tasks(deploy_run)
    [query_job] = gcp_resource_uris(details["bigquery-query-job"])
    assert "/bigquery/v2/projects/local-project/jobs/" in query_job
    [custom_job] = gcp_resource_uris(details["custom-training-job"])
    assert "/customJobs/" in custom_job
