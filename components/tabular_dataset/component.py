"""tabular_dataset: a Vertex AI managed tabular dataset from BigQuery or CSV on gs://."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from google_cloud_pipeline_components.types.artifact_types import VertexDataset
from kfp.dsl import Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def tabular_dataset(
    display_name: str,
    dataset: Output[VertexDataset],
    gcp_resources: OutputPath(str),
    project: str = "",
    location: str = "us-central1",
    bq_source: str = "",
    gcs_source: list = [],  # noqa: B006 (KFP defaults are data, never mutated)
    labels: dict = {},  # noqa: B006
):
    """Creates a managed tabular Dataset, as `aiplatform.TabularDataset.create` does.

    The output is GCPC's `google.VertexDataset`, so it feeds GCPC's training ops as well as
    ours. The create operation goes to `gcp_resources` as soon as it starts; a retried task
    waits for it instead of creating a second dataset.

    Args:
        display_name: The dataset's display name.
        project: Google Cloud project; empty means GOOGLE_CLOUD_PROJECT.
        location: Vertex AI region.
        bq_source: A BigQuery table, `bq://project.dataset.table` (or without `bq://`).
        gcs_source: CSV files, a list of gs:// URIs. Set exactly one of the two sources.
        labels: Labels on the dataset.

    Returns:
        dataset: VertexDataset whose metadata resourceName is `projects/.../datasets/ID`.
        gcp_resources: GCPC GcpResources JSON naming the create operation.
    """
    from vertexkit.context import CloudContext
    from vertexkit.runtime.gcp_resources import vertex_resource_uri
    from vertexkit.runtime.managed_datasets import TabularSource, create_tabular_dataset

    ctx = CloudContext.from_env(project or None, location or None)
    source = TabularSource(display_name, bq_source, list(gcs_source), dict(labels))
    created = create_tabular_dataset(ctx, source, gcp_resources)
    dataset.uri = vertex_resource_uri(ctx.region, created.name)
    dataset.metadata["resourceName"] = created.name
