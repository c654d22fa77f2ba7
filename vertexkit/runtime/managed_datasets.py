"""Vertex AI managed datasets: a tabular Dataset from a BigQuery table or CSV files on gs://.

The create operation goes to `gcp_resources` as soon as it starts; a retried task waits for
that operation instead of creating a second dataset.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.runtime.operations import start_or_resume
from vertexkit.specs import SpecError

if TYPE_CHECKING:
    from vertexkit.context import CloudContext

log = logging.getLogger(__name__)
TABULAR_SCHEMA = "gs://google-cloud-aiplatform/schema/dataset/metadata/tabular_1.0.0.yaml"


@dataclass(frozen=True)
class TabularSource:
    display_name: str
    bq_source: str = ""
    gcs_source: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)

    def input_config(self) -> dict[str, Any]:
        """`metadata.inputConfig` as the SDK's TabularDataset.create writes it."""
        if bool(self.bq_source) == bool(self.gcs_source):
            raise SpecError("bq_source", "set exactly one of bq_source and gcs_source")
        if self.bq_source:
            uri = self.bq_source if self.bq_source.startswith("bq://") else f"bq://{self.bq_source}"
            return {"bigquerySource": {"uri": uri}}
        return {"gcsSource": {"uri": list(self.gcs_source)}}


def build_dataset(source: TabularSource) -> aiplatform_v1.Dataset:
    dataset = aiplatform_v1.Dataset(
        display_name=source.display_name,
        metadata_schema_uri=TABULAR_SCHEMA,
        labels=dict(source.labels),
    )
    dataset.metadata = {"inputConfig": source.input_config()}
    return dataset


def create_tabular_dataset(
    ctx: CloudContext, source: TabularSource, gcp_resources: str | None
) -> aiplatform_v1.Dataset:
    """Creates the dataset (or waits for the one a previous attempt started); returns it."""
    client = ctx.dataset_client()
    dataset = build_dataset(source)
    created = start_or_resume(
        ctx,
        client,
        lambda: client.create_dataset(parent=ctx.parent, dataset=dataset),
        aiplatform_v1.Dataset,
        gcp_resources,
        describe=f"dataset {source.display_name}",
    )
    log.info("created dataset %s", created.name)
    return created
