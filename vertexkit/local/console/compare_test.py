"""Comparing runs: parameters and metrics side by side, the rows that differ highlighted."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from vertexkit.local.console import compare
from vertexkit.local.console.runs_test import JOB


def run(name: str, threshold: float, accuracy: float, extra: dict | None = None) -> dict:
    job = copy.deepcopy(JOB)
    job["name"] = f"projects/p/locations/l/pipelineJobs/{name}"
    job["displayName"] = name
    job["runtimeConfig"]["parameterValues"]["threshold"] = threshold
    metrics = {"display_name": "m", "accuracy": accuracy, "loss": 0.25, **(extra or {})}
    confusion = {"confusionMatrix": {"annotationSpecs": [{"displayName": "a"}], "rows": [[3]]}}
    job["jobDetail"]["taskDetails"][1]["outputs"] = {
        "metrics": {"artifacts": [{"schemaTitle": "system.Metrics", "metadata": metrics}]},
        "cm": {
            "artifacts": [{"schemaTitle": "system.ClassificationMetrics", "metadata": confusion}]
        },
    }
    return job


def row_of(html: str, key: str) -> str:
    pattern = rf'<tr( class="differs")?><th scope="row">{re.escape(key)}</th>.*?</tr>'
    match = re.search(pattern, html)
    assert match, f"no row {key!r}"
    return match.group(0)


def test_metrics_are_read_from_metrics_artifacts_by_task_and_output() -> None:
    assert compare.run_metrics(run("a", 0.5, 0.9)) == {
        "train.metrics.accuracy": 0.9,
        "train.metrics.loss": 0.25,
    }


def test_page_puts_runs_side_by_side_and_highlights_only_the_differences() -> None:
    html = compare.compare_page([run("a", 0.5, 0.9), run("b", 0.7, 0.9, {"f1": 0.8})])
    assert row_of(html, "threshold").startswith('<tr class="differs">')
    assert "<td>0.5</td><td>0.7</td>" in row_of(html, "threshold")
    assert not row_of(html, "mode").startswith('<tr class="differs">')  # both the default
    assert not row_of(html, "train.metrics.accuracy").startswith('<tr class="differs">')
    assert row_of(html, "train.metrics.f1").startswith('<tr class="differs">')
    assert "<td>—</td><td>0.8</td>" in row_of(html, "train.metrics.f1")  # only run b has it
    assert html.count('class="chart confusion-matrix"') == 2
    assert 'href="/console/projects/p/locations/l/pipelineJobs/a"' in html


@pytest.mark.parametrize(
    ("names", "message"),
    [
        pytest.param(["projects/p/locations/l/pipelineJobs/a"], "got 1", id="one-run"),
        pytest.param(
            ["projects/p/locations/l/pipelineJobs/a"] * 2, "got 1", id="the-same-run-twice"
        ),
        pytest.param(
            [f"projects/p/locations/l/pipelineJobs/r{i}" for i in range(11)], "got 11", id="eleven"
        ),
        pytest.param(
            ["projects/p/locations/l/pipelineJobs/a", "projects/p/locations/l/models/m"],
            "not a pipeline job",
            id="not-a-run",
        ),
    ],
)
def test_a_bad_selection_is_refused_naming_the_field(names: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message) as refused:
        compare.checked_run_names(names)
    assert str(refused.value).startswith("run: ")


def test_values_compare_by_content_not_identity() -> None:
    values: list[dict[str, Any]] = [{"p": {"a": [1, 2]}}, {"p": {"a": [1, 2]}}]
    assert compare.side_by_side(values) == [("p", [{"a": [1, 2]}, {"a": [1, 2]}], False)]
