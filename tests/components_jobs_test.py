"""The job/model components chained in one pipeline under kfp.local against the local cloud."""

# No `from __future__ import annotations`: KFP reads the pipeline annotations as real types.

import json
import uuid
from pathlib import Path

import pytest
from kfp import dsl, local
from palmerpenguins import load_penguins

from vertexkit.components import (
    compare_models,
    custom_training_job,
    deploy_model,
    evaluate_model,
    hyperparameter_tuning_job,
    upload_model,
)
from vertexkit.context import CloudContext

FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
# A small trainer in the Vertex style: data from AIP_TRAINING_DATA_URI, model to AIP_MODEL_DIR.
TRAINER = """
import io, json, os, joblib, pandas as pd
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
options = {"endpoint_url": os.environ["STORAGE_EMULATOR_HOST"], "token": "anon"}
frame = pd.read_parquet(os.environ["AIP_TRAINING_DATA_URI"], storage_options=options)
features = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
model = make_pipeline(SimpleImputer(), StandardScaler(), LogisticRegression(max_iter=500))
model.fit(frame[features].to_numpy(), frame["species"])
import gcsfs
fs = gcsfs.GCSFileSystem(**options)
out = os.environ["AIP_MODEL_DIR"].rstrip("/")
with fs.open(out + "/model.joblib", "wb") as f:
    joblib.dump(model, f)
with fs.open(out + "/metrics.json", "w") as f:
    json.dump({"train_accuracy": model.score(frame[features].to_numpy(), frame["species"])}, f)
"""


@dsl.pipeline(name="jobs-chain")
def chain(base: str, train_uri: str, test_uri: str, model_name: str, endpoint_name: str):
    train = dsl.importer(artifact_uri=train_uri, artifact_class=dsl.Dataset, reimport=False)
    test = dsl.importer(artifact_uri=test_uri, artifact_class=dsl.Dataset, reimport=False)
    job = custom_training_job(
        display_name="chain-train",
        base_output_directory=base,
        container_image_uri="us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest",
        command=["python", "-c", TRAINER],
        training_data=train.output,
    )
    uploaded = upload_model(display_name=model_name, model_dir=job.outputs["model"])
    evaluated = evaluate_model(model=uploaded.outputs["model"], test_data=test.output)
    compared = compare_models(challenger=uploaded.outputs["model"]).after(evaluated)
    with dsl.If(compared.outputs["Output"] == True):  # noqa: E712 (a KFP condition)
        deploy_model(model=uploaded.outputs["model"], endpoint_display_name=endpoint_name)


@pytest.mark.slow
def test_train_upload_evaluate_compare_deploy(cloud_context: CloudContext, tmp_path: Path) -> None:
    bucket = f"chain-{uuid.uuid4().hex[:8]}"
    storage = cloud_context.storage_client()
    storage.create_bucket(bucket)
    frame = load_penguins().dropna(subset=["species"]).sample(frac=1.0, random_state=3)
    frame = frame[[*FEATURES, "species"]]
    storage.bucket(bucket).blob("data/train.parquet").upload_from_string(
        frame.iloc[:250].to_parquet(index=False)
    )
    storage.bucket(bucket).blob("data/test.parquet").upload_from_string(
        frame.iloc[250:].to_parquet(index=False)
    )
    local.init(
        runner=local.SubprocessRunner(use_venv=False),
        pipeline_root=str(tmp_path / "root"),
        raise_on_error=True,
    )
    model_name, endpoint_name = f"chain-{uuid.uuid4().hex[:6]}", f"ep-{uuid.uuid4().hex[:6]}"
    chain(
        base=f"gs://{bucket}/run",
        train_uri=f"gs://{bucket}/data/train.parquet",
        test_uri=f"gs://{bucket}/data/test.parquet",
        model_name=model_name,
        endpoint_name=endpoint_name,
    )
    models = list(
        cloud_context.model_client().list_models(
            request={"parent": cloud_context.parent, "filter": f'display_name="{model_name}"'}
        )
    )
    assert len(models) == 1
    evaluations = list(
        cloud_context.model_client().list_model_evaluations(parent=f"{models[0].name}@1")
    )
    assert len(evaluations) == 1
    accuracy = dict(evaluations[0].metrics)["accuracy"]
    assert accuracy > 0.9
    endpoints = list(
        cloud_context.endpoint_client().list_endpoints(
            request={"parent": cloud_context.parent, "filter": f'display_name="{endpoint_name}"'}
        )
    )
    assert len(endpoints) == 1
    deployed = [(d.model, d.model_version_id) for d in endpoints[0].deployed_models]
    assert deployed == [(models[0].name, "1")]
    reports = list((tmp_path / "root").rglob("report*"))
    assert reports and "Confusion matrix" in reports[0].read_text()
    resources = [json.loads(p.read_text()) for p in (tmp_path / "root").rglob("gcp_resources")]
    kinds = {r["resourceType"] for body in resources for r in body.get("resources", [])}
    assert {"CustomJob", "VertexLro", "ModelEvaluation", "Endpoint"} <= kinds


HYPERTUNE = """
import sys, hypertune
x = float([a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--x=")][0])
hypertune.HyperTune().report_hyperparameter_tuning_metric(
    hyperparameter_metric_tag="score", metric_value=-(x - 3.0) ** 2, global_step=1)
"""


def test_tuning_component_outputs_the_best_trial(
    cloud_context: CloudContext, tmp_path: Path
) -> None:
    bucket = f"tune-{uuid.uuid4().hex[:8]}"
    cloud_context.storage_client().create_bucket(bucket)
    local.init(
        runner=local.SubprocessRunner(use_venv=False),
        pipeline_root=str(tmp_path / "root"),
        raise_on_error=True,
    )
    task = hyperparameter_tuning_job(
        display_name="tune",
        base_output_directory=f"gs://{bucket}/tune",
        metric_id="score",
        goal="MAXIMIZE",
        parameters=[{"parameter_id": "x", "type": "double", "min": 0.5, "max": 6.0}],
        max_trial_count=3,
        parallel_trial_count=3,
        container_image_uri="us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest",
        command=["python", "-c", HYPERTUNE],
    )
    trials = json.loads((Path(task.outputs["trials"].path) / "trials.json").read_text())
    scores = [t["finalMeasurement"]["metrics"][0]["value"] for t in trials]
    assert len(scores) == 3
    assert task.outputs["best_metric"] == pytest.approx(max(scores))
    x = task.outputs["best_parameters"]["x"]
    assert task.outputs["best_metric"] == pytest.approx(-((x - 3.0) ** 2))
    assert task.outputs["best_model"].uri.startswith(f"gs://{bucket}/tune/")
