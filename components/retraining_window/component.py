"""retraining_window: the rows since a watermark, plus the fixed holdout, as dataset splits."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from kfp.dsl import Dataset, Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def retraining_window(
    gcs_prefix: str,
    train: Output[Dataset],
    validation: Output[Dataset],
    test: Output[Dataset],
    watermark_used: OutputPath(str),
    new_watermark: OutputPath(str),
    retrain: OutputPath(bool),
    reason: OutputPath(str),
    source: OutputPath(str),
    gcp_resources: OutputPath(str),
    source_table: str = "",
    timestamp_column: str = "ingested_at",
    split_key_column: str = "row_id",
    watermark: str = "",
    window_end: str = "",
    include_history: bool = False,
    min_new_rows: int = 20,
    model_display_name: str = "",
    decisions_table: str = "",
    project: str = "",
    location: str = "US",
):
    """Exports the data since the watermark for training and the fixed holdout for testing,
    or decides to skip the run when fewer than min_new_rows rows are new.

    The window is (watermark, newest timestamp], newest taken at run time (or window_end).
    Train and validation hold the window's rows (all history with include_history); test is the
    fixed FARM_FINGERPRINT holdout over all history up to the new watermark, so a champion and a
    challenger are scored on the same rows and no model ever trains on them.

    Args:
        gcs_prefix: gs://BUCKET/PREFIX for the exported splits (one folder per execution).
        source_table: PROJECT.DATASET.TABLE with a TIMESTAMP column; empty builds and uses the
            demo table `<project>.vertexkit_demo.penguins_events` (penguins with row_id and
            ingested_at spread over ten days).
        timestamp_column: The TIMESTAMP column that orders the data.
        split_key_column: A stable row key for the holdout hash; empty hashes the whole row.
        watermark: ISO 8601 timestamp; rows after it are new. Empty continues from the last
            decision recorded for model_display_name and source_table (all data if none).
        window_end: ISO 8601 upper bound (inclusive); empty means the newest row.
        include_history: Train on all rows up to the new watermark, not only the new ones.
        min_new_rows: Fewer new rows than this skips the run (retrain false, nothing exported);
            a missing table or a bad column still fails it.
        model_display_name: The model whose decision history holds the last watermark.
        decisions_table: PROJECT.DATASET.TABLE of decisions; empty means
            `<project>.vertexkit_decisions.retraining_decisions`.
        project: Google Cloud project; empty means GOOGLE_CLOUD_PROJECT.
        location: BigQuery location of the jobs.

    Returns:
        train: Dataset of the window's training rows (gs:// glob); metadata rows, format.
        validation: The window's validation rows.
        test: The fixed holdout up to the new watermark.
        watermark_used: The lower bound applied (ISO 8601, empty for all data).
        new_watermark: The newest timestamp read: the next run's default watermark (on a
            skip, watermark_used: the next run reads the same window again).
        retrain: True when the window has at least min_new_rows new rows; false skips.
        reason: The decision in words: `N new rows`, or `no new rows since WATERMARK`.
        source: The source table read (PROJECT.DATASET.TABLE).
        gcp_resources: GCPC GcpResources JSON naming every BigQuery job.
    """
    from vertexkit.context import CloudContext
    from vertexkit.runtime.gcp_resources import execution_folder
    from vertexkit.runtime.retraining import WindowSpec, export_window, iso

    ctx = CloudContext.from_env(project or None)
    spec = WindowSpec(
        source_table=source_table,
        timestamp_column=timestamp_column,
        split_key_column=split_key_column,
        watermark=watermark,
        window_end=window_end,
        include_history=include_history,
        min_new_rows=min_new_rows,
        model_display_name=model_display_name,
        decisions_table=decisions_table,
    )
    window, result = export_window(
        ctx, spec, execution_folder(gcs_prefix, gcp_resources), location or None, gcp_resources
    )
    for artifact, split in ((train, "train"), (validation, "validation"), (test, "test")):
        exported = result.splits[split] if result else None
        if exported is not None:
            artifact.uri = exported.uri
        rows = exported.rows if exported is not None else 0
        artifact.metadata.update(
            {"rows": rows, "format": result.format if result else "", "split": split}
        )
    test.metadata["source_table"] = window.source_table
    bounds = f"({iso(window.watermark_used) or '-inf'}, {iso(window.new_watermark) or 'now'}]"
    print(f"window {bounds}: {'retrain' if window.retrain else 'skipped'}: {window.reason}")
    for path, value in (
        (watermark_used, iso(window.watermark_used)),
        (new_watermark, iso(window.new_watermark)),
        (retrain, "true" if window.retrain else "false"),
        (reason, window.reason),
        (source, window.source_table),
    ):
        with open(path, "w") as handle:
            handle.write(value)
