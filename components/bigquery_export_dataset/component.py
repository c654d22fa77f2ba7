"""bigquery_export_dataset: a table or query exported to Cloud Storage as split datasets."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.

from google_cloud_pipeline_components.types.artifact_types import BQTable
from kfp.dsl import Dataset, Input, Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def bigquery_export_dataset(
    gcs_prefix: str,
    train: Output[Dataset],
    validation: Output[Dataset],
    test: Output[Dataset],
    gcp_resources: OutputPath(str),
    project: str = "",
    location: str = "US",
    source_table: str = "",
    query: str = "",
    format: str = "PARQUET",
    split_key_column: str = "",
    train_fraction: float = 0.8,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    staging_dataset: str = "vertexkit_staging",
    source: Input[BQTable] = None,
):
    """Exports a BigQuery table or query to Cloud Storage, split into train/validation/test.

    A row's split is decided by FARM_FINGERPRINT of its key modulo 10000 against the fractions,
    so the same row always lands in the same split. Each split is a query job into a staging
    table (expires after a day) and an extract job to `<gcs_prefix>/<split>/data-*.<ext>`. Every
    job goes to `gcp_resources` as it starts; a retried task resumes them, SIGTERM cancels.

    Args:
        gcs_prefix: gs://BUCKET/PREFIX. Each task execution writes below its own folder
            `<gcs_prefix>/run-<id>/<split>/` (the same on a retry), so a rerun never mixes
            its shards with an earlier run's.
        project: Google Cloud project that runs the jobs; empty means GOOGLE_CLOUD_PROJECT.
        location: BigQuery location of the jobs and the staging dataset.
        source_table: PROJECT.DATASET.TABLE to export (give this or `query`).
        query: GoogleSQL whose result is exported (give this or `source_table`).
        format: PARQUET, CSV or NEWLINE_DELIMITED_JSON (alias JSONL).
        split_key_column: Column whose value decides the split (e.g. an id); empty hashes the
            whole row (TO_JSON_STRING), which keeps identical rows together.
        train_fraction: Share of rows for training (> 0).
        validation_fraction: Share of rows for validation.
        test_fraction: Share of rows for testing; the three fractions must sum to 1.
        staging_dataset: [PROJECT.]DATASET for the per-split staging tables (created if missing).
        source: A BQTable artifact (e.g. bigquery_query_job's destination_table) to export
            instead of `source_table`.

    Returns:
        train: Dataset whose uri is the gs:// glob of the training shards; metadata rows, format.
        validation: The same for validation (rows 0 when its fraction is 0).
        test: The same for test.
        gcp_resources: GCPC GcpResources JSON naming every BigQuery job.
    """
    from vertexkit.context import CloudContext
    from vertexkit.runtime.bigquery import export_dataset
    from vertexkit.runtime.gcp_resources import execution_folder

    ctx = CloudContext.from_env(project or None)
    if source is not None:
        table = source.metadata
        source_table = f"{table['projectId']}.{table['datasetId']}.{table['tableId']}"
    result = export_dataset(
        ctx,
        execution_folder(gcs_prefix, gcp_resources),
        source_table=source_table or None,
        query=query or None,
        format=format,
        split_key_column=split_key_column or None,
        fractions=(train_fraction, validation_fraction, test_fraction),
        staging_dataset=staging_dataset or None,
        location=location or None,
        gcp_resources_path=gcp_resources,
    )
    for artifact, split in ((train, "train"), (validation, "validation"), (test, "test")):
        exported = result.splits[split]
        artifact.uri = exported.uri
        artifact.metadata.update({"rows": exported.rows, "format": result.format, "split": split})
