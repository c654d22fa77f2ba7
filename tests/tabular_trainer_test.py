"""The tabular trainer as a real process against the local cloud: data and model on gs://."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
import xgboost
from google.cloud import storage
from palmerpenguins import load_penguins

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud

BUCKET = "trainer-test"


@pytest.fixture(scope="module")
def penguin_uris(local_cloud: LocalCloud) -> dict[str, str]:
    """Penguins split 60/20/20: training as a folder of two Parquet files, validation as one
    Parquet file, test as CSV behind a `*` glob (the three shapes a dataset URI takes)."""
    ctx = local_cloud.context()
    client = ctx.storage_client()
    if not client.bucket(BUCKET).exists():
        client.create_bucket(BUCKET)
    frame = load_penguins().sample(frac=1.0, random_state=7).reset_index(drop=True)
    n = len(frame)
    training, validation, test = (
        frame.iloc[: int(n * 0.6)],
        frame.iloc[int(n * 0.6) : int(n * 0.8)],
        frame.iloc[int(n * 0.8) :],
    )
    options = ctx.storage_options()
    base = f"gs://{BUCKET}/penguins"
    half = len(training) // 2
    training.iloc[:half].to_parquet(f"{base}/train/part-0.parquet", storage_options=options)
    training.iloc[half:].to_parquet(f"{base}/train/part-1.parquet", storage_options=options)
    validation.to_parquet(f"{base}/validation.parquet", storage_options=options)
    test.to_csv(f"{base}/test/shard-000.csv", index=False, storage_options=options)
    return {
        "training": f"{base}/train",
        "validation": f"{base}/validation.parquet",
        "test": f"{base}/test/shard-*.csv",
        "test_frame": test,  # type: ignore[dict-item]
    }


def trainer_env(ctx: CloudContext, tmp_path: Path, run: str, uris: dict) -> dict[str, str]:
    return {
        **os.environ,
        **ctx.env(),
        "AIP_TRAINING_DATA_URI": uris["training"],
        "AIP_VALIDATION_DATA_URI": uris["validation"],
        "AIP_TEST_DATA_URI": uris["test"],
        "AIP_MODEL_DIR": f"gs://{BUCKET}/{run}/model/",
        "AIP_CHECKPOINT_DIR": f"gs://{BUCKET}/{run}/checkpoints/",
        "CLOUD_ML_HP_METRIC_FILE": str(tmp_path / run / "hypertune" / "output.metrics"),
    }


def run_trainer(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabular_trainer.task", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def read_json(client: storage.Client, uri: str) -> object:
    bucket, _, name = uri.removeprefix("gs://").partition("/")
    return json.loads(client.bucket(bucket).blob(name).download_as_bytes())


def download(client: storage.Client, uri: str, target: Path) -> Path:
    bucket, _, name = uri.removeprefix("gs://").partition("/")
    client.bucket(bucket).blob(name).download_to_filename(str(target))
    return target


def test_sklearn_model_serves_raw_rows_accurately(
    cloud_context: CloudContext, penguin_uris: dict, tmp_path: Path
) -> None:
    env = trainer_env(cloud_context, tmp_path, "sklearn", penguin_uris)
    result = run_trainer(
        env, "--framework=sklearn", "--n_estimators=60.0", "--max-depth=0", "--checkpoint-every=30"
    )
    assert result.returncode == 0, result.stderr
    client = cloud_context.storage_client()
    model_dir = env["AIP_MODEL_DIR"]
    columns = read_json(client, model_dir + "feature_columns.json")
    model = joblib.load(download(client, model_dir + "model.joblib", tmp_path / "model.joblib"))

    # Exactly what the prebuilt sklearn image does: predict(np.asarray(instances)) on JSON rows.
    test = penguin_uris["test_frame"]
    rows = test[columns].astype(object)
    instances = json.loads(json.dumps(rows.where(rows.notna(), None).values.tolist()))
    predicted = model.predict(np.asarray(instances))
    accuracy = float(np.mean(predicted == test["species"].to_numpy()))
    assert accuracy > 0.9, accuracy

    metrics = read_json(client, model_dir + "metrics.json")
    assert set(metrics) >= {"accuracy", "f1", "log_loss", "test_accuracy"}
    assert metrics["test_accuracy"] == pytest.approx(accuracy)
    assert len(model.steps[-1][1].estimators_) == 60

    # cloudml-hypertune's file, as a tuning job reads it.
    lines = Path(env["CLOUD_ML_HP_METRIC_FILE"]).read_text().splitlines()
    reported = json.loads(lines[-1])
    assert float(reported["accuracy"]) == pytest.approx(metrics["accuracy"])
    assert reported["global_step"] == "60"


def test_xgboost_writes_a_booster_the_prebuilt_image_serves(
    cloud_context: CloudContext, penguin_uris: dict, tmp_path: Path
) -> None:
    env = trainer_env(cloud_context, tmp_path, "xgboost", penguin_uris)
    result = run_trainer(env, "--framework", "xgboost", "--n-estimators", "30")
    assert result.returncode == 0, result.stderr
    client = cloud_context.storage_client()
    model_dir = env["AIP_MODEL_DIR"]
    blobs = {b.name.rsplit("/", 1)[-1] for b in client.list_blobs(BUCKET, prefix="xgboost/model/")}
    assert "model.bst" in blobs and "model.joblib" not in blobs  # exactly one artifact
    metadata = read_json(client, model_dir + "model_metadata.json")
    booster = xgboost.Booster(
        model_file=str(download(client, model_dir + "model.bst", tmp_path / "m.bst"))
    )
    preprocessor = joblib.load(
        download(client, model_dir + "preprocessor.joblib", tmp_path / "pre.joblib")
    )
    test = penguin_uris["test_frame"]
    raw = test[metadata["raw_feature_columns"]].astype(object)
    encoded = preprocessor.transform(raw.where(raw.notna(), None).to_numpy())
    # The prebuilt xgboost image: booster.predict(DMatrix(instances)) -> class probabilities.
    probabilities = booster.predict(xgboost.DMatrix(encoded.tolist()))
    predicted = np.asarray(metadata["classes"])[probabilities.argmax(axis=1)]
    assert float(np.mean(predicted == test["species"].to_numpy())) > 0.9
    assert len(read_json(client, model_dir + "feature_columns.json")) == encoded.shape[1]
    # the sample instance is a test row, encoded as the booster serves it
    sample = metadata["sample_instance"]
    assert len(sample) == encoded.shape[1] and sample in encoded.tolist()
    assert booster.predict(xgboost.DMatrix([sample])).shape == (1, len(metadata["classes"]))


def test_killed_run_resumes_from_its_last_checkpoint(
    cloud_context: CloudContext, penguin_uris: dict, tmp_path: Path
) -> None:
    env = trainer_env(cloud_context, tmp_path, "resume", penguin_uris)
    args = ["-m", "tabular_trainer.task", "--n-estimators=200", "--checkpoint-every=20"]
    client = cloud_context.storage_client()
    state_blob = client.bucket(BUCKET).blob("resume/checkpoints/checkpoint.json")
    process = subprocess.Popen(
        [sys.executable, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while not state_blob.exists():
            assert process.poll() is None, "the trainer ended before its first checkpoint"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)  # a VM restart gives no warning
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    killed_at = json.loads(state_blob.download_as_bytes())["rounds"]
    assert 0 < killed_at < 200
    assert not client.bucket(BUCKET).blob("resume/model/model.joblib").exists()

    result = run_trainer(env, *args[2:])
    assert result.returncode == 0, result.stderr
    resumed = [line for line in result.stderr.splitlines() if "resuming from checkpoint" in line]
    assert resumed, result.stderr
    # It resumed from a checkpoint written by the killed run (the first or a later one).
    rounds = int(resumed[0].split("(")[1].split()[0])
    assert rounds >= killed_at
    model = joblib.load(
        download(client, env["AIP_MODEL_DIR"] + "model.joblib", tmp_path / "resumed.joblib")
    )
    assert len(model.steps[-1][1].estimators_) == 200


def test_bad_arguments_fail_before_training(tmp_path: Path) -> None:
    env = {**os.environ, "AIP_MODEL_DIR": str(tmp_path / "model")}
    result = run_trainer(env, "--training-data-uri", str(tmp_path), "--model-type", "svm")
    assert result.returncode == 2
    assert "--model-type 'svm'" in result.stderr and "random_forest" in result.stderr
    result = run_trainer(env, "--training-data-uri", str(tmp_path), "--n_estimators=2.5")
    assert result.returncode == 2 and "whole number" in result.stderr
    missing = run_trainer(env, "--training-data-uri", str(tmp_path / "nothing.parquet"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    assert not (tmp_path / "model").exists()


def test_missing_label_column_names_the_columns(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).to_csv(path, index=False)
    env = {**os.environ, "AIP_MODEL_DIR": str(tmp_path / "model")}
    result = run_trainer(env, "--training-data-uri", str(path))
    assert result.returncode == 2
    assert "no label column 'species'" in result.stderr and "['a', 'b']" in result.stderr


@pytest.mark.parametrize(
    ("flags", "checkpointed"),
    [([], False), (["--checkpoint-every=25"], True)],
    ids=["default-cadence", "every-25-rounds"],
)
def test_a_short_run_writes_checkpoints_only_when_asked_for_every_n_rounds(
    cloud_context: CloudContext, penguin_uris: dict, tmp_path: Path, flags: list, checkpointed: bool
) -> None:
    """A run of a few seconds: by default no chunk comes CHECKPOINT_SECONDS after the last
    checkpoint (or the start), so none is written; --checkpoint-every writes one per chunk."""
    run = f"cadence-{len(flags)}"
    env = trainer_env(cloud_context, tmp_path, run, penguin_uris)
    result = run_trainer(env, "--framework=sklearn", "--model-type=random_forest", *flags)
    assert result.returncode == 0, result.stderr
    written = [b.name for b in cloud_context.storage_client().list_blobs(BUCKET, prefix=f"{run}/")]
    assert any(name.endswith("model/model.joblib") for name in written), written
    assert any("checkpoints/" in name for name in written) is checkpointed, written


def test_data_uris_resolve_as_fsspec_globs_them(tmp_path: Path) -> None:
    """A folder is every file under it; `*` and `?` stay inside one folder, `**` crosses them
    (fsspec's `AbstractFileSystem.glob`, which the trainer's URIs followed through gcsfs)."""
    from tabular_trainer.data import DataError, resolve_files

    for name in ["a/x.csv", "a/y.csv", "a/z.csv", "a/deep/z.csv", "a/_SUCCESS", "a/shard-1.csv"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("c\n1\n")
    base = str(tmp_path / "a")
    top = [f"{base}/{n}" for n in ["shard-1.csv", "x.csv", "y.csv", "z.csv"]]
    assert resolve_files(f"{base}/*.csv") == top
    assert resolve_files(f"{base}/**/z.csv") == [f"{base}/deep/z.csv", f"{base}/z.csv"]
    assert resolve_files(f"{base}/shard-?.csv") == [f"{base}/shard-1.csv"]
    assert resolve_files(base) == sorted(
        f"{base}/{n}" for n in ["deep/z.csv", "shard-1.csv", "x.csv", "y.csv", "z.csv"]
    )
    with pytest.raises(DataError, match="matches no data files"):
        resolve_files(f"{base}/*.parquet")
    with pytest.raises(DataError, match="no such file or directory"):
        resolve_files(f"{base}/missing.csv")
