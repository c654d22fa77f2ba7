"""Every field of a job's CustomJobSpec has a local meaning (training/dispositions.py): honoured,
refused with a 400 naming it before anything is created, or said once in the job's log.

Through Google's clients: `aiplatform_v1.JobServiceClient` / `PipelineServiceClient` (REST) and
`aiplatform.CustomJob`. Expected values are Google's, source beside each: the aiplatform_v1
reference (CustomJobSpec, Scheduling, WorkerPoolSpec, NfsMount, MachineSpec) and the SDK's
`CustomJob.run` docstring and checks (google.cloud.aiplatform.jobs)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, aiplatform_v1
from google.cloud.aiplatform import jobs as sdk_jobs
from google.protobuf import json_format, struct_pb2

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud

ACCOUNT = "trainer@local-project.iam.gserviceaccount.com"
CUSTOM_TASK = "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"
JobState = aiplatform_v1.JobState


def options(cloud: LocalCloud) -> dict[str, Any]:
    return {
        "credentials": AnonymousCredentials(),
        "transport": "rest",
        "client_options": {"api_endpoint": cloud.url},
    }


@pytest.fixture
def sdk(cloud_context: CloudContext, monkeypatch: pytest.MonkeyPatch) -> CloudContext:
    monkeypatch.setattr(sdk_jobs, "_JOB_WAIT_TIME", 0.1)  # jobs here take about a second
    cloud_context.init_aiplatform(staging_bucket="gs://vertexkit-staging")
    return cloud_context


@pytest.fixture
def jobs(local_cloud: LocalCloud) -> aiplatform_v1.JobServiceClient:
    return aiplatform_v1.JobServiceClient(**options(local_cloud))


def pool(command: str = "print(1)", **fields: Any) -> dict[str, Any]:
    machine = {"machine_type": "n1-standard-4", **fields.pop("machine", {})}
    container = {"image_uri": "python:3.11", "command": ["python", "-c", command]}
    return {"machine_spec": machine, "replica_count": 1, "container_spec": container, **fields}


def custom_job(pools: list[dict] | None = None, **spec: Any) -> dict[str, Any]:
    return {"display_name": "fields", "job_spec": {"worker_pool_specs": pools or [pool()], **spec}}


def job_log(cloud: LocalCloud, job_name: str) -> str:
    return (cloud.home / "vertex" / "training" / job_name.rsplit("/", 1)[1] / "job.log").read_text()


def wait(jobs: aiplatform_v1.JobServiceClient, name: str) -> aiplatform_v1.CustomJob:
    for _ in range(600):
        job = jobs.get_custom_job(name=name)
        if job.state in (JobState.JOB_STATE_SUCCEEDED, JobState.JOB_STATE_FAILED):
            return job
        time.sleep(0.1)
    raise AssertionError(f"{name} did not end")


# -- refused: a 400 (or 404) naming the field, and no job created ---------------------------
def tensorboard(sdk: CloudContext) -> str:
    return aiplatform.Tensorboard.create(display_name="fields-board").resource_name


def context(sdk: CloudContext, context_id: str) -> str:
    return f"{sdk.parent}/metadataStores/default/contexts/{context_id}"


REFUSED: dict[str, tuple[str, type[Exception], Callable[[CloudContext], dict]]] = {
    # CustomJobSpec.enableWebAccess: shells "at the URIs given by CustomJob.web_access_uris".
    "web access": ("jobSpec.enableWebAccess", exceptions.BadRequest,
                   lambda sdk: custom_job(enable_web_access=True)),
    "dashboard access": ("jobSpec.enableDashboardAccess", exceptions.BadRequest,
                         lambda sdk: custom_job(enable_dashboard_access=True)),
    # NfsMount.mountPoint: "The NFS will be mounted for the user under /mnt/nfs/<mount_point>".
    "nfs mount": ("jobSpec.workerPoolSpecs[0].nfsMounts", exceptions.BadRequest,
                  lambda sdk: custom_job([pool(nfs_mounts=[
                      {"server": "10.0.0.2", "path": "/share", "mount_point": "data"}])])),
    # CustomJobSpec.tensorboard: "The name of a Vertex AI Tensorboard resource".
    "unknown tensorboard": ("jobSpec.tensorboard", exceptions.NotFound,
                            lambda sdk: custom_job(tensorboard=f"{sdk.parent}/tensorboards/404",
                                                   service_account=ACCOUNT)),
    # The SDK's CustomJob.run: "`service_account` is required with provided `tensorboard`".
    "tensorboard without service account": ("serviceAccount", exceptions.BadRequest,
                                            lambda sdk: custom_job(tensorboard=tensorboard(sdk))),
    "unknown experiment": ("jobSpec.experiment", exceptions.NotFound,
                           lambda sdk: custom_job(experiment=context(sdk, "no-such-exp"),
                                                  service_account=ACCOUNT)),
    # The SDK's CustomJob.run: experiment_run "can only be set when `experiment` is set".
    "run without experiment": ("experimentRun", exceptions.BadRequest,
                               lambda sdk: custom_job(experiment_run=context(sdk, "e-r"),
                                                      service_account=ACCOUNT)),
    # MachineSpec.gpuPartitionSize: "If set, the accelerator_count should be set to 1."
    "gpu partition of two gpus": ("acceleratorCount", exceptions.BadRequest,
                                  lambda sdk: custom_job([pool(machine={
                                      "machine_type": "a2-highgpu-2g",
                                      "accelerator_type": "NVIDIA_TESLA_A100",
                                      "accelerator_count": 2, "gpu_partition_size": "1g.5gb"})])),
}  # fmt: skip


@pytest.mark.parametrize(("field", "error", "body"), REFUSED.values(), ids=REFUSED)
def test_refused_fields_name_the_field_and_create_nothing(
    sdk: CloudContext, jobs: aiplatform_v1.JobServiceClient, field: str,
    error: type[Exception], body: Callable[[CloudContext], dict],
) -> None:  # fmt: skip
    request = body(sdk)
    before = {j.name for j in jobs.list_custom_jobs(parent=sdk.parent)}
    with pytest.raises(error) as refused:
        jobs.create_custom_job(parent=sdk.parent, custom_job=request)
    assert field in refused.value.message
    assert {j.name for j in jobs.list_custom_jobs(parent=sdk.parent)} == before


def test_a_tuning_jobs_trial_spec_is_refused_the_same(
    sdk: CloudContext, jobs: aiplatform_v1.JobServiceClient
) -> None:
    before = {j.name for j in jobs.list_hyperparameter_tuning_jobs(parent=sdk.parent)}
    study = {
        "metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
        "parameters": [
            {"parameter_id": "x", "double_value_spec": {"min_value": 0, "max_value": 1}}
        ],
    }
    tuning = {
        "display_name": "fields-tuning", "study_spec": study, "max_trial_count": 1,
        "parallel_trial_count": 1,
        "trial_job_spec": {"worker_pool_specs": [pool()], "enable_web_access": True},
    }  # fmt: skip
    with pytest.raises(exceptions.BadRequest, match=r"trialJobSpec\.enableWebAccess"):
        jobs.create_hyperparameter_tuning_job(parent=sdk.parent, hyperparameter_tuning_job=tuning)
    assert {j.name for j in jobs.list_hyperparameter_tuning_jobs(parent=sdk.parent)} == before


def test_a_training_pipelines_custom_task_is_refused_the_same(
    sdk: CloudContext, local_cloud: LocalCloud
) -> None:
    pipelines = aiplatform_v1.PipelineServiceClient(**options(local_cloud))
    mount = {"server": "10.0.0.2", "path": "/share", "mountPoint": "data"}
    spec = {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": 1, "nfsMounts": [mount],
        "containerSpec": {"imageUri": "python:3.11", "command": ["python", "-c", "print(1)"]},
    }]}  # fmt: skip
    inputs = json_format.ParseDict(spec, struct_pb2.Value())
    pipeline = {"display_name": "fields-pipeline", "training_task_definition": CUSTOM_TASK,
                "training_task_inputs": inputs}  # fmt: skip
    before = {p.name for p in pipelines.list_training_pipelines(parent=sdk.parent)}
    with pytest.raises(exceptions.BadRequest, match=r"trainingTaskInputs\.workerPoolSpecs\[0\]"):
        pipelines.create_training_pipeline(parent=sdk.parent, training_pipeline=pipeline)
    assert {p.name for p in pipelines.list_training_pipelines(parent=sdk.parent)} == before


# -- no local effect: said once in the job's log ---------------------------------------------
def test_a_spot_job_runs_at_once_and_its_log_says_what_changes_nothing_here(
    sdk: CloudContext, jobs: aiplatform_v1.JobServiceClient, local_cloud: LocalCloud
) -> None:
    # Scheduling.Strategy SPOT and the fields below are accepted by Vertex (reference); here they
    # change nothing, and the job's log says so once each.
    machine = {"reservation_affinity": {"reservation_affinity_type": "NO_RESERVATION"}}
    body = custom_job(
        [pool(machine=machine, disk_spec={"boot_disk_size_gb": 200})],
        scheduling={"strategy": "SPOT", "max_wait_duration": "600s"},
        service_account=ACCOUNT,
        network="projects/12345/global/networks/my-vpc",
        reserved_ip_ranges=["vertex-ai-ip-range"],
    )
    body["encryption_spec"] = {
        "kms_key_name": "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"
    }
    body["labels"] = {"team": "fields"}
    created = jobs.create_custom_job(parent=sdk.parent, custom_job=body)
    job = wait(jobs, created.name)
    assert job.state == JobState.JOB_STATE_SUCCEEDED  # SPOT: never preempted here
    assert job.labels == {"team": "fields"}  # labels are honoured: stored and returned
    lines = job_log(local_cloud, job.name).splitlines()
    for field in ("scheduling.strategy", "scheduling.maxWaitDuration", "serviceAccount", "network",
                  "reservedIpRanges", "encryptionSpec", "workerPoolSpecs[0].diskSpec",
                  "workerPoolSpecs[0].machineSpec.reservationAffinity"):  # fmt: skip
        said = [line for line in lines if f" {field} is set: " in line]
        assert len(said) == 1, (field, lines)
    assert any("SPOT is never preempted here" in line for line in lines)
    assert not any("labels" in line for line in lines)


def test_disable_retries_overrides_restart_on_worker_restart(
    sdk: CloudContext, jobs: aiplatform_v1.JobServiceClient, local_cloud: LocalCloud
) -> None:
    # Scheduling.disableRetries: "If true, overrides Scheduling.restart_job_on_worker_restart
    # to false."
    scheduling = {"restart_job_on_worker_restart": True, "disable_retries": True}
    body = custom_job([pool("raise SystemExit(3)")], scheduling=scheduling)
    job = wait(jobs, jobs.create_custom_job(parent=sdk.parent, custom_job=body).name)
    assert job.state == JobState.JOB_STATE_FAILED
    log = job_log(local_cloud, job.name)
    assert "restarting the job's replicas" not in log
    assert "scheduling.disableRetries is set" in log


# -- honoured ---------------------------------------------------------------------------------
def test_a_job_with_an_experiment_run_is_listed_on_the_run(sdk: CloudContext) -> None:
    # CustomJobSpec.experimentRun: "The Experiment Run associated with this job"; the SDK reads a
    # run's jobs with ExperimentRun.get_logged_custom_jobs (metadata "_custom_jobs").
    experiment = f"fields-{uuid.uuid4().hex[:8]}"
    aiplatform.Experiment.create(experiment)
    run = aiplatform.ExperimentRun.create("run-1", experiment=experiment)
    job = aiplatform.CustomJob(display_name="in-a-run", worker_pool_specs=[pool()])
    job.run(experiment=experiment, experiment_run="run-1", service_account=ACCOUNT)
    assert job.state.name == "JOB_STATE_SUCCEEDED"
    assert job.job_spec.experiment_run == run.resource_name
    logged = aiplatform.ExperimentRun("run-1", experiment=experiment).get_logged_custom_jobs()
    assert [j.resource_name for j in logged] == [job.resource_name]


def test_container_env_reaches_the_replica(
    sdk: CloudContext, jobs: aiplatform_v1.JobServiceClient, tmp_path: Path
) -> None:
    out = tmp_path / "env.txt"
    command = f"import os; open({str(out)!r}, 'w').write(os.environ['GREETING'])"
    body = custom_job([pool(command)])
    body["job_spec"]["worker_pool_specs"][0]["container_spec"]["env"] = [
        {"name": "GREETING", "value": "hello"}
    ]
    job = wait(jobs, jobs.create_custom_job(parent=sdk.parent, custom_job=body).name)
    assert job.state == JobState.JOB_STATE_SUCCEEDED
    assert out.read_text() == "hello"
