"""Training pipelines through the high-level SDK: CustomTrainingJob, CustomPythonPackageTrainingJob
and CustomContainerTrainingJob `.run()` against the local cloud, as a Vertex user writes them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform, aiplatform_v1
from google.cloud.aiplatform import training_jobs

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.vertex.store import ResourceStore

TESTDATA = Path(__file__).parents[1] / "vertexkit/local/vertex/training/testdata"
TRAIN_IMAGE = "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest"
SERVE_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest"
CUSTOM_TASK = "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"
# A penguin the classifier has no doubt about, and its species as BigQuery names it.
ADELIE = [39.1, 18.7, 181.0, 3750.0]


@pytest.fixture
def sdk(cloud_context: CloudContext, monkeypatch: pytest.MonkeyPatch) -> CloudContext:
    # The SDK polls a pipeline every 5 s; these take a few seconds, so poll faster.
    monkeypatch.setattr(training_jobs, "_JOB_WAIT_TIME", 0.1)
    client = cloud_context.storage_client()
    for bucket in ("vertexkit-staging", "vertexkit-out"):
        if client.lookup_bucket(bucket) is None:
            client.create_bucket(bucket)
    cloud_context.init_aiplatform(staging_bucket="gs://vertexkit-staging")
    return cloud_context


def test_custom_training_job_from_a_script_deploys_and_predicts(sdk: CloudContext) -> None:
    job = aiplatform.CustomTrainingJob(
        display_name="penguins-script",
        script_path=str(TESTDATA / "penguins_trainer.py"),
        container_uri=TRAIN_IMAGE,
        model_serving_container_image_uri=SERVE_IMAGE,
    )
    model = job.run(
        args=["--table=bigquery-public-data.ml_datasets.penguins"],
        replica_count=1,
        machine_type="n1-standard-4",
        base_output_dir="gs://vertexkit-out/penguins-script",
        model_display_name="penguins-from-script",
        model_labels={"source": "script"},
    )
    assert job.state.name == "PIPELINE_STATE_SUCCEEDED"
    resource = job.gca_resource
    assert resource.training_task_definition == CUSTOM_TASK
    backing = resource.training_task_metadata["backingCustomJob"]
    assert aiplatform.CustomJob.get(backing).state.name == "JOB_STATE_SUCCEEDED"
    assert resource.model_to_upload.name == model.resource_name
    assert model.display_name == "penguins-from-script" and model.labels == {"source": "script"}
    assert model.uri == "gs://vertexkit-out/penguins-script/model"
    assert model.container_spec.image_uri == SERVE_IMAGE
    endpoint = model.deploy(machine_type="n1-standard-2")
    try:
        prediction = endpoint.predict(instances=[ADELIE]).predictions[0]
        assert prediction.startswith("Adelie")
    finally:
        endpoint.undeploy_all()
        endpoint.delete()


TINY_TRAINER = """
import os, sys, tempfile
import joblib
from google.cloud import storage
from sklearn.tree import DecisionTreeClassifier

# Two clusters of penguin measurements; enough for a model that serves.
X = [[39.1, 18.7, 181.0, 3750.0], [38.6, 21.2, 193.0, 3800.0],
     [46.1, 13.2, 211.0, 4500.0], [50.0, 16.3, 230.0, 5700.0]]
y = ["Adelie", "Adelie", "Gentoo", "Gentoo"]
model = DecisionTreeClassifier(random_state=0).fit(X, y)
print("trained with args", sys.argv[1:], "job", os.environ["CLOUD_ML_JOB_ID"])
bucket, _, prefix = os.environ["AIP_MODEL_DIR"].removeprefix("gs://").partition("/")
with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, "model.joblib")
    joblib.dump(model, path)
    storage.Client().bucket(bucket).blob(prefix + "model.joblib").upload_from_filename(path)
"""


@pytest.fixture
def tiny_trainer(tmp_path: Path) -> Path:
    script = tmp_path / "tiny_trainer.py"
    script.write_text(TINY_TRAINER)
    return script


def staged_package(sdk: CloudContext, tmp_path: Path, source: str, name: str) -> str:
    """A `trainer` package as a real sdist (built with setuptools), staged on gs://."""
    root = tmp_path / "pkg"
    (root / "trainer").mkdir(parents=True)
    (root / "trainer" / "__init__.py").write_text("")
    (root / "trainer" / "task.py").write_text(source)
    (root / "setup.py").write_text(
        "from setuptools import setup, find_packages\n"
        f"setup(name='{name}', version='0.1', packages=find_packages())\n"
    )
    subprocess.run(
        [sys.executable, "setup.py", "-q", "sdist", "--formats=gztar"],
        cwd=root, check=True, capture_output=True,
    )  # fmt: skip
    sdist = next((root / "dist").glob("*.tar.gz"))
    blob = sdk.storage_client().bucket("vertexkit-staging").blob(f"packages/{sdist.name}")
    blob.upload_from_filename(str(sdist))
    return f"gs://vertexkit-staging/packages/{sdist.name}"


def test_python_package_job_with_model_id_then_a_new_version(
    sdk: CloudContext, tmp_path: Path
) -> None:
    package = staged_package(sdk, tmp_path, TINY_TRAINER, "tiny-pipeline-trainer")
    model_id = f"tiny-{time.time_ns()}"

    def package_job(name: str) -> aiplatform.CustomPythonPackageTrainingJob:
        return aiplatform.CustomPythonPackageTrainingJob(
            display_name=name,
            python_package_gcs_uri=package,
            python_module_name="trainer.task",
            container_uri=TRAIN_IMAGE,
            model_serving_container_image_uri=SERVE_IMAGE,
        )

    first = package_job("tiny-package").run(
        model_id=model_id, args=["--depth=2"], base_output_dir="gs://vertexkit-out/tiny-1"
    )
    assert first.name == model_id and first.version_id == "1"
    assert list(first.version_aliases) == ["default"]
    job = package_job("tiny-package-v2")
    second = job.run(
        parent_model=first.resource_name,
        model_version_aliases=["challenger"],
        is_default_version=False,
        base_output_dir="gs://vertexkit-out/tiny-2",
    )
    assert second.resource_name == first.resource_name and second.version_id == "2"
    assert list(second.version_aliases) == ["challenger"]
    assert job.gca_resource.parent_model == first.resource_name
    assert second.uri == "gs://vertexkit-out/tiny-2/model"
    assert aiplatform.Model(model_id).version_id == "1"  # the default did not move


def test_container_job_runs_its_command(sdk: CloudContext, tiny_trainer: Path) -> None:
    job = aiplatform.CustomContainerTrainingJob(
        display_name="tiny-container",
        container_uri="us-docker.pkg.dev/my-project/trainers/tiny:latest",
        command=["python", str(tiny_trainer)],
        model_serving_container_image_uri=SERVE_IMAGE,
    )
    model = job.run(args=["--epochs=1"], base_output_dir="gs://vertexkit-out/tiny-container")
    assert job.state.name == "PIPELINE_STATE_SUCCEEDED"
    backing = aiplatform.CustomJob.get(job.gca_resource.training_task_metadata["backingCustomJob"])
    pool = backing.job_spec.worker_pool_specs[0]
    assert list(pool.container_spec.command) == ["python", str(tiny_trainer)]
    assert list(pool.container_spec.args) == ["--epochs=1"]
    assert model.display_name == "tiny-container-model"  # the SDK's default name


def test_without_a_serving_image_no_model_is_uploaded(
    sdk: CloudContext, tiny_trainer: Path
) -> None:
    job = aiplatform.CustomTrainingJob(
        display_name="tiny-no-model", script_path=str(tiny_trainer), container_uri=TRAIN_IMAGE
    )
    assert job.run(base_output_dir="gs://vertexkit-out/tiny-no-model") is None
    assert job.state.name == "PIPELINE_STATE_SUCCEEDED"
    assert not job.gca_resource.model_to_upload


def test_a_failing_script_fails_the_pipeline_with_its_error(sdk: CloudContext) -> None:
    job = aiplatform.CustomTrainingJob(
        display_name="fails",
        script_path=str(TESTDATA / "fail.py"),
        container_uri=TRAIN_IMAGE,
        model_serving_container_image_uri=SERVE_IMAGE,
    )
    with pytest.raises(RuntimeError, match=r"gs://nowhere/data\.csv"):
        job.run()
    assert job.state.name == "PIPELINE_STATE_FAILED"
    assert "exited with a non-zero status of 3" in job.gca_resource.error.message
    backing = job.gca_resource.training_task_metadata["backingCustomJob"]
    assert aiplatform.CustomJob.get(backing).state.name == "JOB_STATE_FAILED"
    assert not job.gca_resource.model_to_upload.name


def test_a_trainer_that_saves_no_model_fails_the_pipeline(sdk: CloudContext) -> None:
    job = aiplatform.CustomContainerTrainingJob(
        display_name="no-model-saved",
        container_uri="us-docker.pkg.dev/my-project/trainers/noop:latest",
        command=["python", "-c", "print('trained, saved nothing')"],
        model_serving_container_image_uri=SERVE_IMAGE,
    )
    with pytest.raises(RuntimeError, match="AIP_MODEL_DIR"):
        job.run(base_output_dir="gs://vertexkit-out/no-model-saved")
    assert job.state.name == "PIPELINE_STATE_FAILED"
    assert "gs://vertexkit-out/no-model-saved/model" in job.gca_resource.error.message


def test_cancel_ends_the_pipeline_and_its_processes(sdk: CloudContext, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    job = aiplatform.CustomContainerTrainingJob(
        display_name="long",
        container_uri="us-docker.pkg.dev/my-project/trainers/long:latest",
        command=["python", str(TESTDATA / "sleeper.py"), str(pids)],
        model_serving_container_image_uri=SERVE_IMAGE,
    )
    job.run(base_output_dir="gs://vertexkit-out/long", sync=False)
    job.wait_for_resource_creation()
    name, client = job.resource_name, sdk.pipeline_client()
    wait_until(pids.exists)
    with pytest.raises(exceptions.BadRequest, match="cancel it before deleting it"):
        client.delete_training_pipeline(name=name)
    job.cancel()
    wait_until(lambda: client.get_training_pipeline(name=name).state.name.endswith("CANCELLED"))
    # The SDK's background run ends with the pipeline's error, as against Vertex.
    with pytest.raises(RuntimeError, match="CANCELED"):
        job.wait()
    pipeline = client.get_training_pipeline(name=name)
    assert pipeline.state.name == "PIPELINE_STATE_CANCELLED" and pipeline.error.code == 1
    backing = pipeline.training_task_metadata["backingCustomJob"]
    assert aiplatform.CustomJob.get(backing).state.name == "JOB_STATE_CANCELLED"
    for pid in map(int, pids.read_text().split()):
        wait_until(lambda pid=pid: not alive(pid))
    with pytest.raises(exceptions.BadRequest, match="already in state PIPELINE_STATE_CANCELLED"):
        client.cancel_training_pipeline(name=name)
    client.delete_training_pipeline(name=name).result()
    with pytest.raises(exceptions.NotFound):
        client.get_training_pipeline(name=name)


def wait_until(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def test_get_and_list_with_a_filter(sdk: CloudContext, tiny_trainer: Path) -> None:
    job = aiplatform.CustomTrainingJob(
        display_name="tiny-listed",
        script_path=str(tiny_trainer),
        container_uri=TRAIN_IMAGE,
        labels={"team": "birds"},
    )
    job.run(base_output_dir="gs://vertexkit-out/tiny-listed")
    listed = aiplatform.CustomTrainingJob.list(filter='display_name="tiny-listed"')
    assert [j.resource_name for j in listed] == [job.resource_name]
    assert job.resource_name in [
        j.resource_name for j in aiplatform.CustomTrainingJob.list(filter='labels.team="birds"')
    ]
    again = aiplatform.CustomTrainingJob.get(job.resource_name)
    assert again.state.name == "PIPELINE_STATE_SUCCEEDED" and again.end_time is not None


# -- refused before anything is created --------------------------------------------------------
def good_request() -> dict:
    """What CustomContainerTrainingJob.run sends, as a plain GAPIC request."""
    return {
        "display_name": "refused",
        "training_task_definition": CUSTOM_TASK,
        "training_task_inputs": {
            "worker_pool_specs": [
                {
                    "machine_spec": {"machine_type": "n1-standard-4"},
                    "replica_count": 1,
                    "container_spec": {
                        "image_uri": "us-docker.pkg.dev/my-project/trainers/tiny:latest",
                        "command": ["python", "-c", "print('never runs')"],
                    },
                }
            ],
            "base_output_directory": {"output_uri_prefix": "gs://vertexkit-out/refused"},
        },
        "model_to_upload": {
            "display_name": "refused",
            "container_spec": {"image_uri": SERVE_IMAGE},
        },
    }


def pool(request: dict) -> dict:
    return request["training_task_inputs"]["worker_pool_specs"][0]


BAD_REQUESTS = {
    "region": ("location", exceptions.BadRequest, lambda r: r),
    "no display name": ("displayName", exceptions.BadRequest, lambda r: r.update(display_name="")),
    "long display name": (
        "displayName", exceptions.BadRequest, lambda r: r.update(display_name="x" * 129)
    ),
    "bad label": ("labels", exceptions.BadRequest, lambda r: r.update(labels={"Bad": "x"})),
    "no definition": (
        "trainingTaskDefinition", exceptions.BadRequest,
        lambda r: r.update(training_task_definition=""),
    ),
    "not a task schema": (
        "trainingTaskDefinition", exceptions.BadRequest,
        lambda r: r.update(training_task_definition="gs://elsewhere/task.yaml"),
    ),
    "automl task": (
        "trainingTaskDefinition", exceptions.MethodNotImplemented,
        lambda r: r.update(training_task_definition=CUSTOM_TASK.replace(
            "custom_task_1.0.0", "automl_tabular_1.0.0")),
    ),
    "no task inputs": (
        "trainingTaskInputs", exceptions.BadRequest, lambda r: r.pop("training_task_inputs")
    ),
    "unknown input field": (
        "bogus_field", exceptions.BadRequest,
        lambda r: r["training_task_inputs"].update(bogus_field=1),
    ),
    "no worker pools": (
        "trainingTaskInputs.workerPoolSpecs", exceptions.BadRequest,
        lambda r: r["training_task_inputs"].update(worker_pool_specs=[]),
    ),
    "unknown machine": (
        "trainingTaskInputs.workerPoolSpecs[0].machineSpec.machineType", exceptions.BadRequest,
        lambda r: pool(r)["machine_spec"].update(machine_type="n1-giant-9"),
    ),
    "accelerator count": (
        "acceleratorCount", exceptions.BadRequest,
        lambda r: pool(r)["machine_spec"].update(
            accelerator_type="NVIDIA_TESLA_T4", accelerator_count=3),
    ),
    "container without command": (
        "trainingTaskInputs.workerPoolSpecs[0].containerSpec.command", exceptions.BadRequest,
        lambda r: pool(r)["container_spec"].pop("command"),
    ),
    "no serving image": (
        "modelToUpload.containerSpec.imageUri", exceptions.BadRequest,
        lambda r: r["model_to_upload"].pop("container_spec"),
    ),
    "model id and parent model": (
        "modelId", exceptions.BadRequest,
        lambda r: r.update(model_id="some-model", parent_model="projects/p/locations/l/models/1"),
    ),
    "bad model id": ("modelId", exceptions.BadRequest, lambda r: r.update(model_id="Bad_ID!")),
    "model id without a model": (
        "modelId", exceptions.BadRequest,
        lambda r: (r.pop("model_to_upload"), r.update(model_id="orphan")),
    ),
    "unknown parent model": (
        "parentModel", exceptions.NotFound,
        lambda r: r.update(parent_model="projects/local-project/locations/us-central1/models/4242"),
    ),
    "bad version alias": (
        "modelToUpload.versionAliases", exceptions.BadRequest,
        lambda r: r["model_to_upload"].update(version_aliases=["Not_Valid"]),
    ),
    "no output directory": (
        "trainingTaskInputs.baseOutputDirectory.outputUriPrefix", exceptions.BadRequest,
        lambda r: r["training_task_inputs"].pop("base_output_directory"),
    ),
    "unknown managed dataset": (
        "inputDataConfig.datasetId", exceptions.NotFound,
        lambda r: r.update(input_data_config={
            "dataset_id": "123", "gcs_destination": {"output_uri_prefix": "gs://vertexkit-out/d"}}),
    ),
}  # fmt: skip


@pytest.mark.parametrize(("field", "error", "spoil"), BAD_REQUESTS.values(), ids=BAD_REQUESTS)
def test_bad_requests_are_refused_before_anything_is_created(
    sdk: CloudContext, field: str, error: type[Exception], spoil: Callable[[dict], object]
) -> None:
    client = sdk.pipeline_client()
    parent = (
        sdk.parent.replace("us-central1", "mars-central1") if field == "location" else sdk.parent
    )
    before = (list_names(client, sdk.parent, "pipelines"), list_names(client, sdk.parent, "jobs"))
    request = good_request()
    spoil(request)
    with pytest.raises(error) as refused:
        client.create_training_pipeline(parent=parent, training_pipeline=request)
    assert field in refused.value.message
    after = (list_names(client, sdk.parent, "pipelines"), list_names(client, sdk.parent, "jobs"))
    assert after == before, "a refused request created a resource"


def list_names(client: aiplatform_v1.PipelineServiceClient, parent: str, kind: str) -> set[str]:
    if kind == "pipelines":
        return {p.name for p in client.list_training_pipelines(parent=parent)}
    return {job.resource_name for job in aiplatform.CustomJob.list()}


def test_restart_fails_a_pipeline_left_running(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with LocalCloud(home=home):
        pass
    # An unclean stop (the process died): a pipeline still marked RUNNING in the state file.
    store = ResourceStore(home / "vertex" / "vertex.sqlite")
    name = "projects/local-project/locations/us-central1/trainingPipelines/777"
    store.insert("trainingPipelines", name, {"name": name, "state": "PIPELINE_STATE_RUNNING"})
    store.close()
    with LocalCloud(home=home) as cloud:
        pipeline = cloud.context().pipeline_client().get_training_pipeline(name=name)
    assert pipeline.state.name == "PIPELINE_STATE_FAILED"
    assert "local cloud stopped while the job was running" in pipeline.error.message
