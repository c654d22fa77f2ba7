"""Custom and tuning jobs through the real JobServiceClient against the local cloud."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1

from vertexkit.context import CloudContext
from vertexkit.runtime import training
from vertexkit.runtime.gcp_resources import find_vertex_resource
from vertexkit.runtime.jobs import JobFailedError
from vertexkit.runtime.training import StudyConfig, TrainingConfig
from vertexkit.specs import SpecError, images

# A trainer as a container command: writes metrics.json and a marker to AIP_MODEL_DIR through
# the real storage client (the local cloud's env reaches the job's processes).
WRITE_MODEL = """
import json, os
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage
uri = os.environ["AIP_MODEL_DIR"].rstrip("/")
bucket, _, prefix = uri[5:].partition("/")
client = storage.Client(project="p", credentials=AnonymousCredentials(),
                        client_options={"api_endpoint": os.environ["STORAGE_EMULATOR_HOST"]})
client.bucket(bucket).blob(prefix + "/metrics.json").upload_from_string(
    json.dumps({"accuracy": 0.93, "note": "text is skipped"}))
client.bucket(bucket).blob(prefix + "/seen.json").upload_from_string(json.dumps({
    "args": __import__("sys").argv[1:], "train": os.environ.get("AIP_TRAINING_DATA_URI")}))
"""
# A tuning trainer: the objective peaks at x = 3, reported the way Vertex reads it.
HYPERTUNE = """
import sys, hypertune
x = float([a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--x=")][0])
hypertune.HyperTune().report_hyperparameter_tuning_metric(
    hyperparameter_metric_tag="score", metric_value=-(x - 3.0) ** 2, global_step=1)
"""


@pytest.fixture
def bucket(cloud_context: CloudContext) -> str:
    name = f"jobs-{uuid.uuid4().hex[:8]}"
    cloud_context.storage_client().create_bucket(name)
    return name


def container_config(bucket: str, code: str, **overrides: object) -> TrainingConfig:
    settings: dict = {
        "display_name": "runtime-test",
        "base_output_directory": f"gs://{bucket}/out-{uuid.uuid4().hex[:6]}",
        "container_image_uri": "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest",
        "command": ["python", "-c", code],
        "machine_type": "n1-standard-4",
    }
    settings.update(overrides)
    return TrainingConfig(**settings)


def test_spec_carries_every_setting() -> None:
    config = TrainingConfig(
        display_name="full",
        base_output_directory="gs://bkt/run",
        container_image_uri="gcr.io/p/trainer:1",
        command=["python", "-m", "trainer.task"],
        args=["--epochs=3"],
        machine_type="n1-standard-8",
        accelerator_type="NVIDIA_TESLA_T4",
        accelerator_count=2,
        replica_count=3,
        reduction_server_replica_count=2,
        boot_disk_type="pd-standard",
        boot_disk_size_gb=200,
        env={"A": "1"},
        data_uris={"training": "gs://bkt/train/*.parquet", "test": "gs://bkt/test.csv"},
        service_account="sa@p.iam.gserviceaccount.com",
        network="projects/1/global/networks/n",
        encryption_spec_key_name="projects/p/locations/l/keyRings/r/cryptoKeys/k",
        timeout="3600s",
        restart_job_on_worker_restart=True,
        tensorboard="projects/p/locations/l/tensorboards/1",
        labels={"team": "ml"},
    )
    job = training.build_custom_job(None, config)
    spec = job["jobSpec"]
    chief, workers, reduction = spec["workerPoolSpecs"]
    assert chief["replicaCount"] == "1" and workers["replicaCount"] == "2"
    assert chief["machineSpec"] == {
        "machineType": "n1-standard-8",
        "acceleratorType": "NVIDIA_TESLA_T4",
        "acceleratorCount": 2,
    }
    assert chief["diskSpec"] == {"bootDiskType": "pd-standard", "bootDiskSizeGb": 200}
    assert chief["containerSpec"]["args"] == [
        "--epochs=3",
        "--training-data-uri=gs://bkt/train/*.parquet",
        "--test-data-uri=gs://bkt/test.csv",
    ]
    env = {e["name"]: e["value"] for e in chief["containerSpec"]["env"]}
    assert env == {"AIP_TRAINING_DATA_URI": "gs://bkt/train/*.parquet",
                   "AIP_TEST_DATA_URI": "gs://bkt/test.csv", "A": "1"}  # fmt: skip
    assert reduction["containerSpec"]["imageUri"] == images.image_tables().reduction_server_image
    assert "acceleratorType" not in reduction["machineSpec"]
    assert job["encryptionSpec"] == {"kmsKeyName": config.encryption_spec_key_name}
    assert spec["scheduling"] == {"timeout": "3600s", "restartJobOnWorkerRestart": True}
    assert spec["serviceAccount"] == config.service_account
    assert spec["network"] == config.network
    assert spec["tensorboard"] == config.tensorboard
    assert spec["baseOutputDirectory"] == {"outputUriPrefix": "gs://bkt/run"}
    # The JSON is what the API takes: it parses as the proto without unknown fields.
    aiplatform_v1.CustomJob.from_json(json.dumps(job))


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"container_image_uri": ""}, "container_image_uri"),
        ({"python_package_uris": ["gs://bkt/p.tar.gz"]}, "container_image_uri"),
        ({"base_output_directory": "/tmp/out"}, "base_output_directory"),
        ({"accelerator_type": "NVIDIA_TESLA_T4"}, "accelerator_count"),
        ({"boot_disk_type": "pd-balanced"}, "boot_disk_type"),
        ({"timeout": "1h"}, "timeout"),
        ({"replica_count": 0}, "replica_count"),
    ],
)
def test_bad_arguments_are_refused_naming_the_field(overrides: dict, field: str) -> None:
    config = container_config("bkt", "pass", **overrides)
    with pytest.raises(SpecError) as error:
        training.build_custom_job(None, config)
    assert error.value.field == field


def test_package_without_module_or_image_is_refused() -> None:
    config = container_config("bkt", "", container_image_uri="", python_package_uris=["gs://bkt/p"])
    with pytest.raises(SpecError, match="python_module"):
        training.build_custom_job(None, config)
    config.python_module = "trainer.task"
    with pytest.raises(SpecError, match="executor_image_uri"):
        training.build_custom_job(None, config)


def test_custom_job_runs_writes_gcp_resources_and_resumes(
    cloud_context: CloudContext, bucket: str, tmp_path: Path
) -> None:
    config = container_config(bucket, WRITE_MODEL, data_uris={"training": "gs://d/train.csv"})
    resources = tmp_path / "gcp_resources"
    first = training.run_custom_training(cloud_context, config, str(resources))
    assert first.model_dir == config.base_output_directory + "/model"
    assert first.metrics == {"accuracy": pytest.approx(0.93)}
    assert find_vertex_resource(resources, "CustomJob") == first.job_name
    seen = json.loads(
        cloud_context.storage_client()
        .bucket(bucket)
        .blob(first.model_dir.split("/", 3)[3] + "/seen.json")
        .download_as_text()
    )
    assert seen == {"args": ["--training-data-uri=gs://d/train.csv"], "train": "gs://d/train.csv"}

    second = training.run_custom_training(cloud_context, config, str(resources))
    assert second.job_name == first.job_name
    named = [
        job.name
        for job in cloud_context.job_client().list_custom_jobs(parent=cloud_context.parent)
        if job.display_name == "runtime-test" and job.name == first.job_name
    ]
    assert named == [first.job_name]


def test_failed_job_raises_with_its_error(cloud_context: CloudContext, bucket: str) -> None:
    config = container_config(bucket, "raise SystemExit('the trainer gave up: bad data')")
    with pytest.raises(JobFailedError, match="JOB_STATE_FAILED") as error:
        training.run_custom_training(cloud_context, config, None)
    assert "bad data" in str(error.value)


def test_retry_after_failure_runs_a_new_job(
    cloud_context: CloudContext, bucket: str, tmp_path: Path
) -> None:
    resources = tmp_path / "gcp_resources"
    failing = container_config(bucket, "raise SystemExit(3)")
    with pytest.raises(JobFailedError):
        training.run_custom_training(cloud_context, failing, str(resources))
    failed_job = find_vertex_resource(resources, "CustomJob")
    passing = container_config(bucket, WRITE_MODEL)
    result = training.run_custom_training(cloud_context, passing, str(resources))
    assert result.job_name != failed_job


SIGTERM_SCRIPT = """
import sys
from vertexkit.context import CloudContext
from vertexkit.runtime.training import TrainingConfig, run_custom_training
config = TrainingConfig(
    display_name="sleeper", base_output_directory=sys.argv[1],
    container_image_uri="us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest",
    command=["python", "-c", "import time; time.sleep(120)"])
run_custom_training(CloudContext.from_env(), config, sys.argv[2])
"""


def test_sigterm_cancels_the_running_job(
    cloud_context: CloudContext, bucket: str, tmp_path: Path
) -> None:
    resources = tmp_path / "gcp_resources"
    runner = subprocess.Popen(
        [sys.executable, "-c", SIGTERM_SCRIPT, f"gs://{bucket}/sleeper", str(resources)],
        env={**__import__("os").environ, **cloud_context.env()},
    )
    client = cloud_context.job_client()
    deadline = time.monotonic() + 60
    name = None
    while time.monotonic() < deadline:
        name = find_vertex_resource(resources, "CustomJob") if resources.exists() else None
        if (
            name
            and client.get_custom_job(name=name).state == aiplatform_v1.JobState.JOB_STATE_RUNNING
        ):
            break
        time.sleep(0.1)
    assert name, "the runtime never wrote gcp_resources"
    runner.send_signal(signal.SIGTERM)
    assert runner.wait(timeout=30) == 128 + signal.SIGTERM
    final = {
        aiplatform_v1.JobState.JOB_STATE_CANCELLED,
        aiplatform_v1.JobState.JOB_STATE_CANCELLING,
    }
    assert client.get_custom_job(name=name).state in final
    deadline = time.monotonic() + 30
    while client.get_custom_job(name=name).state != aiplatform_v1.JobState.JOB_STATE_CANCELLED:
        assert time.monotonic() < deadline, "the job never reached CANCELLED"
        time.sleep(0.2)


def test_study_parameters_compact_form() -> None:
    spec = training.build_study_spec(
        StudyConfig(
            metric_id="accuracy",
            goal="MAXIMIZE",
            parameters=[
                {"parameter_id": "depth", "type": "integer", "min": 2, "max": 8},
                {"parameter_id": "lr", "type": "double", "min": 0.01, "max": 0.3, "scale": "log"},
                {"parameter_id": "kind", "type": "categorical", "values": ["a", "b"]},
                {"parameter_id": "n", "type": "discrete", "values": [50, 100]},
            ],
        )
    )
    assert spec["parameters"] == [
        {"parameterId": "depth", "integerValueSpec": {"minValue": "2", "maxValue": "8"}},
        {
            "parameterId": "lr",
            "doubleValueSpec": {"minValue": 0.01, "maxValue": 0.3},
            "scaleType": "UNIT_LOG_SCALE",
        },
        {"parameterId": "kind", "categoricalValueSpec": {"values": ["a", "b"]}},
        {"parameterId": "n", "discreteValueSpec": {"values": [50.0, 100.0]}},
    ]
    aiplatform_v1.StudySpec.from_json(json.dumps(spec))
    with pytest.raises(SpecError, match="double, integer, categorical, discrete"):
        training.parameter_spec({"parameter_id": "x", "type": "float"}, 0)
    with pytest.raises(SpecError, match="MAXIMIZE, MINIMIZE"):
        training.build_study_spec(
            StudyConfig("m", "UP", [{"parameter_id": "x", "type": "discrete", "values": [1]}])
        )


def test_tuning_job_returns_the_best_of_its_trials(
    cloud_context: CloudContext, bucket: str, tmp_path: Path
) -> None:
    config = container_config(bucket, HYPERTUNE)
    study = StudyConfig(
        metric_id="score",
        goal="MAXIMIZE",
        parameters=[{"parameter_id": "x", "type": "double", "min": 0.5, "max": 6.0}],
        algorithm="RANDOM_SEARCH",
        max_trial_count=4,
        parallel_trial_count=2,
    )
    resources = tmp_path / "gcp_resources"
    result = training.run_tuning(cloud_context, config, study, str(resources))
    scores = [
        m["value"]
        for trial in result.trials
        for m in trial.get("finalMeasurement", {}).get("metrics", [])
    ]
    assert len(result.trials) == 4 and len(scores) == 4
    assert result.best_metric == pytest.approx(max(scores))
    assert result.best_metric == pytest.approx(-((result.best_parameters["x"] - 3.0) ** 2))
    assert result.best_model_dir == f"{config.base_output_directory}/{result.best_trial_id}/model"
    assert find_vertex_resource(resources, "HyperparameterTuningJob") == result.job_name


def test_python_package_spec_uses_the_prebuilt_training_image() -> None:
    config = TrainingConfig(
        display_name="pkg",
        base_output_directory="gs://bkt/run",
        python_package_uris=["gs://bkt/trainers/tabular-1.tar.gz"],
        python_module="tabular_trainer.task",
        framework="sklearn",
        args=["--framework=sklearn"],
    )
    pool = training.build_custom_job(None, config)["jobSpec"]["workerPoolSpecs"][0]
    package = pool["pythonPackageSpec"]
    assert package["packageUris"] == ["gs://bkt/trainers/tabular-1.tar.gz"]
    assert package["pythonModule"] == "tabular_trainer.task"
    assert "/vertex-ai/training/sklearn-cpu" in package["executorImageUri"]
    assert "containerSpec" not in pool


def test_trainer_folder_is_built_staged_and_run_as_a_python_package(
    cloud_context: CloudContext, bucket: str
) -> None:
    from palmerpenguins import load_penguins

    frame = load_penguins().dropna(subset=["species"])
    data = cloud_context.storage_client().bucket(bucket).blob("data/train.parquet")
    data.upload_from_string(frame.to_parquet(index=False))
    trainer_dir = Path(__file__).resolve().parents[2] / "trainers" / "tabular"
    config = TrainingConfig(
        display_name="package-trainer",
        base_output_directory=f"gs://{bucket}/package-run",
        trainer_dir=str(trainer_dir),
        python_module="tabular_trainer.task",
        framework="sklearn",
        data_uris={"training": f"gs://{bucket}/data/train.parquet"},
    )
    result = training.run_custom_training(cloud_context, config, None)
    job = cloud_context.job_client().get_custom_job(name=result.job_name)
    package = job.job_spec.worker_pool_specs[0].python_package_spec
    assert package.package_uris[0].startswith(f"gs://{bucket}/trainers/")
    assert result.metrics is not None and result.metrics["accuracy"] > 0.9


def package_config(**overrides: object) -> TrainingConfig:
    settings: dict = {
        "display_name": "pkg",
        "base_output_directory": "gs://bkt/run",
        "python_package_uris": ["gs://bkt/trainers/torch-1.tar.gz"],
        "python_module": "trainer.task",
        **overrides,
    }
    return TrainingConfig(**settings)


@pytest.mark.parametrize(
    ("framework", "version", "machine", "accelerator", "image"),
    [
        ("pytorch", "", "n1-standard-8", "NVIDIA_TESLA_T4", "pytorch-gpu.2-4.py310"),
        ("pytorch", "2.2", "n1-standard-8", "NVIDIA_TESLA_T4", "pytorch-gpu.2-2.py310"),
        ("pytorch", "", "n1-standard-8", "", "pytorch-xla.2-4.py310"),
        ("tensorflow", "2.15", "a2-highgpu-1g", "NVIDIA_TESLA_A100", "tf-gpu.2-15.py310"),
        ("xgboost", "", "n1-standard-8", "NVIDIA_TESLA_V100", "xgboost-gpu.2-1"),
    ],
    ids=["torch-t4-latest", "torch-2.2-t4", "torch-cpu", "tf-a100", "xgboost-v100"],
)
def test_framework_and_accelerator_pick_the_image(
    framework: str, version: str, machine: str, accelerator: str, image: str
) -> None:
    gpu = {"accelerator_type": accelerator, "accelerator_count": 1} if accelerator else {}
    config = package_config(
        framework=framework, framework_version=version, machine_type=machine, **gpu
    )
    pool = training.build_custom_job(None, config)["jobSpec"]["workerPoolSpecs"][0]
    assert pool["pythonPackageSpec"]["executorImageUri"].endswith(f"/training/{image}:latest")


def test_version_without_a_gpu_image_is_refused_before_staging(tmp_path: Path) -> None:
    # No CloudContext: staging the trainer folder would raise ValueError, so a SpecError proves
    # the image was refused before anything was built or uploaded.
    config = package_config(
        python_package_uris=[],
        trainer_dir=str(tmp_path),
        framework="sklearn",
        framework_version="0.23",
        machine_type="n1-standard-8",
        accelerator_type="NVIDIA_TESLA_T4",
        accelerator_count=1,
    )
    with pytest.raises(SpecError) as refused:
        training.build_custom_job(None, config)
    assert refused.value.field == "framework_version"
    assert "sklearn 0.23" in str(refused.value) and "NVIDIA_TESLA_T4 (GPU)" in str(refused.value)
