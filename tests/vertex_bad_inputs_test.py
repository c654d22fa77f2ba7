"""Bad input through the real clients: each request is refused with 400 INVALID_ARGUMENT, the
message names the field, and nothing was created (no job, model, endpoint, pipeline job,
schedule, deployment or bucket; a refused update changes nothing).

Every row sends one bad value in an otherwise valid request, the way a user would.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1, storage

from vertexkit.context import CloudContext

LONG_NAME = "x" * 2000
MARS = "mars-central1"
CUSTOM_IMAGE = "us-docker.pkg.dev/my-project/serving/app:latest"
HUGE_LABEL = "v" * 100_000


@dataclass
class Clients:
    ctx: CloudContext
    jobs: Any
    models: Any
    endpoints: Any
    pipelines: Any
    schedules: Any
    storage: storage.Client

    def parent(self, location: str | None = None) -> str:
        return f"projects/{self.ctx.project}/locations/{location or self.ctx.region}"


@pytest.fixture
def clients(cloud_context: CloudContext) -> Clients:
    schedules = cloud_context._gapic(aiplatform_v1.ScheduleServiceClient)  # no context helper
    return Clients(
        cloud_context,
        cloud_context.job_client(),
        cloud_context.model_client(),
        cloud_context.endpoint_client(),
        cloud_context.pipeline_client(),
        schedules,
        cloud_context.storage_client(),
    )


def assert_refused(call: Callable[[], Any], field: str) -> None:
    """400 INVALID_ARGUMENT from the client, with the field in the message."""
    with pytest.raises(exceptions.BadRequest) as refused:
        call()
    assert refused.value.code == 400
    body = refused.value.response.json()["error"]
    # Vertex's and BigQuery's errors carry `status`; Cloud Storage's carry `errors[].reason`
    # instead (storage.v1 error format: code, message, errors[{domain, reason, message}]).
    if "/storage/v1/" in str(refused.value.response.url):
        assert body["errors"][0]["reason"] == "invalid" and "status" not in body
    else:
        assert body["status"] == "INVALID_ARGUMENT"
    assert field in body["message"], body["message"]
    assert len(body["message"]) < 20_000  # a huge input is never echoed whole


# -- custom and tuning jobs ----------------------------------------------------------------------
def pool(**machine: Any) -> dict[str, Any]:
    return {
        "machine_spec": {"machine_type": "n1-standard-4", **machine},
        "replica_count": 1,
        "container_spec": {"image_uri": CUSTOM_IMAGE, "command": ["python", "-c", "pass"]},
    }


def with_container(**container: Any) -> dict[str, Any]:
    spec = pool()
    return {**spec, "container_spec": {**spec["container_spec"], **container}}


def custom_job(**changes: Any) -> dict[str, Any]:
    return {"display_name": "bad-inputs", "job_spec": {"worker_pool_specs": [pool()]}, **changes}


def many_labels(count: int) -> dict[str, str]:
    return {f"k{i}": "v" for i in range(count)}


BAD_LABELS = {
    "uppercase-key": ({"Team": "ml"}, "labels.Team"),
    "key-starts-with-digit": ({"1team": "ml"}, "labels.1team"),
    "key-64-chars": ({"k" * 64: "v"}, "labels.kkkk"),
    "key-with-dot": ({"team.name": "ml"}, "labels.team.name"),
    "value-64-chars": ({"team": "v" * 64}, "labels.team"),
    "value-uppercase": ({"team": "ML"}, "labels.team"),
    "value-with-space": ({"team": "m l"}, "labels.team"),
    "value-100kb": ({"team": HUGE_LABEL}, "labels.team"),
    "65-labels": (many_labels(65), "labels"),
}
BAD_DISPLAY_NAMES = {
    "display-name-2000": (LONG_NAME, "displayName"),
    "display-name-129": ("y" * 129, "displayName"),
    "display-name-empty": ("", "displayName"),
    "display-name-blank": ("   ", "displayName"),
}
CUSTOM_JOB_ROWS = {
    **{
        name: (custom_job(display_name=value), field)
        for name, (value, field) in BAD_DISPLAY_NAMES.items()
    },
    **{name: (custom_job(labels=value), field) for name, (value, field) in BAD_LABELS.items()},
    "negative-replica-count": (
        custom_job(job_spec={"worker_pool_specs": [{**pool(), "replica_count": -1}]}),
        "replicaCount",
    ),
    "boot-disk-10gb": (
        custom_job(
            job_spec={"worker_pool_specs": [{**pool(), "disk_spec": {"boot_disk_size_gb": 10}}]}
        ),
        "bootDiskSizeGb",
    ),
    # Locally a replica is a process: what exec() cannot take is refused at create, not at start.
    "arg-of-1mb": (
        custom_job(job_spec={"worker_pool_specs": [with_container(args=["a" * 2**20])]}),
        "containerSpec.args[0]",
    ),
    "env-of-4mb": (
        custom_job(
            job_spec={
                "worker_pool_specs": [
                    with_container(
                        env=[{"name": f"V{i}", "value": "e" * 100_000} for i in range(40)]
                    )
                ]
            }
        ),
        "workerPoolSpecs[0].containerSpec",
    ),
}


def job_count(clients: Clients, kind: str) -> int:
    lister = getattr(clients.jobs, f"list_{kind}")
    return len(list(lister(parent=clients.parent())))


@pytest.mark.parametrize("body,field", CUSTOM_JOB_ROWS.values(), ids=CUSTOM_JOB_ROWS.keys())
def test_custom_job_bad_input(clients: Clients, body: dict, field: str) -> None:
    before = job_count(clients, "custom_jobs")
    assert_refused(
        lambda: clients.jobs.create_custom_job(parent=clients.parent(), custom_job=body), field
    )
    assert job_count(clients, "custom_jobs") == before


@pytest.mark.parametrize("location", [MARS, "us-central", "US", "europe-west99"])
def test_custom_job_unknown_region(clients: Clients, location: str) -> None:
    before = len(list(clients.jobs.list_custom_jobs(parent=clients.parent(location))))
    assert_refused(
        lambda: clients.jobs.create_custom_job(
            parent=clients.parent(location), custom_job=custom_job()
        ),
        "location",
    )
    assert len(list(clients.jobs.list_custom_jobs(parent=clients.parent(location)))) == before


def tuning_job(**changes: Any) -> dict[str, Any]:
    return {
        "display_name": "bad-tuning",
        "study_spec": {
            "metrics": [{"metric_id": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": [
                {"parameter_id": "lr", "double_value_spec": {"min_value": 0.1, "max_value": 1}}
            ],
        },
        "max_trial_count": 2,
        "parallel_trial_count": 1,
        "trial_job_spec": {"worker_pool_specs": [pool()]},
        **changes,
    }


TUNING_ROWS = {
    "display-name-2000": (tuning_job(display_name=LONG_NAME), None, "displayName"),
    "display-name-empty": (tuning_job(display_name=""), None, "displayName"),
    "labels-uppercase": (tuning_job(labels={"Team": "ml"}), None, "labels.Team"),
    "labels-value-100kb": (tuning_job(labels={"team": HUGE_LABEL}), None, "labels.team"),
    "unknown-region": (tuning_job(), MARS, "location"),
}


@pytest.mark.parametrize("body,location,field", TUNING_ROWS.values(), ids=TUNING_ROWS.keys())
def test_tuning_job_bad_input(
    clients: Clients, body: dict, location: str | None, field: str
) -> None:
    parent = clients.parent(location)
    before = len(list(clients.jobs.list_hyperparameter_tuning_jobs(parent=parent)))
    assert_refused(
        lambda: clients.jobs.create_hyperparameter_tuning_job(
            parent=parent, hyperparameter_tuning_job=body
        ),
        field,
    )
    assert len(list(clients.jobs.list_hyperparameter_tuning_jobs(parent=parent))) == before


# -- models ------------------------------------------------------------------------------------
def model_body(**changes: Any) -> dict[str, Any]:
    container = {"image_uri": CUSTOM_IMAGE, "command": ["python", "-m", "http.server"]}
    return {"display_name": "bad-inputs-model", "container_spec": container, **changes}


MODEL_ROWS = {
    **{
        name: (model_body(display_name=value), None, f"model.{field}")
        for name, (value, field) in BAD_DISPLAY_NAMES.items()
    },
    **{
        name: (model_body(labels=value), None, f"model.{field}")
        for name, (value, field) in BAD_LABELS.items()
        if name in ("uppercase-key", "value-100kb", "65-labels")
    },
    "unknown-region": (model_body(), MARS, "location"),
}


def model_count(clients: Clients, parent: str) -> int:
    return len(list(clients.models.list_models(parent=parent)))


@pytest.mark.parametrize("body,location,field", MODEL_ROWS.values(), ids=MODEL_ROWS.keys())
def test_model_upload_bad_input(
    clients: Clients, body: dict, location: str | None, field: str
) -> None:
    parent = clients.parent(location)
    before = model_count(clients, parent)
    assert_refused(lambda: clients.models.upload_model(parent=parent, model=body).result(), field)
    assert model_count(clients, parent) == before


@pytest.fixture
def uploaded_model(clients: Clients) -> str:
    operation = clients.models.upload_model(parent=clients.parent(), model=model_body())
    return operation.result().model


UPDATE_ROWS = {
    "display-name-2000": ({"display_name": LONG_NAME}, "display_name", "displayName"),
    "display-name-empty": ({"display_name": ""}, "display_name", "displayName"),
    "labels-uppercase": ({"labels": {"Team": "ml"}}, "labels", "labels.Team"),
    "labels-value-100kb": ({"labels": {"team": HUGE_LABEL}}, "labels", "labels.team"),
}


@pytest.mark.parametrize("patch,mask,field", UPDATE_ROWS.values(), ids=UPDATE_ROWS.keys())
def test_model_update_bad_input(
    clients: Clients, uploaded_model: str, patch: dict, mask: str, field: str
) -> None:
    assert_refused(
        lambda: clients.models.update_model(
            model={"name": uploaded_model, **patch}, update_mask={"paths": [mask]}
        ),
        field,
    )
    unchanged = clients.models.get_model(name=uploaded_model)
    assert unchanged.display_name == "bad-inputs-model"
    assert dict(unchanged.labels) == {}


# -- endpoints and deployments -------------------------------------------------------------------
ENDPOINT_ROWS = {
    **{
        name: ({"display_name": value}, None, f"endpoint.{field}")
        for name, (value, field) in BAD_DISPLAY_NAMES.items()
    },
    **{
        name: ({"display_name": "e", "labels": value}, None, f"endpoint.{field}")
        for name, (value, field) in BAD_LABELS.items()
        if name in ("key-starts-with-digit", "value-64-chars", "65-labels")
    },
    "unknown-region": ({"display_name": "e"}, MARS, "location"),
}


def endpoint_count(clients: Clients, parent: str) -> int:
    return len(list(clients.endpoints.list_endpoints(parent=parent)))


@pytest.mark.parametrize("body,location,field", ENDPOINT_ROWS.values(), ids=ENDPOINT_ROWS.keys())
def test_endpoint_create_bad_input(
    clients: Clients, body: dict, location: str | None, field: str
) -> None:
    parent = clients.parent(location)
    before = endpoint_count(clients, parent)
    assert_refused(
        lambda: clients.endpoints.create_endpoint(parent=parent, endpoint=body).result(), field
    )
    assert endpoint_count(clients, parent) == before


@pytest.fixture
def endpoint(clients: Clients) -> str:
    operation = clients.endpoints.create_endpoint(
        parent=clients.parent(), endpoint={"display_name": "bad-inputs-endpoint"}
    )
    return operation.result().name


@pytest.mark.parametrize("patch,mask,field", UPDATE_ROWS.values(), ids=UPDATE_ROWS.keys())
def test_endpoint_update_bad_input(
    clients: Clients, endpoint: str, patch: dict, mask: str, field: str
) -> None:
    assert_refused(
        lambda: clients.endpoints.update_endpoint(
            endpoint={"name": endpoint, **patch}, update_mask={"paths": [mask]}
        ),
        field,
    )
    unchanged = clients.endpoints.get_endpoint(name=endpoint)
    assert unchanged.display_name == "bad-inputs-endpoint"
    assert dict(unchanged.labels) == {}


def dedicated(machine_type: str, accelerator: str = "", count: int = 0) -> dict[str, Any]:
    machine: dict[str, Any] = {"machine_type": machine_type}
    if accelerator:
        machine |= {"accelerator_type": accelerator, "accelerator_count": count}
    return {"machine_spec": machine, "min_replica_count": 1, "max_replica_count": 1}


DEPLOY_ROWS = {
    "n1-standard-2-with-h100": (
        dedicated("n1-standard-2", "NVIDIA_H100_80GB", 1),
        "acceleratorType",
    ),
    "e2-standard-2-with-t4": (dedicated("e2-standard-2", "NVIDIA_TESLA_T4", 1), "acceleratorType"),
    "n1-standard-2-with-8-t4": (
        dedicated("n1-standard-2", "NVIDIA_TESLA_T4", 8),
        "acceleratorCount",
    ),
    "n2-highcpu-4-with-l4": (dedicated("n2-highcpu-4", "NVIDIA_L4", 1), "acceleratorType"),
    "unknown-machine": (dedicated("n1-giant-7"), "machineType"),
    "a2-with-h100": (dedicated("a2-highgpu-1g", "NVIDIA_H100_80GB", 1), "acceleratorType"),
}


@pytest.mark.parametrize("resources,field", DEPLOY_ROWS.values(), ids=DEPLOY_ROWS.keys())
def test_deploy_bad_serving_machine(
    clients: Clients, uploaded_model: str, endpoint: str, resources: dict, field: str
) -> None:
    deployed = {"model": uploaded_model, "dedicated_resources": resources}
    assert_refused(
        lambda: clients.endpoints.deploy_model(
            endpoint=endpoint, deployed_model=deployed, traffic_split={"0": 100}
        ).result(),
        field,
    )
    assert not clients.endpoints.get_endpoint(name=endpoint).deployed_models


def test_deploy_long_deployed_model_display_name(
    clients: Clients, uploaded_model: str, endpoint: str
) -> None:
    deployed = {
        "model": uploaded_model,
        "display_name": LONG_NAME,
        "dedicated_resources": dedicated("n1-standard-2"),
    }
    assert_refused(
        lambda: clients.endpoints.deploy_model(
            endpoint=endpoint, deployed_model=deployed, traffic_split={"0": 100}
        ).result(),
        "deployedModel.displayName",
    )
    assert not clients.endpoints.get_endpoint(name=endpoint).deployed_models


# -- pipeline jobs and schedules -----------------------------------------------------------------
PARAMETERS = {
    "count": {"parameterType": "NUMBER_INTEGER", "defaultValue": 1},
    "ratio": {"parameterType": "NUMBER_DOUBLE", "defaultValue": 0.5},
    "label": {"parameterType": "STRING", "defaultValue": "a"},
    "flag": {"parameterType": "BOOLEAN", "defaultValue": False},
    "items": {"parameterType": "LIST", "defaultValue": []},
    "conf": {"parameterType": "STRUCT", "defaultValue": {}},
    "needed": {"parameterType": "STRING"},
}


def pipeline_job(bucket: str, values: dict[str, Any] | None = None, **changes: Any) -> dict:
    spec = {
        "pipelineInfo": {"name": "bad-inputs"},
        "root": {"dag": {"tasks": {}}, "inputDefinitions": {"parameters": PARAMETERS}},
        "schemaVersion": "2.1.0",
        "sdkVersion": "kfp-2.7.0",
    }
    runtime = {"gcs_output_directory": f"gs://{bucket}/root", "parameter_values": values}
    return {"pipeline_spec": spec, "runtime_config": runtime, **changes}


PIPELINE_ROWS: dict[str, tuple[dict, dict, str | None, str]] = {
    "int-given-text": ({"needed": "x", "count": "abc"}, {}, None, "parameterValues.count"),
    "int-given-fraction": ({"needed": "x", "count": 1.5}, {}, None, "parameterValues.count"),
    "int-given-bool": ({"needed": "x", "count": True}, {}, None, "parameterValues.count"),
    "double-given-text": ({"needed": "x", "ratio": "half"}, {}, None, "parameterValues.ratio"),
    "string-given-number": ({"needed": 5}, {}, None, "parameterValues.needed"),
    "bool-given-text": ({"needed": "x", "flag": "yes"}, {}, None, "parameterValues.flag"),
    "list-given-text": ({"needed": "x", "items": "a,b"}, {}, None, "parameterValues.items"),
    "struct-given-list": ({"needed": "x", "conf": [1]}, {}, None, "parameterValues.conf"),
    "unknown-parameter": ({"needed": "x", "colour": "red"}, {}, None, "colour"),
    "missing-required": ({}, {}, None, "needed"),
    "display-name-2000": ({"needed": "x"}, {"display_name": LONG_NAME}, None, "displayName"),
    "labels-uppercase": ({"needed": "x"}, {"labels": {"Team": "ml"}}, None, "labels.Team"),
    "labels-value-100kb": ({"needed": "x"}, {"labels": {"t": HUGE_LABEL}}, None, "labels.t"),
    "unknown-region": ({"needed": "x"}, {}, MARS, "location"),
}


@pytest.fixture
def fresh_bucket(clients: Clients) -> Iterator[str]:
    """A bucket name nobody created: the refused request must not create it either."""
    name = f"bad-inputs-{uuid.uuid4().hex[:12]}"
    yield name
    assert clients.storage.lookup_bucket(name) is None


@pytest.mark.parametrize(
    "values,changes,location,field", PIPELINE_ROWS.values(), ids=PIPELINE_ROWS.keys()
)
def test_pipeline_job_bad_input(
    clients: Clients,
    fresh_bucket: str,
    values: dict,
    changes: dict,
    location: str | None,
    field: str,
) -> None:
    parent = clients.parent(location)
    before = len(list(clients.pipelines.list_pipeline_jobs(parent=parent)))
    body = pipeline_job(fresh_bucket, values, **changes)
    assert_refused(
        lambda: clients.pipelines.create_pipeline_job(parent=parent, pipeline_job=body), field
    )
    assert len(list(clients.pipelines.list_pipeline_jobs(parent=parent))) == before


def test_pipeline_job_with_an_invalid_root_bucket_is_not_queued(clients: Clients) -> None:
    before = len(list(clients.pipelines.list_pipeline_jobs(parent=clients.parent())))
    body = pipeline_job("Not_A_Bucket", {"needed": "x"})
    assert_refused(
        lambda: clients.pipelines.create_pipeline_job(parent=clients.parent(), pipeline_job=body),
        "gcsOutputDirectory",
    )
    assert len(list(clients.pipelines.list_pipeline_jobs(parent=clients.parent()))) == before


SCHEDULE_ROWS = {
    "display-name-2000": ({"needed": "x"}, {"display_name": LONG_NAME}, None, "displayName"),
    "display-name-empty": ({"needed": "x"}, {"display_name": ""}, None, "displayName"),
    "parameter-type": ({"needed": "x", "count": "abc"}, {}, None, "parameterValues.count"),
    "job-labels": ({"needed": "x"}, {}, None, "labels.Team"),
    "unknown-region": ({"needed": "x"}, {}, MARS, "location"),
}


@pytest.mark.parametrize(
    "values,changes,location,field", SCHEDULE_ROWS.values(), ids=SCHEDULE_ROWS.keys()
)
def test_schedule_bad_input(
    clients: Clients,
    fresh_bucket: str,
    values: dict,
    changes: dict,
    location: str | None,
    field: str,
) -> None:
    parent = clients.parent(location)
    job = pipeline_job(fresh_bucket, values)
    if field == "labels.Team":
        job["labels"] = {"Team": "ml"}
    schedule = {
        "display_name": "bad-inputs",
        "cron": "0 * * * *",
        "max_concurrent_run_count": 1,
        "create_pipeline_job_request": {"parent": parent, "pipeline_job": job},
        **changes,
    }
    before = len(list(clients.schedules.list_schedules(parent=parent)))
    assert_refused(
        lambda: clients.schedules.create_schedule(parent=parent, schedule=schedule), field
    )
    assert len(list(clients.schedules.list_schedules(parent=parent))) == before


# -- list paging -----------------------------------------------------------------------------------
LISTERS = {
    "custom-jobs": lambda c: c.jobs.list_custom_jobs,
    "tuning-jobs": lambda c: c.jobs.list_hyperparameter_tuning_jobs,
    "models": lambda c: c.models.list_models,
    "endpoints": lambda c: c.endpoints.list_endpoints,
    "pipeline-jobs": lambda c: c.pipelines.list_pipeline_jobs,
    "schedules": lambda c: c.schedules.list_schedules,
}


@pytest.mark.parametrize("lister", LISTERS.values(), ids=LISTERS.keys())
@pytest.mark.parametrize(
    "query,field",
    [({"page_size": -5}, "pageSize"), ({"page_token": "abc"}, "pageToken")],
    ids=["page-size--5", "page-token-abc"],
)
def test_list_bad_paging(clients: Clients, lister: Callable, query: dict, field: str) -> None:
    request = {"parent": clients.parent(), **query}
    assert_refused(lambda: list(lister(clients)(request=request)), field)


# -- Cloud Storage ---------------------------------------------------------------------------------
BUCKET_LABEL_ROWS = {
    name: (value, field)
    for name, (value, field) in BAD_LABELS.items()
    if name != "key-with-dot"  # its field path reads the same as a nested key
}


@pytest.mark.parametrize("labels,field", BUCKET_LABEL_ROWS.values(), ids=BUCKET_LABEL_ROWS.keys())
def test_bucket_create_bad_labels(
    clients: Clients, fresh_bucket: str, labels: dict, field: str
) -> None:
    bucket = clients.storage.bucket(fresh_bucket)
    bucket.labels = labels
    assert_refused(lambda: clients.storage.create_bucket(bucket), field)


@pytest.mark.parametrize(
    "labels,field",
    [BAD_LABELS["uppercase-key"], BAD_LABELS["value-100kb"]],
    ids=["uppercase-key", "value-100kb"],
)
def test_bucket_patch_bad_labels(clients: Clients, labels: dict, field: str) -> None:
    bucket = clients.storage.create_bucket(f"bad-inputs-{uuid.uuid4().hex[:12]}")
    bucket.labels = labels
    assert_refused(bucket.patch, field)
    fetched = clients.storage.get_bucket(bucket.name)
    assert fetched.labels == {} and fetched.metageneration == 1


def test_bucket_list_negative_max_results(clients: Clients) -> None:
    assert_refused(lambda: list(clients.storage.list_buckets(max_results=-5)), "maxResults")


def test_object_list_negative_max_results(clients: Clients) -> None:
    bucket = clients.storage.create_bucket(f"bad-inputs-{uuid.uuid4().hex[:12]}")
    assert_refused(lambda: list(bucket.list_blobs(max_results=-5)), "maxResults")
