"""The compiled `retraining` pipeline, three times on one local cloud (kfp.local, real clients).

The source grows in three windows of the demo penguins table (ten days of `ingested_at`):
1. days 0-4, trained crippled (one depth-1 boosting stage): no champion, so it is promoted;
2. days 4-7 with the TRAINING rows' labels shuffled (the fixed holdout stays true): a worse
   model, so the champion keeps serving;
3. days 7-10, clean, full forest: a better model, promoted, and the endpoint's traffic moves.
Each run takes an empty watermark, so windows 2 and 3 come from the decision history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from vertexkit.cli import app, decisions
from vertexkit.compiler import compile_to_text
from vertexkit.context import VERTEX_ENV
from vertexkit.local import LocalCloud
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

    def run(params: dict[str, Any]) -> FinishedRun:
        return run_pipeline_job(
            "retraining",
            base | params,
            pipeline_yaml,
            home=home,
            emit=lambda _: None,
            while_running=lambda r: served.append(_serving(r, base["endpoint_display_name"])),
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
