"""`retraining`: the data since a watermark -> a challenger -> both scored on the same holdout ->
compare -> deploy only if promoted -> the decision recorded in BigQuery.

Generic over `source_table` + `timestamp_column` (+ `label_column`, `split_key_column`). The
default source is a demo table built from penguins (which has no time column): each row gets a
`row_id` and an `ingested_at` spread over ten days (`vertexkit.runtime.retraining`).

- watermark: rows after it are new. Empty (the default, and what a schedule should pass)
  continues from the last decision recorded for this model and source, so each scheduled run
  trains on what arrived since the previous one; no history means all the data.
- The challenger trains on the new window only (`include_history=True`: all rows so far).
- The test window is a fixed FARM_FINGERPRINT holdout over all history: the champion is
  re-evaluated on it in this run, so both metrics come from identical rows.
- Fewer than `min_new_rows` new rows is not an error: the window task decides `retrain` false,
  everything after it sits in `dsl.If(retrain)` (its tasks end NOT_TRIGGERED), and the else
  branch records a "skipped" decision; the run ends SUCCEEDED. A missing table or a bad column
  still fails the window task, and the run.
- Every run appends a row (promoted, kept the champion, or skipped) to
  `<project>.vertexkit_decisions.retraining_decisions`; `vertexkit decisions list` prints it.
"""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Metrics

from vertexkit.components import (
    custom_training_job,
    evaluate_champion,
    record_decision,
    record_skip,
    retraining_window,
)
from vertexkit.pipelines.training import register_evaluate_and_deploy


class RetrainingOutputs(NamedTuple):
    """What a run reports, on both branches: whether it retrained, the decision and its row.

    A skipped run (too few new rows) has no challenger: `metrics` is then the skip's own
    (`retrained` = 0) and `record` its "skipped" row; there is no `model` output, since only the
    retrain branch makes one (`record`'s challenger_version names it).
    """

    retrained: bool
    promoted: bool
    decision: str
    record: str
    metrics: Metrics
    test_data: Dataset
    new_watermark: str


@dsl.pipeline(
    name="vertexkit-retraining",
    description="Retrain on the data since a watermark; deploy only a better model; record why.",
)
def retraining_pipeline(
    project: str = "local-project",
    location: str = "us-central1",
    gcs_root: str = "gs://local-project-vertexkit-pipelines/retraining",
    bq_location: str = "US",
    source_table: str = "",
    timestamp_column: str = "ingested_at",
    split_key_column: str = "row_id",
    label_column: str = "species",
    watermark: str = "",
    window_end: str = "",
    include_history: bool = False,
    min_new_rows: int = 20,
    decisions_table: str = "",
    model_display_name: str = "penguins-retrained",
    endpoint_display_name: str = "penguins-retrained-endpoint",
    framework: str = "sklearn",
    model_type: str = "random_forest",
    n_estimators: int = 100,
    max_depth: int = 8,
    machine_type: str = "n1-standard-4",
    comparison_metric: str = "accuracy",
    min_improvement: float = 0.0,
    serving_machine_type: str = "n1-standard-2",
    traffic_percentage: int = 100,
) -> RetrainingOutputs:
    window = retraining_window(
        project=project,
        location=bq_location,
        gcs_prefix=f"{gcs_root}/data",
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
    # The window depends on the decision history and the champion on the registry, not only on
    # the inputs: a cached result would replay an old window or an old champion.
    window.set_caching_options(False)
    with dsl.If(window.outputs["retrain"] == True, name="new-data"):  # noqa: E712
        champion = evaluate_champion(
            project=project,
            location=location,
            model_display_name=model_display_name,
            test_data=window.outputs["test"],
            label_column=label_column,
        )
        champion.set_caching_options(False)
        train = custom_training_job(
            project=project,
            location=location,
            display_name="retrain-tabular",
            base_output_directory=f"{gcs_root}/training",
            trainer_dir="trainers/tabular",
            python_module="tabular_trainer.task",
            framework=framework,
            machine_type=machine_type,
            args=[
                f"--label-column={label_column}",
                f"--exclude-columns={timestamp_column},{split_key_column}",
                f"--framework={framework}",
                f"--model-type={model_type}",
                f"--n-estimators={n_estimators}",
                f"--max-depth={max_depth}",
            ],
            training_data=window.outputs["train"],
            validation_data=window.outputs["validation"],
            test_data=window.outputs["test"],
        )
        challenger = register_evaluate_and_deploy(
            model_dir=train.outputs["model"],
            test_data=window.outputs["test"],
            project=project,
            location=location,
            label_column=label_column,
            model_display_name=model_display_name,
            endpoint_display_name=endpoint_display_name,
            framework=framework,
            comparison_metric=comparison_metric,
            min_improvement=min_improvement,
            serving_machine_type=serving_machine_type,
            traffic_percentage=traffic_percentage,
            after=champion,
        )
        # Recorded as soon as the comparison decides: KFP cannot depend on a task inside dsl.If.
        recorded = record_decision(
            project=project,
            location=location,
            bq_location=bq_location,
            challenger=challenger.model,
            train_data=window.outputs["train"],
            test_data=window.outputs["test"],
            promoted=challenger.promoted,
            reason=challenger.decision,
            champion=challenger.champion,
            watermark_used=window.outputs["watermark_used"],
            new_watermark=window.outputs["new_watermark"],
            metric=comparison_metric,
            model_display_name=model_display_name,
            decisions_table=decisions_table,
        )
        recorded.set_caching_options(False)
    with dsl.Else(name="no-new-data"):
        # Too few new rows is not an error: the run succeeds with a "skipped" decision.
        skipped = record_skip(
            project=project,
            location=location,
            bq_location=bq_location,
            reason=window.outputs["reason"],
            source_table=window.outputs["source"],
            watermark_used=window.outputs["watermark_used"],
            metric=comparison_metric,
            model_display_name=model_display_name,
            decisions_table=decisions_table,
        )
        skipped.set_caching_options(False)
    return RetrainingOutputs(
        retrained=window.outputs["retrain"],
        promoted=dsl.OneOf(challenger.promoted, skipped.outputs["promoted"]),
        decision=dsl.OneOf(challenger.decision, skipped.outputs["message"]),
        record=dsl.OneOf(recorded.outputs["decision"], skipped.outputs["decision"]),
        metrics=dsl.OneOf(challenger.metrics, skipped.outputs["metrics"]),
        test_data=window.outputs["test"],
        new_watermark=window.outputs["new_watermark"],
    )
