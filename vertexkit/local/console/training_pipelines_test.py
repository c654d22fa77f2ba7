"""Training pipelines in the console: the list and a pipeline's page link its backing custom job
and the model it uploaded."""

from __future__ import annotations

import time

import requests

from vertexkit.local import LocalCloud
from vertexkit.local.console import training_pipelines

PARENT = "projects/local-project/locations/us-central1"
CUSTOM_TASK = "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"
SUCCEEDED = {
    "name": "projects/p/locations/l/trainingPipelines/7",
    "displayName": "penguins <train>",
    "state": "PIPELINE_STATE_SUCCEEDED",
    "trainingTaskDefinition": CUSTOM_TASK,
    "trainingTaskInputs": {
        "workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": 1}]
    },
    "trainingTaskMetadata": {"backingCustomJob": "projects/p/locations/l/customJobs/8"},
    "modelToUpload": {
        "name": "projects/p/locations/l/models/9",
        "versionId": "2",
        "displayName": "penguins",
    },
}


def test_page_links_the_backing_job_and_the_uploaded_version() -> None:
    html = training_pipelines.training_pipeline_page(SUCCEEDED)
    assert '<a href="/console/projects/p/locations/l/customJobs/8">8</a>' in html
    assert (
        '<a href="/console/projects/p/locations/l/models/9" class="uploaded-model">penguins v2</a>'
        in html
    )
    assert "custom_task_1.0.0.yaml" in html and "n1-standard-4" in html
    assert "penguins &lt;train&gt;" in html


def test_a_pipeline_still_running_links_no_model_yet() -> None:
    running = {
        **SUCCEEDED,
        "state": "PIPELINE_STATE_RUNNING",
        "modelToUpload": {"displayName": "penguins"},  # the request's, not yet a model
    }
    assert 'class="uploaded-model"' not in training_pipelines.training_pipeline_page(running)


def test_training_page_lists_a_real_pipeline_and_its_page_links_its_job(
    local_cloud: LocalCloud,
) -> None:
    body = {
        "displayName": "console-pipeline",
        "trainingTaskDefinition": CUSTOM_TASK,
        "trainingTaskInputs": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {"machineType": "n1-standard-4"},
                    "replicaCount": 1,
                    "containerSpec": {
                        "imageUri": "us-docker.pkg.dev/p/trainers/app:latest",
                        "command": ["python", "-c", "print('trained')"],
                    },
                }
            ]
        },
    }
    created = requests.post(
        f"{local_cloud.url}/v1/{PARENT}/trainingPipelines", json=body, timeout=30
    )
    assert created.status_code == 200, created.text
    name = created.json()["name"]
    deadline = time.monotonic() + 60
    while (pipeline := get(local_cloud, name))["state"] != "PIPELINE_STATE_SUCCEEDED":
        assert time.monotonic() < deadline, pipeline
        time.sleep(0.1)
    listing = requests.get(f"{local_cloud.url}/console/training", timeout=30).text
    assert f'href="/console/{name}"' in listing
    page = requests.get(f"{local_cloud.url}/console/{name}", timeout=30)
    assert page.status_code == 200
    job = pipeline["trainingTaskMetadata"]["backingCustomJob"]
    assert f'href="/console/{job}"' in page.text
    assert requests.get(f"{local_cloud.url}/console/{job}", timeout=30).status_code == 200


def get(cloud: LocalCloud, name: str) -> dict:
    return requests.get(f"{cloud.url}/v1/{name}", timeout=30).json()
