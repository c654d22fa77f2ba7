"""record_decision: one row of the retraining decision history in BigQuery."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from google_cloud_pipeline_components.types.artifact_types import VertexModel
from kfp.dsl import Dataset, Input, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def record_decision(
    challenger: Input[VertexModel],
    train_data: Input[Dataset],
    test_data: Input[Dataset],
    promoted: bool,
    reason: str,
    champion: str,
    new_watermark: str,
    decision: OutputPath(str),
    gcp_resources: OutputPath(str),
    watermark_used: str = "",
    metric: str = "accuracy",
    model_display_name: str = "",
    decisions_table: str = "",
    project: str = "",
    location: str = "us-central1",
    bq_location: str = "US",
):
    """Appends the comparison's outcome, with both versions' metric, to the decision table.

    Both values are read from the Model Registry the way compare_models read them (each
    version's newest evaluation: on the same test window). `vertexkit decisions list` prints the
    table; an empty watermark in the next run continues from this row's new_watermark.

    Args:
        challenger: The VertexModel that was compared.
        train_data: The window's training split (its row count is recorded).
        test_data: The test window (its row count and source table are recorded).
        promoted: compare_models' Output.
        reason: compare_models' reason.
        champion: compare_models' champion (the challenger itself when there was none).
        new_watermark: retraining_window's new_watermark.
        watermark_used: retraining_window's watermark_used.
        metric: The compared metric.
        model_display_name: The model's display name.
        decisions_table: PROJECT.DATASET.TABLE; empty means
            `<project>.vertexkit_decisions.retraining_decisions`.
        project: Google Cloud project; empty means GOOGLE_CLOUD_PROJECT.
        location: Vertex AI region.
        bq_location: BigQuery location of the table and the job.

    Returns:
        decision: The recorded row as JSON.
        gcp_resources: GCPC GcpResources JSON naming the BigQuery job.
    """
    import json
    from dataclasses import asdict

    from vertexkit.context import CloudContext
    from vertexkit.runtime.retraining import decision_from_registry
    from vertexkit.runtime.retraining import record_decision as append_decision

    ctx = CloudContext.from_env(project or None, location or None)
    row = decision_from_registry(
        ctx,
        challenger.metadata["resourceName"],
        champion,
        metric,
        model_display_name=model_display_name,
        source_table=test_data.metadata.get("source_table", ""),
        watermark_used=watermark_used,
        new_watermark=new_watermark,
        train_rows=int(train_data.metadata.get("rows", 0)),
        test_rows=int(test_data.metadata.get("rows", 0)),
        promoted=promoted,
        reason=reason,
    )
    table = append_decision(ctx, row, decisions_table, bq_location or None, gcp_resources)
    print(f"recorded in {table}: {row}")
    with open(decision, "w") as handle:
        json.dump(asdict(row), handle)
