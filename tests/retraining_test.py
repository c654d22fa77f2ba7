"""The compiled `retraining` pipeline, four times on one local cloud (real clients).

The source grows in three windows of the demo penguins table (ten days of `ingested_at`):
1. days 0-4, trained crippled (one depth-1 boosting stage): no champion, so it is promoted;
2. days 4-7 with the TRAINING rows' labels shuffled (the fixed holdout stays true): a worse
   model, so the champion keeps serving;
3. days 7-10, clean, full forest: a better model, promoted, and the endpoint's traffic moves.
4. no new rows: the run SUCCEEDS with a "skipped" decision, its training tasks NOT_TRIGGERED.
Each run takes an empty watermark, so windows 2 to 4 come from the decision history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests
from rich.console import Console
from typer.testing import CliRunner

from vertexkit.cli import app, decisions
from vertexkit.cli.summary import summarize
from vertexkit.compiler import compile_to_text
from vertexkit.context import VERTEX_ENV
from vertexkit.local import LocalCloud
from vertexkit.pipeline_jobs import PipelineJobFailed
from vertexkit.runner import FinishedRun, run_pipeline_job
from vertexkit.runtime import retraining
from vertexkit.runtime.bigquery import run_query_job, split_predicates

WEAK = {"model_type": "gradient_boosting", "n_estimators": 1, "max_depth": 1}
STRONG = {"model_type": "random_forest", "n_estimators": 20, "max_depth": 6}
SPECIES = (
    "Adelie Penguin (Pygoscelis adeliae)",
    "Chinstrap penguin (Pygoscelis antarctica)",
    "Gentoo penguin (Pygoscelis papua)",
)


def _append_days(home: Path, table: str, first_day: int, last_day: int, shuffle: bool) -> None:
    """Appends demo rows whose ingested_at falls in [first_day, last_day) to `table`."""
    with LocalCloud(home=home) as cloud:
        ctx = cloud.context()
        demo = retraining.ensure_demo_table(ctx)
        retraining.ensure_dataset(ctx, table.rsplit(".", 1)[0], None)
        species = "src.species"
        if shuffle:  # random labels on training rows only: the holdout stays the truth
            holdout = split_predicates("CAST(src.row_id AS STRING)", retraining.FRACTIONS)["test"]
            pick = "MOD(ABS(FARM_FINGERPRINT(CONCAT('shuffle', CAST(src.row_id AS STRING)))), 3)"
            random_label = "CASE {} WHEN 0 THEN '{}' WHEN 1 THEN '{}' ELSE '{}' END".format(
                pick, *SPECIES
            )
            species = f"IF({holdout}, src.species, {random_label})"
        start = "TIMESTAMP_ADD(TIMESTAMP '2024-01-01 00:00:00+00', INTERVAL {} DAY)"
        query = (
            f"SELECT * REPLACE ({species} AS species) FROM `{demo}` AS src "
            f"WHERE src.ingested_at >= {start.format(first_day)} "
            f"AND src.ingested_at < {start.format(last_day)}"
        )
        run_query_job(ctx, query, destination=table, write_disposition="WRITE_APPEND")


def _serving(run: FinishedRun, endpoint_name: str) -> dict[str, Any]:
    """The endpoint's traffic and the model version that answers a prediction."""
    endpoints = run.context.endpoint_client().list_endpoints(
        request={"parent": run.context.parent, "filter": f'display_name="{endpoint_name}"'}
    )
    endpoint = next(iter(endpoints))
    instance = ["Biscoe", 48.6, 16.0, 230.0, 5800.0, "MALE"]
    answer = run.context.prediction_client().predict(endpoint=endpoint.name, instances=[instance])
    return {
        "traffic": dict(endpoint.traffic_split),
        "versions": {d.id: d.model_version_id for d in endpoint.deployed_models},
        "answered_by": answer.model_version_id,
    }


def test_retraining_keeps_a_worse_challenger_out_and_promotes_a_better_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    table = "local-project.retraining_src.events"
    pipeline_yaml = compile_to_text("retraining")
    base = {
        "source_table": table,
        "model_display_name": "retrain-test",
        "endpoint_display_name": "retrain-test-endpoint",
        "min_new_rows": 10,
    }
    served: list[dict[str, Any]] = []

    shown = Console(width=400, record=True)

    def while_running(finished: FinishedRun) -> None:
        served.append(_serving(finished, base["endpoint_display_name"]))
        summarize(shown, finished)  # `vertexkit run`'s summary, while the endpoint serves

    def run(params: dict[str, Any]) -> FinishedRun:
        return run_pipeline_job(
            "retraining",
            base | params,
            pipeline_yaml,
            home=home,
            emit=lambda _: None,
            while_running=while_running,
        )

    _append_days(home, table, 0, 4, shuffle=False)
    first = run(WEAK)
    assert first.outputs["promoted"] is True
    champion_version = served[0]["answered_by"]

    _append_days(home, table, 4, 7, shuffle=True)
    second = run(STRONG)
    assert second.outputs["promoted"] is False, second.outputs["decision"]
    assert served[1]["answered_by"] == champion_version
    assert list(served[1]["versions"].values()) == [champion_version]

    _append_days(home, table, 7, 10, shuffle=False)
    third = run(STRONG)
    assert third.outputs["promoted"] is True, third.outputs["decision"]
    new_version = served[2]["answered_by"]
    assert new_version != champion_version
    assert list(served[2]["traffic"].values()) == [100]
    assert list(served[2]["versions"].values()) == [new_version]

    with LocalCloud(home=home) as cloud:
        history = retraining.list_decisions(cloud.context(), model_display_name="retrain-test")
    newest_first = [row["promoted"] for row in history]
    assert newest_first == [True, False, True]
    third_row, second_row, first_row = history
    assert first_row["watermark_used"] is None and first_row["champion_version"] is None
    assert second_row["watermark_used"] == first_row["new_watermark"]
    assert third_row["watermark_used"] == second_row["new_watermark"]
    assert second_row["challenger_metric"] < second_row["champion_metric"]
    assert third_row["challenger_metric"] > third_row["champion_metric"]
    assert third_row["champion_version"].endswith(f"@{champion_version}")
    assert third_row["challenger_version"].endswith(f"@{new_version}")

    # The CLI reads the same table (from this home, not a cloud another test left in the env).
    monkeypatch.delenv(VERTEX_ENV, raising=False)
    monkeypatch.setattr(decisions, "console", Console(width=400))  # one line per row
    listed = CliRunner().invoke(
        app, ["decisions", "list", "--home", str(home), "--model", "retrain-test"]
    )
    assert listed.exit_code == 0, listed.output
    assert listed.output.count("retrain-test") == 3
    assert f"@{new_version} accuracy=" in listed.output
    rows = [line for line in listed.output.splitlines() if "retrain-test" in line]
    assert [" yes " in line for line in rows] == [True, False, True]

    # A fourth run with no new rows: SUCCEEDED, nothing trained, the decision "skipped".
    fourth = run(STRONG)
    assert fourth.job["state"] == "PIPELINE_STATE_SUCCEEDED"
    states = {t["taskName"]: t["state"] for t in fourth.job["jobDetail"]["taskDetails"]}
    # The branch holding every training task is not triggered; none of its tasks ran.
    assert states["new-data"] == "NOT_TRIGGERED", states
    assert states["no-new-data"] == states["record-skip"] == "SUCCEEDED", states
    for task in ("evaluate-champion", "custom-training-job", "upload-model", "record-decision"):
        assert states.get(task, "NOT_TRIGGERED") == "NOT_TRIGGERED", states
    since = f"no new rows since {retraining.iso(third_row['new_watermark'])}"
    assert fourth.outputs["retrained"] is False and fourth.outputs["promoted"] is False
    assert fourth.outputs["decision"] == since
    assert fourth.outputs["record"]["reason"] == since and fourth.outputs["record"]["run_time"]
    assert fourth.outputs["record"]["champion_version"].endswith(f"@{new_version}")
    assert fourth.outputs["metrics"]["metadata"] == {"retrained": 0}
    assert served[3]["answered_by"] == new_version  # the endpoint is left as it was
    summary = shown.export_text()  # the four runs' summaries; only the last one skipped
    assert summary.count("skipped: ") == 1 and f"skipped: {since}" in summary, summary

    listed = CliRunner().invoke(
        app, ["decisions", "list", "--home", str(home), "--model", "retrain-test"]
    )
    newest = next(line for line in listed.output.splitlines() if "retrain-test" in line)
    assert " skipped " in newest and since in newest, listed.output
    with LocalCloud(home=home) as cloud:
        skipped = retraining.list_decisions(cloud.context(), model_display_name="retrain-test")[0]
        page = requests.get(f"{cloud.url}/console/decisions", timeout=30).text
    assert skipped["watermark_used"] == skipped["new_watermark"] == third_row["new_watermark"]
    assert '<em class="skipped">skipped</em>' in page and since in page


def test_a_broken_source_fails_the_run(tmp_path: Path) -> None:
    """Only "too few new rows" is a skip: a column the table lacks still fails the window."""
    home = tmp_path / "home"
    table = "local-project.retraining_src.events"
    _append_days(home, table, 0, 2, shuffle=False)
    params = {"source_table": table, "timestamp_column": "no_such_column"}
    with pytest.raises(PipelineJobFailed, match="retraining-window"):
        run_pipeline_job("retraining", params, compile_to_text("retraining"), home=home, emit=print)
    with LocalCloud(home=home) as cloud:
        context = cloud.context()
        [listed] = context.pipeline_client().list_pipeline_jobs(parent=context.parent)
        job = context.pipeline_client().get_pipeline_job(name=listed.name)
        states = {t.task_name: t.state.name for t in job.job_detail.task_details}
        errors = {t.task_name: t.error.message for t in job.job_detail.task_details}
        assert retraining.list_decisions(context) == []
    assert job.state.name == "PIPELINE_STATE_FAILED"
    assert states["retraining-window"] == "FAILED", states
    assert 'does not have a column named "no_such_column"' in errors["retraining-window"]
    assert "record-skip" not in states and "upload-model" not in states, states
