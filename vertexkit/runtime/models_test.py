"""Upload, evaluate, compare and deploy through the real GAPIC clients against the local cloud."""

from __future__ import annotations

import io
import uuid
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from palmerpenguins import load_penguins
from sklearn import metrics as skm
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from vertexkit.context import CloudContext
from vertexkit.runtime import deployment, evaluation, models
from vertexkit.runtime.evaluation import Evaluation
from vertexkit.runtime.gcp_resources import find_vertex_resource
from vertexkit.specs import SpecError

FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
SKLEARN_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-3:latest"


@pytest.fixture(scope="module")
def penguins() -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = load_penguins().dropna(subset=["species"]).sample(frac=1.0, random_state=7)
    frame = frame[[*FEATURES, "species"]].reset_index(drop=True)
    return frame.iloc[:250], frame.iloc[250:].reset_index(drop=True)


@pytest.fixture
def bucket(cloud_context: CloudContext) -> str:
    name = f"models-{uuid.uuid4().hex[:8]}"
    cloud_context.storage_client().create_bucket(name)
    return name


def put(ctx: CloudContext, bucket: str, name: str, data: bytes) -> str:
    ctx.storage_client().bucket(bucket).blob(name).upload_from_string(data)
    return f"gs://{bucket}/{name}"


def train_and_stage(ctx: CloudContext, bucket: str, train: pd.DataFrame, c: float) -> tuple:
    model = make_pipeline(SimpleImputer(), StandardScaler(), LogisticRegression(C=c, max_iter=500))
    model.fit(train[FEATURES].to_numpy(), train["species"])
    buffer = io.BytesIO()
    joblib.dump(model, buffer)
    prefix = f"runs/{uuid.uuid4().hex[:6]}/model"
    put(ctx, bucket, f"{prefix}/model.joblib", buffer.getvalue())
    return model, f"gs://{bucket}/{prefix}"


def upload(ctx: CloudContext, name: str, artifact_uri: str, tmp: Path, **kw: object):
    config = models.UploadConfig(
        display_name=name, artifact_uri=artifact_uri, serving_image_uri=SKLEARN_IMAGE, **kw
    )
    return models.upload_model(ctx, config, str(tmp / f"upload-{uuid.uuid4().hex[:6]}"))


def test_upload_makes_versions_of_one_model(
    cloud_context: CloudContext, bucket: str, penguins: tuple, tmp_path: Path
) -> None:
    name = f"penguins-{uuid.uuid4().hex[:6]}"
    _, uri = train_and_stage(cloud_context, bucket, penguins[0], 1.0)
    resources = tmp_path / "gcp_resources"
    config = models.UploadConfig(
        display_name=name, artifact_uri=uri, serving_image_uri=SKLEARN_IMAGE, labels={"a": "b"}
    )
    first = models.upload_model(cloud_context, config, str(resources))
    assert first.versioned_name == f"{first.model_name}@1"
    assert find_vertex_resource(resources, "VertexLro")
    again = models.upload_model(cloud_context, config, str(resources))  # a retry: same upload
    assert again == first
    second = upload(cloud_context, name, uri, tmp_path, is_default_version=False,
                    version_aliases=["candidate"])  # fmt: skip
    assert second.model_name == first.model_name and second.version_id == "2"
    client = cloud_context.model_client()
    assert client.get_model(name=f"{first.model_name}@default").version_id == "1"
    assert client.get_model(name=f"{first.model_name}@candidate").version_id == "2"


def test_upload_refuses_bad_input_before_creating(cloud_context: CloudContext) -> None:
    with pytest.raises(SpecError, match="artifact_uri"):
        models.build_model(models.UploadConfig("m", "/local/dir", serving_image_uri="x"))
    with pytest.raises(SpecError, match="serving_image_uri"):
        models.build_model(models.UploadConfig("m", "gs://bkt/m"))


def test_evaluation_matches_sklearn_and_is_imported(
    cloud_context: CloudContext, bucket: str, penguins: tuple, tmp_path: Path
) -> None:
    train, test = penguins
    model, uri = train_and_stage(cloud_context, bucket, train, 1.0)
    uploaded = upload(cloud_context, f"eval-{uuid.uuid4().hex[:6]}", uri, tmp_path)
    test_uri = put(cloud_context, bucket, "data/test.parquet", test.to_parquet(index=False))
    resources = tmp_path / "eval_resources"

    result, html = evaluation.evaluate_model(
        cloud_context, uploaded.versioned_name, test_uri, "species", gcp_resources=str(resources)
    )

    features = test[FEATURES].to_numpy()
    truth, predicted = test["species"], model.predict(features)
    probabilities = model.predict_proba(features)
    assert result.row_count == len(test)
    assert result.metrics["accuracy"] == pytest.approx(skm.accuracy_score(truth, predicted))
    assert result.metrics["f1Score"] == pytest.approx(
        skm.f1_score(truth, predicted, average="macro")
    )
    assert result.metrics["logLoss"] == pytest.approx(skm.log_loss(truth, probabilities))
    assert result.metrics["auRoc"] == pytest.approx(
        skm.roc_auc_score(truth, probabilities, multi_class="ovr")
    )
    assert np.array_equal(result.confusion_matrix, skm.confusion_matrix(truth, predicted))
    assert html.count("data:image/png;base64,") == 3
    stored = models.evaluation_metrics(cloud_context, uploaded.versioned_name)
    assert stored is not None
    assert stored["accuracy"] == pytest.approx(result.metrics["accuracy"])
    assert find_vertex_resource(resources, "ModelEvaluation")


def test_regression_metrics_match_sklearn() -> None:
    truth, predicted = [3.0, 5.0, 2.5, 7.0], [2.5, 5.0, 4.0, 8.0]
    result = evaluation.regression_metrics(truth, predicted)
    assert result.metrics["rootMeanSquaredError"] == pytest.approx(
        np.sqrt(skm.mean_squared_error(truth, predicted))
    )
    assert result.metrics["meanAbsoluteError"] == pytest.approx(0.75)
    assert result.metrics["rSquared"] == pytest.approx(skm.r2_score(truth, predicted))
    assert "Residuals" in evaluation.html_report(result, "m@1")


def scored(ctx: CloudContext, version: models.UploadedModel, **values: float) -> None:
    """Imports an evaluation with chosen values: the comparison is what is under test."""
    evaluation.import_evaluation(
        ctx, version.versioned_name, Evaluation("classification", values), None
    )


def test_compare_promotes_only_a_real_improvement_in_both_directions(
    cloud_context: CloudContext, bucket: str, penguins: tuple, tmp_path: Path
) -> None:
    name = f"compare-{uuid.uuid4().hex[:6]}"
    _, uri = train_and_stage(cloud_context, bucket, penguins[0], 1.0)
    v1 = upload(cloud_context, name, uri, tmp_path)
    scored(cloud_context, v1, accuracy=0.80, logLoss=0.50)
    alone = models.compare_and_promote(cloud_context, v1.versioned_name, "accuracy")
    assert alone.promoted and "no champion" in alone.reason

    v2 = upload(cloud_context, name, uri, tmp_path, is_default_version=False)
    scored(cloud_context, v2, accuracy=0.90, logLoss=0.60)
    worse_loss = models.compare_and_promote(
        cloud_context, v2.versioned_name, "log_loss", "minimize"
    )
    assert not worse_loss.promoted and worse_loss.champion == v1.versioned_name
    assert cloud_context.model_client().get_model(name=f"{v1.model_name}@default").version_id == "1"
    too_small = models.compare_and_promote(
        cloud_context, v2.versioned_name, "accuracy", min_improvement=0.2
    )
    assert not too_small.promoted and "below the required 0.2" in too_small.reason
    better = models.compare_and_promote(cloud_context, v2.versioned_name, "accuracy", "maximize")
    assert better.promoted and better.champion_value == pytest.approx(0.80)
    assert cloud_context.model_client().get_model(name=f"{v1.model_name}@default").version_id == "2"

    v3 = upload(cloud_context, name, uri, tmp_path, is_default_version=False)
    scored(cloud_context, v3, accuracy=0.85, logLoss=0.40)
    lower_accuracy = models.compare_and_promote(cloud_context, v3.versioned_name, "accuracy")
    assert not lower_accuracy.promoted and lower_accuracy.champion == v2.versioned_name
    lower_loss = models.compare_and_promote(
        cloud_context, v3.versioned_name, "log_loss", "minimize"
    )
    assert lower_loss.promoted
    assert cloud_context.model_client().get_model(name=f"{v1.model_name}@default").version_id == "3"
    with pytest.raises(SpecError, match="maximize, minimize"):
        models.compare_and_promote(cloud_context, v3.versioned_name, "accuracy", "up")


def test_deploy_canary_then_full_rollout_retires_old_versions(
    cloud_context: CloudContext, bucket: str, penguins: tuple, tmp_path: Path
) -> None:
    name = f"deploy-{uuid.uuid4().hex[:6]}"
    _, uri = train_and_stage(cloud_context, bucket, penguins[0], 1.0)
    versions = [upload(cloud_context, name, uri, tmp_path) for _ in range(3)]
    endpoint_name = f"ep-{uuid.uuid4().hex[:6]}"

    def deploy(version: models.UploadedModel, percentage: int) -> deployment.Deployment:
        config = deployment.DeployConfig(
            endpoint_name, version.versioned_name, traffic_percentage=percentage
        )
        return deployment.deploy_model(
            cloud_context, config, str(tmp_path / f"deploy-{uuid.uuid4().hex[:6]}")
        )

    first = deploy(versions[0], 100)
    assert first.traffic_split == {first.deployed_model_id: 100}
    canary = deploy(versions[1], 20)
    assert canary.endpoint_name == first.endpoint_name
    assert canary.traffic_split == {first.deployed_model_id: 80, canary.deployed_model_id: 20}
    assert canary.undeployed == []
    full = deploy(versions[2], 100)
    assert full.traffic_split == {full.deployed_model_id: 100}
    assert sorted(full.undeployed) == sorted([first.deployed_model_id, canary.deployed_model_id])
    answer = cloud_context.prediction_client().predict(
        endpoint=full.endpoint_name, instances=[[39.1, 18.7, 181.0, 3750.0]]
    )
    assert list(answer.predictions) == ["Adelie"]
    with pytest.raises(SpecError, match="traffic_percentage"):
        deployment.validate_config(deployment.DeployConfig("e", "m@1", traffic_percentage=120))
