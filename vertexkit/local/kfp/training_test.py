"""The repo's `training` pipeline through the local cloud's KFP API: with `kfp.Client`, and with
`vertexkit run training --kfp-host URL`. Each run is a local PipelineJob, so its model lands in
the local Model Registry, read back here through Vertex's own client."""

import os
import subprocess
import sys
from pathlib import Path

import kfp
import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

from vertexkit.local import LocalCloud

REPO = Path(__file__).resolve().parents[3]
TRAINING_YAML = REPO / "compiled" / "training.yaml"
# the compiled default of `gcs_root`: a bucket the user's project has (a local run makes it)
GCS_ROOT_BUCKET = "local-project-vertexkit-pipelines"


@pytest.fixture(scope="module")
def gcs_root_bucket(local_cloud: LocalCloud) -> None:
    client = storage.Client(project=local_cloud.project, credentials=AnonymousCredentials())
    if client.lookup_bucket(GCS_ROOT_BUCKET) is None:
        client.create_bucket(GCS_ROOT_BUCKET)


def models_named(local_cloud: LocalCloud, display_name: str) -> list:
    context = local_cloud.context()
    listed = context.model_client().list_models(
        request={"parent": context.parent, "filter": f'display_name="{display_name}"'}
    )
    return list(listed)


def test_training_through_kfp_client_registers_its_model(
    local_cloud: LocalCloud, gcs_root_bucket: None
) -> None:
    client = kfp.Client(host=local_cloud.url)
    result = client.create_run_from_pipeline_package(
        str(TRAINING_YAML),
        arguments={"model_display_name": "kfp-client-penguins"},
        enable_caching=False,
    )
    done = client.wait_for_run_completion(result.run_id, timeout=600, sleep_duration=1)
    failed = [(t.display_name, t.error) for t in done.run_details.task_details if t.error]
    assert done.state == "SUCCEEDED", failed
    names = {task.display_name for task in done.run_details.task_details}
    assert {"custom-training-job", "upload-model", "deploy-model"} <= names
    [model] = models_named(local_cloud, "kfp-client-penguins")
    assert model.artifact_uri.startswith("gs://")


def test_vertexkit_run_kfp_host_prints_the_summary(
    local_cloud: LocalCloud, gcs_root_bucket: None, tmp_path: Path
) -> None:
    env = {**os.environ, **local_cloud.env(), "PYTHONPATH": str(REPO), "COLUMNS": "250"}
    command = [
        sys.executable,
        "-m",
        "vertexkit.cli",
        "run",
        "training",
        "--kfp-host",
        local_cloud.url,
        "--experiment",
        "cli-runs",
    ]
    ran = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600, check=False
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = ran.stdout
    assert "pipeline training version training-" in out
    assert "custom-training-job" in out and "  job " in out
    assert "training: " in out and " finished in " in out  # the summary's title
    [model] = models_named(local_cloud, "penguins-classifier")
    assert "model version" in out and model.name.rsplit("/", 1)[-1] in out
    # a second run of the same YAML reuses its version (one per content hash)
    again = subprocess.run(
        [*command, "--no-wait"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "reusing pipeline training version training-" in again.stdout
    client = kfp.Client(host=local_cloud.url)
    experiment = client.get_experiment(experiment_name="cli-runs")
    assert client.list_runs(experiment_id=experiment.experiment_id).total_size == 2
