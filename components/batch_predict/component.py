"""batch_predict: a Model Registry version over a file or table of instances, as a Vertex
BatchPredictionJob."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from google_cloud_pipeline_components.types.artifact_types import (
    VertexBatchPredictionJob,
    VertexModel,
)
from kfp.dsl import Input, Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def batch_predict(
    model: Input[VertexModel],
    job_display_name: str,
    batch_prediction_job: Output[VertexBatchPredictionJob],
    gcp_resources: OutputPath(str),
    instances_format: str = "jsonl",
    gcs_source_uris: list = [],  # noqa: B006 (KFP defaults are data, never mutated)
    bigquery_source_input_uri: str = "",
    predictions_format: str = "jsonl",
    gcs_destination_output_uri_prefix: str = "",
    bigquery_destination_output_uri: str = "",
    machine_type: str = "n1-standard-2",
    accelerator_type: str = "",
    accelerator_count: int = 0,
    starting_replica_count: int = 1,
    max_replica_count: int = 1,
    batch_size: int = 0,
    model_parameters: dict = {},  # noqa: B006
    instance_type: str = "",
    key_field: str = "",
    included_fields: list = [],  # noqa: B006
    excluded_fields: list = [],  # noqa: B006
    labels: dict = {},  # noqa: B006
    service_account: str = "",
    project: str = "",
    location: str = "us-central1",
):
    """Runs a batch prediction job with the model and waits for it to end.

    The job goes to `gcp_resources` as soon as it exists; a retried task waits for that job
    instead of starting a second, and a stopped task cancels it. Rows the model refuses go to the
    job's errors output (`prediction.errors_stats-*` files, or the `errors` table); the task
    fails only when the job does.

    Args:
        model: The VertexModel to predict with: ours (upload_model) or GCPC's (ModelUploadOp,
            importer); its metadata resourceName, with @version if given.
        job_display_name: The job's display name.
        instances_format: jsonl or csv for gcs_source_uris (bigquery is implied by
            bigquery_source_input_uri).
        gcs_source_uris: gs:// files of instances; wildcards (`*`, `**`) allowed.
        bigquery_source_input_uri: A table of instances, bq://project.dataset.table (instead of
            gcs_source_uris).
        predictions_format: jsonl for gcs_destination_output_uri_prefix.
        gcs_destination_output_uri_prefix: gs:// folder; results go to
            `<prefix>/prediction-<model>-<time>/prediction.results-*`.
        bigquery_destination_output_uri: bq://project (a new dataset is made),
            bq://project.dataset or bq://project.dataset.table (instead of the gs:// prefix).
        machine_type: Serving machine of each replica, e.g. n1-standard-2 (serving machine rules).
        accelerator_type: GPU per replica, e.g. NVIDIA_TESLA_T4; empty for none.
        accelerator_count: GPUs per replica (1 when accelerator_type is set and this is 0).
        starting_replica_count: Replicas the instances are split over.
        max_replica_count: Most replicas (at least starting_replica_count).
        batch_size: Instances per predict request; 0 for Vertex's default (64).
        model_parameters: `parameters` sent with every predict request.
        instance_type: object or array: how each row is sent; empty for Vertex's default.
        key_field: A field taken out of each instance; results carry it as `key`.
        included_fields: Fields kept (and their order for array instances).
        excluded_fields: Fields dropped (not with included_fields).
        labels: Labels on the job.
        service_account: Service account the job runs as.
        project: Google Cloud project; empty means GOOGLE_CLOUD_PROJECT.
        location: Vertex AI region.

    Returns:
        batch_prediction_job: GCPC VertexBatchPredictionJob (metadata resourceName,
            gcsOutputDirectory, bigqueryOutputDataset, bigqueryOutputTable).
        gcp_resources: GCPC GcpResources JSON naming the batch prediction job.
    """
    from vertexkit.context import CloudContext
    from vertexkit.runtime.batch_prediction import (
        BatchPredictConfig,
        model_resource_name,
        run_batch_prediction,
    )
    from vertexkit.runtime.gcp_resources import vertex_resource_uri

    ctx = CloudContext.from_env(project or None, location or None)
    result = run_batch_prediction(
        ctx,
        BatchPredictConfig(
            display_name=job_display_name,
            model=model_resource_name(model.metadata, model.uri),
            instances_format=instances_format,
            gcs_source_uris=gcs_source_uris,
            bigquery_source_input_uri=bigquery_source_input_uri,
            predictions_format=predictions_format,
            gcs_destination_output_uri_prefix=gcs_destination_output_uri_prefix,
            bigquery_destination_output_uri=bigquery_destination_output_uri,
            machine_type=machine_type,
            accelerator_type=accelerator_type,
            accelerator_count=accelerator_count,
            starting_replica_count=starting_replica_count,
            max_replica_count=max_replica_count,
            batch_size=batch_size,
            model_parameters=model_parameters,
            instance_type=instance_type,
            key_field=key_field,
            included_fields=included_fields,
            excluded_fields=excluded_fields,
            labels=labels,
            service_account=service_account,
        ),
        gcp_resources,
    )
    batch_prediction_job.uri = vertex_resource_uri(ctx.region, result.job_name)
    batch_prediction_job.metadata.update(
        resourceName=result.job_name,
        gcsOutputDirectory=result.gcs_output_directory,
        bigqueryOutputDataset=result.bigquery_output_dataset,
        bigqueryOutputTable=result.bigquery_output_table,
    )
