"""Batch prediction jobs: build the BatchPredictionJob, launch (or resume), wait, report outputs.

The component's arguments become a `BatchPredictConfig`; `build_batch_prediction_job` turns it
into the Vertex REST JSON, checked by `vertexkit.specs.batch_prediction` (the rules the local
cloud applies too) before anything is created. The job runs through `launch_and_wait`, so a
retried task resumes the job in gcp_resources and SIGTERM cancels it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vertexkit.context import CloudContext
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.runtime.gcp_resources import vertex_name_from_uri
from vertexkit.runtime.jobs import JobApi, launch_and_wait
from vertexkit.specs.batch_prediction import validate_batch_prediction_job

BATCH_PREDICTION_JOB = JobApi(
    "BatchPredictionJob",
    aiplatform_v1.BatchPredictionJob,
    lambda client, parent, job: client.create_batch_prediction_job(
        parent=parent, batch_prediction_job=job
    ),
    lambda client, name: client.get_batch_prediction_job(name=name),
    lambda client, name: client.cancel_batch_prediction_job(name=name),
)


@dataclass
class BatchPredictConfig:
    """A batch prediction in the component's vocabulary (snake_case); see the component."""

    display_name: str
    model: str
    instances_format: str = "jsonl"
    gcs_source_uris: list[str] = field(default_factory=list)
    bigquery_source_input_uri: str = ""
    predictions_format: str = "jsonl"
    gcs_destination_output_uri_prefix: str = ""
    bigquery_destination_output_uri: str = ""
    machine_type: str = "n1-standard-2"
    accelerator_type: str = ""
    accelerator_count: int = 0
    starting_replica_count: int = 1
    max_replica_count: int = 1
    batch_size: int = 0
    model_parameters: dict[str, Any] = field(default_factory=dict)
    instance_type: str = ""
    key_field: str = ""
    included_fields: list[str] = field(default_factory=list)
    excluded_fields: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    service_account: str = ""


@dataclass(frozen=True)
class BatchPredictionResult:
    job_name: str
    gcs_output_directory: str
    bigquery_output_dataset: str
    bigquery_output_table: str
    successful_count: int
    failed_count: int


def model_resource_name(metadata: dict[str, Any], uri: str) -> str:
    """The model a VertexModel artifact names: ours and GCPC's put it in `resourceName`; an
    artifact made by hand may only have the Vertex URI."""
    name = (metadata or {}).get("resourceName")
    return name or vertex_name_from_uri(uri)


def _input_config(config: BatchPredictConfig) -> dict[str, Any]:
    if config.bigquery_source_input_uri:
        source = {"bigquerySource": {"inputUri": config.bigquery_source_input_uri}}
        return {"instancesFormat": "bigquery", **source}
    return {"instancesFormat": config.instances_format,
            "gcsSource": {"uris": list(config.gcs_source_uris)}}  # fmt: skip


def _output_config(config: BatchPredictConfig) -> dict[str, Any]:
    if config.bigquery_destination_output_uri:
        destination = {"outputUri": config.bigquery_destination_output_uri}
        return {"predictionsFormat": "bigquery", "bigqueryDestination": destination}
    destination = {"outputUriPrefix": config.gcs_destination_output_uri_prefix}
    return {"predictionsFormat": config.predictions_format, "gcsDestination": destination}


def _resources(config: BatchPredictConfig) -> dict[str, Any]:
    machine: dict[str, Any] = {"machineType": config.machine_type}
    if config.accelerator_type:
        machine.update(acceleratorType=config.accelerator_type,
                       acceleratorCount=config.accelerator_count or 1)  # fmt: skip
    starting = config.starting_replica_count
    return {"machineSpec": machine, "startingReplicaCount": starting,
            "maxReplicaCount": max(config.max_replica_count, starting)}  # fmt: skip


def _instance_config(config: BatchPredictConfig) -> dict[str, Any]:
    values = {"instanceType": config.instance_type, "keyField": config.key_field,
              "includedFields": list(config.included_fields),
              "excludedFields": list(config.excluded_fields)}  # fmt: skip
    return {key: value for key, value in values.items() if value}


def build_batch_prediction_job(config: BatchPredictConfig) -> dict[str, Any]:
    """The BatchPredictionJob REST JSON; raises SpecError naming the field Vertex would refuse."""
    job: dict[str, Any] = {
        "displayName": config.display_name,
        "model": config.model,
        "inputConfig": _input_config(config),
        "outputConfig": _output_config(config),
        "dedicatedResources": _resources(config),
    }
    optional = {
        "instanceConfig": _instance_config(config),
        "modelParameters": config.model_parameters,
        "manualBatchTuningParameters": {"batchSize": config.batch_size}
        if config.batch_size
        else {},
        "labels": config.labels,
        "serviceAccount": config.service_account,
    }
    job.update({key: value for key, value in optional.items() if value})
    validate_batch_prediction_job(job)
    return job


def run_batch_prediction(
    ctx: CloudContext, config: BatchPredictConfig, gcp_resources: str | None
) -> BatchPredictionResult:
    """Creates (or resumes) the job and waits; raises JobFailedError unless it SUCCEEDED."""
    job = launch_and_wait(ctx, BATCH_PREDICTION_JOB, build_batch_prediction_job(config),
                          gcp_resources)  # fmt: skip
    info, stats = job.output_info, job.completion_stats
    return BatchPredictionResult(
        job_name=job.name,
        gcs_output_directory=info.gcs_output_directory,
        bigquery_output_dataset=info.bigquery_output_dataset,
        bigquery_output_table=info.bigquery_output_table,
        successful_count=int(stats.successful_count),
        failed_count=int(stats.failed_count),
    )
