"""The retraining decisions page, read from a decision table written by `record_decision`
(the pipeline's own step) through the real BigQuery client."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest
import requests

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.projects import numbered_name
from vertexkit.runtime.retraining import Decision, record_decision, skipped_decision

MODEL = "projects/local-project/locations/us-central1/models/42"
SHOWN_MODEL = numbered_name(MODEL)  # the console shows names as Vertex does: by number


def decision(run_time: str, champion: float | None, challenger: float, promoted: bool) -> Decision:
    return Decision(
        model_display_name="penguins",
        source_table="local-project.vertexkit_demo.penguins_events",
        watermark_used="",
        new_watermark=run_time,
        train_rows=100,
        test_rows=20,
        metric="accuracy",
        champion_version=f"{MODEL}@1" if champion is not None else "",
        champion_metric=champion,
        challenger_version=f"{MODEL}@2",
        challenger_metric=challenger,
        promoted=promoted,
        reason="<b>better</b>" if promoted else "not better",
        run_time=run_time,
    )


@pytest.fixture
def decisions_table(cloud_context: CloudContext) -> str:
    table = f"local-project.console_{uuid.uuid4().hex[:8]}.decisions"
    for row in [
        decision("2026-01-01T00:00:00Z", None, 0.8, True),
        decision("2026-01-03T00:00:00Z", 0.8, 0.9, True),
        decision("2026-01-02T00:00:00Z", 0.8, 0.7, False),
    ]:
        record_decision(cloud_context, row, decisions_table=table)
    return table


def test_decisions_page_charts_each_decision_newest_first_in_the_table(
    local_cloud: LocalCloud, decisions_table: str
) -> None:
    page = requests.get(
        f"{local_cloud.url}/console/decisions", params={"table": decisions_table}, timeout=30
    )
    assert page.status_code == 200
    assert "(3 decisions)" in page.text
    assert page.text.count('class="challenger promoted"') == 2
    assert page.text.count('class="challenger kept-champion"') == 1
    times = [t for t in ("2026-01-03 00:00:00", "2026-01-02 00:00:00", "2026-01-01 00:00:00")]
    positions = [page.text.index(f"<td>{t}</td>") for t in times]
    assert positions == sorted(positions)
    assert f'href="/console/{SHOWN_MODEL}"' in page.text
    assert "&lt;b&gt;better&lt;/b&gt;" in page.text and "<b>better" not in page.text


def test_a_skipped_run_reads_skipped_with_its_reason_and_no_chart_point(
    local_cloud: LocalCloud, decisions_table: str, cloud_context: CloudContext
) -> None:
    skipped = skipped_decision(
        cloud_context,
        "penguins",
        "local-project.vertexkit_demo.penguins_events",
        "2026-01-03T00:00:00Z",
        "no new rows since 2026-01-03T00:00:00Z",
        metric="accuracy",
    )
    record_decision(
        cloud_context,
        replace(skipped, run_time="2026-01-04T00:00:00Z"),
        decisions_table=decisions_table,
    )
    page = requests.get(
        f"{local_cloud.url}/console/decisions", params={"table": decisions_table}, timeout=30
    ).text
    assert "(4 decisions)" in page
    newest = page[page.index("<td>2026-01-04 00:00:00</td>") :].split("</tr>", 1)[0]
    assert '<em class="skipped">skipped</em>' in newest
    assert "no new rows since 2026-01-03T00:00:00Z" in newest
    # The chart still has the three challengers only: a skip has no metric to plot.
    assert page.count('class="challenger ') == 3


def test_schedules_page_links_to_the_decisions(local_cloud: LocalCloud) -> None:
    page = requests.get(f"{local_cloud.url}/console/schedules", timeout=30).text
    assert 'href="/console/decisions"' in page


@pytest.mark.parametrize(
    ("table", "status", "shown"),
    [
        pytest.param(
            "local-project.console_nothing_here.decisions",
            200,
            "No decisions recorded yet",
            id="not-written-yet",
        ),
        pytest.param(
            "no dots", 400, "table: &#x27;no dots&#x27; is not a table name", id="bad-name"
        ),
        pytest.param(
            "bigquery-public-data.ml_datasets.penguins",
            400,
            "has no column &#x27;run_time&#x27;",
            id="not-a-decision-table",
        ),
    ],
)
def test_decisions_page_explains_what_it_cannot_show(
    local_cloud: LocalCloud, table: str, status: int, shown: str
) -> None:
    page = requests.get(f"{local_cloud.url}/console/decisions", params={"table": table}, timeout=30)
    assert page.status_code == status
    assert shown in page.text


def test_decisions_page_reads_the_pipeline_default_table(local_cloud: LocalCloud) -> None:
    page = requests.get(f"{local_cloud.url}/console/decisions", timeout=30)
    assert page.status_code == 200
    assert "local-project:vertexkit_decisions.retraining_decisions" in page.text
