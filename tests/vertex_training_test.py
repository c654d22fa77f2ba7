"""Custom and tuning jobs through the high-level `google.cloud.aiplatform` SDK, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from google.cloud import aiplatform
from google.cloud.aiplatform import hyperparameter_tuning as hpt
from google.cloud.aiplatform import jobs as sdk_jobs

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.vertex.store import ResourceStore
from vertexkit.local.vertex.training.packages import default_root, environment_key

TESTDATA = Path(__file__).parents[1] / "vertexkit/local/vertex/training/testdata"
PREBUILT_SKLEARN = "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest"


@pytest.fixture
def sdk(cloud_context: CloudContext, monkeypatch: pytest.MonkeyPatch) -> CloudContext:
    # The SDK polls a job every 5 s; jobs here take about a second, so poll faster.
    monkeypatch.setattr(sdk_jobs, "_JOB_WAIT_TIME", 0.1)
    cloud_context.init_aiplatform(staging_bucket="gs://vertexkit-staging")
    return cloud_context


@pytest.fixture
def storage_api(local_cloud: LocalCloud) -> LocalCloud:
    """Tests whose trainers read or write gs:// through the Cloud Storage JSON API."""
    return local_cloud


def script_pool(script: str, *args: str, replicas: int = 1) -> dict:
    return {
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": replicas,
        "container_spec": {
            "image_uri": "us-docker.pkg.dev/my-project/trainers/app:latest",
            "command": ["python", str(TESTDATA / script)],
            "args": list(args),
        },
    }


def test_custom_job_run_with_container_spec(sdk: CloudContext, tmp_path: Path) -> None:
    out = tmp_path / "env.json"
    job = aiplatform.CustomJob(
        display_name="sdk-container",
        worker_pool_specs=[script_pool("env_dump.py", str(out))],
        base_output_dir="gs://vertexkit-out/sdk-container",
    )
    job.run(timeout=60)
    assert job.state.name == "JOB_STATE_SUCCEEDED"
    env = json.loads(out.read_text())["env"]
    assert env["AIP_MODEL_DIR"] == "gs://vertexkit-out/sdk-container/model/"


def test_custom_job_failure_raises_with_log_tail(sdk: CloudContext) -> None:
    job = aiplatform.CustomJob(display_name="sdk-fail", worker_pool_specs=[script_pool("fail.py")])
    with pytest.raises(RuntimeError, match=r"gs://nowhere/data\.csv"):
        job.run()
    assert job.state.name == "JOB_STATE_FAILED"


def build_sdist(tmp_path: Path, module_source: str) -> Path:
    """A tiny `trainer` package as a real sdist, built with setuptools (as the SDK does)."""
    root = tmp_path / "pkg"
    (root / "trainer").mkdir(parents=True)
    (root / "trainer" / "__init__.py").write_text("")
    (root / "trainer" / "task.py").write_text(textwrap.dedent(module_source))
    (root / "setup.py").write_text(
        "from setuptools import setup, find_packages\n"
        "setup(name='tiny-trainer', version='0.1', packages=find_packages())\n"
    )
    subprocess.run(
        [sys.executable, "setup.py", "-q", "sdist", "--formats=gztar"],
        cwd=root, check=True, capture_output=True,
    )  # fmt: skip
    return next((root / "dist").glob("*.tar.gz"))


def test_python_package_spec_installs_and_runs(
    sdk: CloudContext, local_cloud: LocalCloud, tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    sdist = build_sdist(
        tmp_path,
        """
        import json, os, sys
        seen = {"args": sys.argv[1:], "job": os.environ["CLOUD_ML_JOB_ID"]}
        json.dump(seen, open(sys.argv[1], "w"))
        """,
    )
    storage = local_cloud.services[0]
    storage.ensure_bucket("vertexkit-staging")
    storage.write_object("vertexkit-staging", "pkgs/tiny.tar.gz", sdist)
    spec = {
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": 1,
        "python_package_spec": {
            "executor_image_uri": PREBUILT_SKLEARN,
            "package_uris": ["gs://vertexkit-staging/pkgs/tiny.tar.gz"],
            "python_module": "trainer.task",
            "args": [str(out), "--alpha=0.1"],
        },
    }
    marker = default_root() / environment_key(
        [storage.object_path("vertexkit-staging", "pkgs/tiny.tar.gz")]
    )
    built_at = []
    for _ in range(2):  # the second job reuses the cached install
        job = aiplatform.CustomJob(display_name="sdk-package", worker_pool_specs=[spec])
        job.run()
        built_at.append((marker / ".complete").stat().st_mtime_ns)
    assert json.loads(out.read_text())["args"] == [str(out), "--alpha=0.1"]
    assert built_at[0] == built_at[1], "the second job installed the package again"


def test_missing_package_uri_fails_job(sdk: CloudContext) -> None:
    spec = {
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": 1,
        "python_package_spec": {
            "executor_image_uri": PREBUILT_SKLEARN,
            "package_uris": ["gs://vertexkit-staging/absent.tar.gz"],
            "python_module": "trainer.task",
        },
    }
    job = aiplatform.CustomJob(display_name="sdk-missing", worker_pool_specs=[spec])
    with pytest.raises(RuntimeError, match=r"absent\.tar\.gz does not exist"):
        job.run()


def objective_job(*extra_args: str) -> aiplatform.CustomJob:
    return aiplatform.CustomJob(
        display_name="objective",
        worker_pool_specs=[script_pool("objective.py", *extra_args)],
        base_output_dir="gs://vertexkit-out/tuning",
    )


def objective_study(display_name: str, seed: str) -> aiplatform.HyperparameterTuningJob:
    """8 trials, 2 at a time, over the three parameters the objective trainer scores."""
    return aiplatform.HyperparameterTuningJob(
        display_name=display_name,
        custom_job=objective_job(),
        metric_spec={"score": "maximize"},
        parameter_spec={
            "lr": hpt.DoubleParameterSpec(min=1e-5, max=1.0, scale="log"),
            "depth": hpt.IntegerParameterSpec(min=1, max=12, scale="linear"),
            "optimizer": hpt.CategoricalParameterSpec(values=["sgd", "adam"]),
        },
        max_trial_count=8,
        parallel_trial_count=2,
        labels={"vertexkit-seed": seed},
    )


def test_tuning_job_finds_better_parameters(sdk: CloudContext) -> None:
    tuning = objective_study("tune-objective", seed="3")
    tuning.run()
    trials = tuning.trials
    assert len(trials) == 8
    assert all(t.state.name == "SUCCEEDED" for t in trials)
    scores = [t.final_measurement.metrics[0].value for t in trials]
    assert max(scores) > min(scores)
    for trial in trials:
        params = {p.parameter_id: p.value for p in trial.parameters}
        assert 1e-5 <= params["lr"] <= 1.0 and params["optimizer"] in ("sgd", "adam")
        expected = -((__import__("math").log10(params["lr"]) + 2) ** 2)
        expected += -((params["depth"] - 6) ** 2) / 10 + (
            0.5 if params["optimizer"] == "adam" else 0
        )
        # BEST_MEASUREMENT (the SDK's default) picks the second, higher report.
        assert trial.final_measurement.metrics[0].value == pytest.approx(expected)
        assert trial.final_measurement.step_count == 2


def test_seeded_parallel_study_is_reproducible(sdk: CloudContext) -> None:
    """Same seed label, two trials at a time: the same suggestions in the same order, however
    the trial processes happen to finish (TPE's later suggestions depend on earlier results)."""

    def suggestions() -> list[dict]:
        tuning = objective_study("tune-reproducible", seed="11")
        tuning.run()
        ordered = sorted(tuning.trials, key=lambda trial: int(trial.id))
        return [{p.parameter_id: p.value for p in t.parameters} for t in ordered]

    first = suggestions()
    assert len(first) == 8 and len({json.dumps(s, sort_keys=True) for s in first}) == 8
    assert suggestions() == first


def test_zero_bounds_are_read_as_zero_not_missing(sdk: CloudContext) -> None:
    """proto3 JSON leaves `minValue: 0` out of the request; it still bounds the search."""
    tuning = aiplatform.HyperparameterTuningJob(
        display_name="tune-zero-bounds",
        custom_job=objective_job("--lr=0.01"),
        metric_spec={"score": "maximize"},
        parameter_spec={
            "momentum": hpt.DoubleParameterSpec(min=0, max=0.9, scale="linear"),
            "depth": hpt.IntegerParameterSpec(min=0, max=12, scale="linear"),
        },
        max_trial_count=3,
        parallel_trial_count=3,
    )
    tuning.run()
    assert tuning.state.name == "JOB_STATE_SUCCEEDED"
    assert len(tuning.trials) == 3 and all(t.state.name == "SUCCEEDED" for t in tuning.trials)
    for trial in tuning.trials:
        params = {p.parameter_id: p.value for p in trial.parameters}
        assert 0 <= params["momentum"] <= 0.9 and 0 <= params["depth"] <= 12


def test_tuning_job_fails_after_too_many_failed_trials(sdk: CloudContext) -> None:
    tuning = aiplatform.HyperparameterTuningJob(
        display_name="tune-failing",
        custom_job=objective_job("--lr=0.1", "--no_report"),
        metric_spec={"score": "maximize"},
        parameter_spec={"depth": hpt.IntegerParameterSpec(min=1, max=12, scale="linear")},
        max_trial_count=6,
        parallel_trial_count=2,
        max_failed_trial_count=1,
    )
    with pytest.raises(RuntimeError, match="more than maxFailedTrialCount"):
        tuning.run()
    trials = tuning.trials
    assert trials and all(t.state.name == "INFEASIBLE" for t in trials)
    assert "reported no value" in tuning.gca_resource.error.message


def test_grid_search_with_double_parameter_is_rejected(sdk: CloudContext) -> None:
    tuning = aiplatform.HyperparameterTuningJob(
        display_name="tune-grid",
        custom_job=objective_job(),
        metric_spec={"score": "maximize"},
        parameter_spec={"lr": hpt.DoubleParameterSpec(min=1e-5, max=1.0, scale="log")},
        max_trial_count=4,
        parallel_trial_count=1,
        search_algorithm="grid",
    )
    with pytest.raises(Exception, match="GRID_SEARCH needs"):
        tuning.run()


def test_grid_search_covers_the_grid(sdk: CloudContext) -> None:
    tuning = aiplatform.HyperparameterTuningJob(
        display_name="tune-grid-ok",
        custom_job=objective_job("--lr=0.01"),
        metric_spec={"score": "maximize"},
        parameter_spec={
            "depth": hpt.DiscreteParameterSpec(values=[4, 6, 8], scale="linear"),
            "optimizer": hpt.CategoricalParameterSpec(values=["sgd", "adam"]),
        },
        max_trial_count=20,
        parallel_trial_count=3,
        search_algorithm="grid",
    )
    tuning.run()
    combos = {
        tuple(sorted((p.parameter_id, str(p.value)) for p in t.parameters)) for t in tuning.trials
    }
    assert len(tuning.trials) == 6 and len(combos) == 6


def test_restart_of_local_cloud_fails_running_job(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with LocalCloud(home=home) as cloud:
        client = cloud.context().job_client()
        pids = tmp_path / "pids"
        job = client.create_custom_job(
            parent=cloud.context().parent,
            custom_job={"display_name": "long", "job_spec": {"worker_pool_specs": [
                script_pool("sleeper.py", str(pids))]}},
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while not pids.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    # An unclean stop (the process died): a job still marked RUNNING in the state file.
    store = ResourceStore(home / "vertex" / "vertex.sqlite")
    orphan = job.name.rsplit("/", 1)[0] + "/999"  # as Vertex names it: the project's number
    stored = "/".join(["projects", cloud.project, *orphan.split("/")[2:]])  # the store's key
    store.insert("customJobs", stored, {"name": stored, "state": "JOB_STATE_RUNNING"})
    store.close()
    with LocalCloud(home=home) as cloud:
        client = cloud.context().job_client()
        for name in (job.name, orphan):
            restarted = client.get_custom_job(name=name)
            assert restarted.state.name == "JOB_STATE_FAILED"
            assert "local cloud stopped while the job was running" in restarted.error.message


def test_restart_on_worker_restart_resumes_from_checkpoint(
    sdk: CloudContext, storage_api: LocalCloud
) -> None:
    storage_api.services[0].ensure_bucket("vertexkit-out")
    job = aiplatform.CustomJob(
        display_name="resume",
        worker_pool_specs=[script_pool("checkpointing.py")],
        base_output_dir="gs://vertexkit-out/resume",
    )
    job.run(restart_job_on_worker_restart=True)
    result = json.loads(
        storage_api.services[0].read_object("vertexkit-out", "resume/model/result.json")
    )
    assert result == {"resumed_from": 3, "final_step": 6}


def test_crash_without_restart_fails(sdk: CloudContext, storage_api: LocalCloud) -> None:
    storage_api.services[0].ensure_bucket("vertexkit-out")
    job = aiplatform.CustomJob(
        display_name="no-resume",
        worker_pool_specs=[script_pool("checkpointing.py")],
        base_output_dir="gs://vertexkit-out/no-resume",
    )
    with pytest.raises(RuntimeError, match="simulated worker crash"):
        job.run()


def test_from_local_script_trains_penguins_model(
    sdk: CloudContext, storage_api: LocalCloud, tmp_path: Path
) -> None:
    import joblib
    import palmerpenguins

    client = sdk.storage_client()
    for bucket in ("vertexkit-staging", "vertexkit-out"):
        if client.lookup_bucket(bucket) is None:
            client.create_bucket(bucket)
    # The trainer reads the penguins table from the local BigQuery with its own client.
    job = aiplatform.CustomJob.from_local_script(
        display_name="penguins",
        script_path=str(TESTDATA / "penguins_trainer.py"),
        container_uri=PREBUILT_SKLEARN,
        args=["--table=bigquery-public-data.ml_datasets.penguins", "--C=0.5"],
        base_output_dir="gs://vertexkit-out/penguins",
    )
    job.run()
    local_model = tmp_path / "model.joblib"
    blob = client.bucket("vertexkit-out").blob("penguins/model/model.joblib")
    blob.download_to_filename(local_model)
    model = joblib.load(local_model)
    # Scored on the palmerpenguins package's copy, named as on BigQuery.
    penguins = palmerpenguins.load_penguins().rename(
        columns={"bill_length_mm": "culmen_length_mm", "bill_depth_mm": "culmen_depth_mm"}
    )
    features = ["culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"]
    known = penguins.dropna(subset=[*features, "species"])
    predicted = model.predict(known[features])
    # BigQuery's species names are the long ones ("Adelie Penguin (Pygoscelis adeliae)").
    accuracy = (
        [label.split()[0].lower() for label in predicted] == known["species"].str.lower().to_numpy()
    ).mean()
    assert accuracy > 0.9
