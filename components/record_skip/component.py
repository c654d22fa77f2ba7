"""record_skip: a retraining run with nothing to retrain on, recorded as a "skipped" decision."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from kfp.dsl import Markdown, Metrics, Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def record_skip(
    reason: str,
    source_table: str,
    decision: OutputPath(str),
    promoted: OutputPath(bool),
    message: OutputPath(str),
    metrics: Output[Metrics],
    report: Output[Markdown],
    gcp_resources: OutputPath(str),
    watermark_used: str = "",
    metric: str = "accuracy",
    model_display_name: str = "",
    decisions_table: str = "",
    project: str = "",
    location: str = "us-central1",
    bq_location: str = "US",
):
    """Appends a "skipped" decision (no challenger; the serving version kept) to the decision table.

    The retraining pipeline's else branch when retraining_window found too few new rows: the run
    ends SUCCEEDED with this decision where `vertexkit decisions list`, the console's decisions
    page and the run's outputs show it. Its new_watermark is the watermark it used, so the next
    run reads the same window again with whatever arrived since.

    Args:
        reason: retraining_window's reason (`no new rows since WATERMARK`, ...).
        source_table: retraining_window's source (PROJECT.DATASET.TABLE).
        watermark_used: retraining_window's watermark_used.
        metric: The metric the pipeline compares (recorded for the model's history).
        model_display_name: The model's display name.
        decisions_table: PROJECT.DATASET.TABLE; empty means
            `<project>.vertexkit_decisions.retraining_decisions`.
        project: Google Cloud project; empty means GOOGLE_CLOUD_PROJECT.
        location: Vertex AI region (the serving version is looked up there).
        bq_location: BigQuery location of the table and the job.

    Returns:
        decision: The recorded row as JSON.
        promoted: Always false: nothing was promoted.
        message: The reason, passed on (on this branch, the pipeline's `decision` output).
        metrics: `retrained` = 0, for the run's metrics view.
        report: The decision in words (Markdown).
        gcp_resources: GCPC GcpResources JSON naming the BigQuery job.
    """
    import json
    from dataclasses import asdict

    from vertexkit.context import CloudContext
    from vertexkit.runtime.retraining import record_decision, skipped_decision

    ctx = CloudContext.from_env(project or None, location or None)
    row = skipped_decision(
        ctx, model_display_name, source_table, watermark_used, reason, metric=metric
    )
    table = record_decision(ctx, row, decisions_table, bq_location or None, gcp_resources)
    print(f"skipped: {reason}; recorded in {table}")
    metrics.log_metric("retrained", 0)
    serving = row.champion_version or "no model yet"
    with open(report.path, "w") as handle:
        handle.write(f"**skipped**: {reason}\n\n{model_display_name}: {serving} keeps serving.\n")
    with open(decision, "w") as handle:
        json.dump(asdict(row), handle)
    with open(promoted, "w") as handle:
        handle.write("false")
    with open(message, "w") as handle:
        handle.write(reason)
