"""The retraining runtime against the local cloud: windows, the fixed holdout, the history."""

from __future__ import annotations

import datetime as dt
import uuid

import pandas as pd
import pytest

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.runtime import retraining
from vertexkit.runtime.evaluation import read_table
from vertexkit.specs import SpecError


def _unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def decisions(cloud_context: CloudContext) -> str:
    return f"{cloud_context.project}.{_unique('decisions')}.history"


@pytest.fixture
def bucket(local_cloud: LocalCloud) -> str:
    name = _unique("retraining").replace("_", "-")
    local_cloud.storage.ensure_bucket(name)
    return f"gs://{name}"


def _spec(table: str, decisions: str, **overrides: object) -> retraining.WindowSpec:
    values: dict = {
        "source_table": table,
        "timestamp_column": "ingested_at",
        "split_key_column": "row_id",
        "model_display_name": "m",
        "decisions_table": decisions,
        "min_new_rows": 5,
    }
    return retraining.WindowSpec(**(values | overrides))


def test_parse_timestamp_is_utc_and_names_the_field() -> None:
    assert retraining.parse_timestamp("2024-01-05", "watermark") == dt.datetime(
        2024, 1, 5, tzinfo=dt.timezone.utc
    )
    parsed = retraining.parse_timestamp("2024-01-05T02:00:00+02:00", "watermark")
    assert retraining.iso(parsed) == "2024-01-05T00:00:00Z"
    assert retraining.parse_timestamp("", "watermark") is None
    with pytest.raises(SpecError, match="watermark"):
        retraining.parse_timestamp("yesterday", "watermark")


def test_window_trains_on_new_rows_and_tests_on_the_whole_holdout(
    cloud_context: CloudContext, decisions: str, bucket: str
) -> None:
    table = retraining.ensure_demo_table(cloud_context)
    everything = _spec(table, decisions)
    _, first = retraining.export_window(cloud_context, everything, f"{bucket}/w1")
    watermark = "2024-01-06T00:00:00Z"
    window, second = retraining.export_window(
        cloud_context,
        _spec(table, decisions, watermark=watermark),
        f"{bucket}/w2",
    )
    assert retraining.iso(window.watermark_used) == watermark
    cutoff = pd.Timestamp(watermark)
    train = read_table(cloud_context, second.splits["train"].uri)
    assert len(train) > 0 and (pd.to_datetime(train["ingested_at"], utc=True) > cutoff).all()
    # The same holdout rows whatever the watermark: champion and challenger see identical rows.
    first_test = read_table(cloud_context, first.splits["test"].uri)
    second_test = read_table(cloud_context, second.splits["test"].uri)
    assert sorted(first_test["row_id"]) == sorted(second_test["row_id"])
    assert not set(second_test["row_id"]) & set(train["row_id"])
    assert (pd.to_datetime(second_test["ingested_at"], utc=True) <= cutoff).any()


def test_too_few_new_rows_is_a_skip_not_an_error(
    cloud_context: CloudContext, decisions: str, bucket: str
) -> None:
    table = retraining.ensure_demo_table(cloud_context)
    spec = _spec(table, decisions, watermark="2030-01-01")
    window, exported = retraining.export_window(cloud_context, spec, f"{bucket}/none")
    assert exported is None and window.retrain is False and window.new_rows == 0
    assert window.reason == "no new rows since 2030-01-01T00:00:00Z"
    # The watermark stays: the next run reads the same window again.
    assert retraining.iso(window.new_watermark) == "2030-01-01T00:00:00Z"
    few = retraining.plan_window(
        cloud_context, _spec(table, decisions, watermark="2024-01-10T22:00:00Z", min_new_rows=1000)
    )
    assert few.retrain is False and 0 < few.new_rows < 1000
    assert few.reason == (
        f"{few.new_rows} new rows since 2024-01-10T22:00:00Z, fewer than min_new_rows=1000"
    )
    enough = retraining.plan_window(cloud_context, _spec(table, decisions))
    assert enough.retrain is True and enough.reason == f"{enough.new_rows} new rows"


def test_a_broken_source_still_fails(cloud_context: CloudContext, decisions: str) -> None:
    from google.api_core.exceptions import BadRequest, NotFound

    table = retraining.ensure_demo_table(cloud_context)
    missing = f"{cloud_context.project}.{_unique('nope')}.events"
    with pytest.raises(NotFound):
        retraining.plan_window(cloud_context, _spec(missing, decisions))
    with pytest.raises(BadRequest, match="no_such_column"):
        retraining.plan_window(
            cloud_context, _spec(table, decisions, timestamp_column="no_such_column")
        )
    with pytest.raises(SpecError, match="timestamp_column"):
        retraining.plan_window(cloud_context, _spec(table, decisions, timestamp_column="a b"))
    with pytest.raises(SpecError, match="window_end"):
        retraining.plan_window(
            cloud_context,
            _spec(table, decisions, watermark="2024-01-05", window_end="2024-01-04"),
        )


def test_a_skipped_decision_keeps_the_watermark_and_reads_as_skipped(
    cloud_context: CloudContext, decisions: str
) -> None:
    table = retraining.ensure_demo_table(cloud_context)
    reason = "no new rows since 2024-01-04T00:00:00Z"
    row = retraining.skipped_decision(
        cloud_context, "no-such-model", table, "2024-01-04T00:00:00Z", reason
    )
    assert row.challenger_version == "" and row.champion_version == "" and not row.promoted
    retraining.record_decision(cloud_context, row, decisions)
    [stored] = retraining.list_decisions(cloud_context, decisions)
    assert stored["challenger_version"] is None and stored["reason"] == reason
    assert retraining.verdict(stored) == "skipped"
    assert retraining.iso(stored["new_watermark"]) == "2024-01-04T00:00:00Z"
    assert retraining.verdict({"challenger_version": "m@1", "promoted": True}) == "promoted"
    assert retraining.verdict({"challenger_version": "m@1", "promoted": False}) == (
        "kept the champion"
    )
    assert (
        retraining.iso(retraining.last_watermark(cloud_context, decisions, "no-such-model", table))
        == "2024-01-04T00:00:00Z"
    )


def test_recorded_decision_moves_the_default_watermark(
    cloud_context: CloudContext, decisions: str
) -> None:
    table = retraining.ensure_demo_table(cloud_context)
    assert retraining.list_decisions(cloud_context, decisions) == []
    assert retraining.last_watermark(cloud_context, decisions, "m", table) is None
    decision = retraining.Decision(
        model_display_name="m",
        source_table=table,
        watermark_used="",
        new_watermark="2024-01-04T00:00:00Z",
        train_rows=10,
        test_rows=3,
        metric="accuracy",
        champion_version="",
        champion_metric=None,
        challenger_version="projects/p/locations/l/models/1@1",
        challenger_metric=0.75,
        promoted=True,
        reason="no champion",
    )
    retraining.record_decision(cloud_context, decision, decisions)
    rows = retraining.list_decisions(cloud_context, decisions, model_display_name="m")
    assert len(rows) == 1
    assert rows[0]["champion_metric"] is None and rows[0]["challenger_metric"] == 0.75
    assert rows[0]["watermark_used"] is None and rows[0]["promoted"] is True
    assert rows[0]["champion_version"] is None
    window = retraining.plan_window(cloud_context, _spec(table, decisions))
    assert retraining.iso(window.watermark_used) == "2024-01-04T00:00:00Z"
    assert retraining.list_decisions(cloud_context, decisions, model_display_name="other") == []
