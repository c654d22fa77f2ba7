"""tabular_dataset in a pipeline on the local cloud: a managed dataset made from the penguins
table, handed on as GCPC's `google.VertexDataset` to a task that opens it with the SDK."""

from pathlib import Path

from google.cloud import aiplatform
from google_cloud_pipeline_components.types.artifact_types import VertexDataset
from kfp import dsl, local

from vertexkit.components.tabular_dataset import tabular_dataset
from vertexkit.context import CloudContext


@dsl.component(install_kfp_package=False)
def dataset_columns(dataset: dsl.Input[VertexDataset]) -> str:
    from google.cloud import aiplatform

    from vertexkit.context import CloudContext

    CloudContext.from_env().init_aiplatform()
    opened = aiplatform.TabularDataset(dataset.metadata["resourceName"])
    return ",".join(sorted(opened.column_names))


@dsl.pipeline(name="tabular-dataset")
def make_dataset(table: str) -> str:
    made = tabular_dataset(display_name="penguins-from-a-pipeline", bq_source=table)
    return dataset_columns(dataset=made.outputs["dataset"]).output


def test_the_component_creates_a_dataset_a_later_task_reads(
    cloud_context: CloudContext, tmp_path: Path
) -> None:
    local.init(
        runner=local.SubprocessRunner(use_venv=False),
        pipeline_root=str(tmp_path / "root"),
        raise_on_error=True,
    )
    run = make_dataset(table="bigquery-public-data.ml_datasets.penguins")
    assert "species" in run.output.split(",")
    cloud_context.init_aiplatform()
    made = aiplatform.TabularDataset.list(filter='display_name="penguins-from-a-pipeline"')
    assert len(made) == 1
    uri = made[0].gca_resource.metadata["inputConfig"]["bigquerySource"]["uri"]
    assert uri == "bq://bigquery-public-data.ml_datasets.penguins"
