"""Page builders: what a run page shows, and that untrusted artifact content stays inert."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from vertexkit.local.console import pages
from vertexkit.local.console.runs_test import JOB

TOKEN = "t0ken"


def with_outputs(state: str, **artifacts: dict[str, Any]) -> dict[str, Any]:
    job = copy.deepcopy(JOB)
    job["state"] = state
    train = job["jobDetail"]["taskDetails"][1]
    train["outputs"] = {name: {"artifacts": [a]} for name, a in artifacts.items()}
    return job


def page_for(job: dict[str, Any], task: str = "train") -> str:
    return pages.run_page(job, TOKEN, pages.TaskView(task, log="<b>log</b>"))


def test_html_artifact_is_a_sandboxed_frame_never_inline() -> None:
    report = {
        "uri": "gs://b/report.html",
        "schemaTitle": "system.HTML",
        "metadata": {"note": "<script>alert(1)</script>"},
    }
    html = page_for(with_outputs("PIPELINE_STATE_SUCCEEDED", report=report))
    assert (
        '<iframe src="/console/artifact?uri=gs%3A%2F%2Fb%2Freport.html&amp;type=html" sandbox=""'
        in html
    )
    assert "<script>alert(1)" not in html


def test_metrics_are_a_table_and_classification_metrics_a_confusion_matrix() -> None:
    metrics = {"uri": "gs://b/m", "schemaTitle": "system.Metrics", "metadata": {"accuracy": 0.97}}
    confusion = {
        "uri": "gs://b/c",
        "schemaTitle": "system.ClassificationMetrics",
        "metadata": {
            "confusionMatrix": {"annotationSpecs": [{"displayName": "a"}], "rows": [{"row": [3]}]}
        },
    }
    html = page_for(with_outputs("PIPELINE_STATE_SUCCEEDED", metrics=metrics, cm=confusion))
    assert "<td>accuracy</td><td>0.97</td>" in html
    assert 'class="chart confusion-matrix"' in html


@pytest.mark.parametrize(
    ("state", "live"),
    [
        pytest.param("PIPELINE_STATE_RUNNING", True, id="running-polls-and-can-cancel"),
        pytest.param("PIPELINE_STATE_SUCCEEDED", False, id="ended-is-static"),
    ],
)
def test_running_run_polls_and_offers_cancel_with_its_token(state: str, live: bool) -> None:
    html = page_for(with_outputs(state))
    assert (
        'data-live="/console/projects/p/locations/l/pipelineJobs/run-1/state.json"' in html
    ) is live
    assert ('action="/console/actions/cancel"' in html) is live
    assert (f'name="csrf_token" value="{TOKEN}"' in html) is live


@pytest.mark.parametrize(
    ("state", "retry"),
    [
        pytest.param("PIPELINE_STATE_FAILED", True, id="failed"),
        pytest.param("PIPELINE_STATE_CANCELLED", True, id="cancelled"),
        pytest.param("PIPELINE_STATE_SUCCEEDED", False, id="succeeded"),
        pytest.param("PIPELINE_STATE_RUNNING", False, id="running"),
    ],
)
def test_retry_is_offered_where_vertex_offers_it(state: str, retry: bool) -> None:
    html = page_for(with_outputs(state))
    assert ('action="/console/actions/retry"' in html) is retry


def test_runs_list_is_a_compare_form_with_a_checkbox_per_run() -> None:
    html = pages.runs_list([with_outputs("PIPELINE_STATE_SUCCEEDED")], {})
    assert '<form method="get" action="/console/compare"' in html
    assert (
        '<input type="checkbox" name="run" value="projects/p/locations/l/pipelineJobs/run-1"'
        in html
    )


def test_log_and_values_are_escaped() -> None:
    html = page_for(with_outputs("PIPELINE_STATE_SUCCEEDED"))
    assert "&lt;b&gt;log&lt;/b&gt;" in html and "<b>log</b>" not in html


def test_every_task_of_the_spec_is_drawn() -> None:
    html = page_for(with_outputs("PIPELINE_STATE_RUNNING"))
    assert 'data-task="train"' in html and 'data-task="deploy"' in html
    assert 'class="task state-SUCCEEDED selected" data-task="train"' in html


def test_endpoint_page_shows_the_prediction_escaped() -> None:
    endpoint = {
        "name": "projects/p/locations/l/endpoints/1",
        "displayName": "e",
        "deployedModels": [
            {"id": "7", "model": "projects/p/locations/l/models/m", "modelVersionId": "1"}
        ],
        "trafficSplit": {"7": 100},
    }
    html = pages.endpoint_page(endpoint, TOKEN, "[[1]]", result={"predictions": ["<i>x</i>"]})
    assert "&lt;i&gt;x&lt;/i&gt;" in html and "100%" in html
    assert 'action="/console/actions/predict"' in html


def test_model_page_shows_aliases_and_deployments() -> None:
    model = {"name": "projects/p/locations/l/models/m", "displayName": "penguins"}
    versions = [
        {
            "versionId": "1",
            "versionAliases": ["default"],
            "deployedModels": [{"endpoint": "projects/p/locations/l/endpoints/9"}],
        }
    ]
    html = pages.model_page(model, versions, {})
    assert '<span class="alias">default</span>' in html
    assert 'href="/console/projects/p/locations/l/endpoints/9"' in html


def test_model_page_draws_each_evaluation_confusion_matrix_and_roc_curve() -> None:
    model = {"name": "projects/p/locations/l/models/m"}
    evaluation = {
        "displayName": "vertexkit-classification",
        "metrics": {
            "accuracy": 0.9,
            "confusionMatrix": {"annotationSpecs": [{"displayName": "a"}], "rows": [[3.0]]},
            "confidenceMetrics": [
                {"confidenceThreshold": 0.9, "recall": 0.5, "falsePositiveRate": 0.0},
                {"confidenceThreshold": 0.1, "recall": 1.0, "falsePositiveRate": 0.5},
            ],
        },
    }
    html = pages.model_page(model, [{"versionId": "1"}], {"1": [evaluation]})
    assert 'class="chart confusion-matrix"' in html and 'class="chart roc"' in html
    assert "<td>accuracy</td><td>0.9</td>" in html


def test_tuning_page_marks_the_best_trial_for_the_goal() -> None:
    def trial(number: str, value: float) -> dict[str, Any]:
        return {
            "id": number,
            "state": "SUCCEEDED",
            "finalMeasurement": {"metrics": [{"metricId": "loss", "value": value}]},
        }

    job = {
        "name": "projects/p/locations/l/hyperparameterTuningJobs/1",
        "studySpec": {"metrics": [{"metricId": "loss", "goal": "MINIMIZE"}]},
        "trials": [trial("1", 0.5), trial("2", 0.1), trial("3", 0.3)],
    }
    assert pages.best_trial(job) == "2"
    assert 'class="bar best" data-trial="2"' in pages.tuning_job_page(job)
