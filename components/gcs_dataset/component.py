"""gcs_dataset: existing files on Cloud Storage as a checked Dataset."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from kfp.dsl import Dataset, Output

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def gcs_dataset(
    uri: str,
    dataset: Output[Dataset],
    project: str = "",
    format: str = "",
    allow_empty: bool = False,
):
    """Declares files already on Cloud Storage as a Dataset, after checking them.

    Fails (before anything downstream runs) when nothing matches, the files mix or hide their
    format, a file cannot be read, or there are no rows.

    Args:
        uri: A gs:// file, folder, or `*` glob (e.g. gs://bucket/data/train-*.parquet).
        project: Google Cloud project for Cloud Storage; empty means GOOGLE_CLOUD_PROJECT.
        format: parquet, csv or jsonl; empty infers it from the file extensions.
        allow_empty: Accept files that hold no rows.

    Returns:
        dataset: Dataset whose uri is `uri`; metadata format, rows, files, columns.
    """
    from vertexkit.context import CloudContext
    from vertexkit.runtime.datasets import describe_gcs_dataset

    ctx = CloudContext.from_env(project or None)
    described = describe_gcs_dataset(ctx, uri, format or None, allow_empty=allow_empty)
    dataset.uri = described.uri
    dataset.metadata.update(
        {
            "format": described.format,
            "rows": described.rows,
            "files": len(described.files),
            "columns": described.columns,
        }
    )
