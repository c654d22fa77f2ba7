"""bigquery_query_job: GoogleSQL with query parameters into a destination table."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from google_cloud_pipeline_components.types.artifact_types import BQTable
from kfp.dsl import Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def bigquery_query_job(
    query: str,
    destination_table: Output[BQTable],
    gcp_resources: OutputPath(str),
    project: str = "",
    location: str = "US",
    query_parameters: dict = {},  # noqa: B006 (KFP defaults are data, never mutated)
    destination: str = "",
    write_disposition: str = "WRITE_TRUNCATE",
    labels: dict = {},  # noqa: B006
):
    """Runs a GoogleSQL query job whose result lands in a table.

    The job goes to `gcp_resources` as soon as it is inserted; a retried task resumes that job
    instead of running the query twice, and SIGTERM cancels it.

    Args:
        query: GoogleSQL (standard SQL); refer to parameters as `@name`.
        project: Google Cloud project that runs the job; empty means GOOGLE_CLOUD_PROJECT.
        location: BigQuery location of the job (e.g. US, EU, us-central1).
        query_parameters: Named parameters, typed from their JSON values: bool -> BOOL,
            integer -> INT64, number -> FLOAT64, string -> STRING, a list -> ARRAY of the first
            element's type, or {"type": "DATE", "value": "2024-01-31"} for any other type.
        destination: PROJECT.DATASET.TABLE (or DATASET.TABLE) for the result; empty keeps
            BigQuery's anonymous result table (about a day).
        write_disposition: WRITE_TRUNCATE, WRITE_APPEND or WRITE_EMPTY (with a destination).
        labels: Labels on the BigQuery job.

    Returns:
        destination_table: BQTable with metadata projectId, datasetId, tableId (and rows).
        gcp_resources: GCPC GcpResources JSON naming the BigQuery job.
    """
    from vertexkit.context import CloudContext
    from vertexkit.runtime.bigquery import run_query_job

    ctx = CloudContext.from_env(project or None)
    result = run_query_job(
        ctx,
        query,
        params=query_parameters,
        destination=destination or None,
        write_disposition=write_disposition,
        location=location or None,
        labels=labels,
        gcp_resources_path=gcp_resources,
    )
    project_id, dataset_id, table_id = result.table.split(".", 2)
    destination_table.uri = (
        f"https://www.googleapis.com/bigquery/v2/projects/{project_id}"
        f"/datasets/{dataset_id}/tables/{table_id}"
    )
    destination_table.metadata.update(
        {"projectId": project_id, "datasetId": dataset_id, "tableId": table_id, "rows": result.rows}
    )
