"""What the run page reads from a job: inputs resolved through groups, logs, gcp_resources."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vertexkit.local.console import runs

JOB: dict[str, Any] = {
    "name": "projects/p/locations/l/pipelineJobs/run-1",
    "runtimeConfig": {"parameterValues": {"threshold": 0.5}},
    "pipelineSpec": {
        "root": {
            "inputDefinitions": {"parameters": {"threshold": {}, "mode": {"defaultValue": "x"}}},
            "dag": {
                "tasks": {
                    "train": {"componentRef": {"name": "comp-train"}},
                    "condition-1": {
                        "componentRef": {"name": "comp-condition-1"},
                        "inputs": {
                            "parameters": {
                                "pipelinechannel--threshold": {
                                    "componentInputParameter": "threshold"
                                },
                                "pipelinechannel--train-score": {
                                    "taskOutputParameter": {
                                        "producerTask": "train",
                                        "outputParameterKey": "score",
                                    }
                                },
                            },
                            "artifacts": {
                                "pipelinechannel--train-model": {
                                    "taskOutputArtifact": {
                                        "producerTask": "train",
                                        "outputArtifactKey": "model",
                                    }
                                }
                            },
                        },
                    },
                }
            },
        },
        "components": {
            "comp-condition-1": {
                "dag": {
                    "tasks": {
                        "deploy": {
                            "componentRef": {"name": "comp-deploy"},
                            "inputs": {
                                "parameters": {
                                    "threshold": {
                                        "componentInputParameter": "pipelinechannel--threshold"
                                    },
                                    "score": {
                                        "componentInputParameter": "pipelinechannel--train-score"
                                    },
                                    "mode": {"runtimeValue": {"constant": "canary"}},
                                },
                                "artifacts": {
                                    "model": {
                                        "componentInputArtifact": "pipelinechannel--train-model"
                                    }
                                },
                            },
                        }
                    }
                }
            }
        },
    },
    "jobDetail": {
        "taskDetails": [
            {"taskId": "1", "taskName": "run-1", "state": "RUNNING"},
            {
                "taskId": "2",
                "parentTaskId": "1",
                "taskName": "train",
                "state": "SUCCEEDED",
                "execution": {"metadata": {"output:score": 0.93}},
                "outputs": {
                    "model": {"artifacts": [{"uri": "gs://b/model", "schemaTitle": "system.Model"}]}
                },
            },
        ]
    },
}


def test_parameters_resolve_through_the_enclosing_group() -> None:
    parameters, artifacts = runs.task_inputs(JOB, "deploy")
    assert parameters == {"threshold": 0.5, "score": 0.93, "mode": "canary"}
    assert artifacts["model"][0]["uri"] == "gs://b/model"


def test_task_states_leave_out_the_root_dag() -> None:
    assert runs.task_states(JOB) == {"train": "SUCCEEDED"}


def test_pipeline_parameters_fill_defaults() -> None:
    assert runs.pipeline_parameters(JOB) == {"threshold": 0.5, "mode": "x"}


@pytest.mark.parametrize(
    ("uri", "local"),
    [
        pytest.param(
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/customJobs/9",
            "projects/p/locations/l/customJobs/9",
            id="vertex-job-links-to-its-page",
        ),
        pytest.param(
            "https://www.googleapis.com/bigquery/v2/projects/p/jobs/j",
            None,
            id="bigquery-job-has-no-page",
        ),
    ],
)
def test_gcp_resources(uri: str, local: str | None) -> None:
    value = json.dumps({"resources": [{"resourceType": "CustomJob", "resourceUri": uri}]})
    assert runs.gcp_resource_links(value) == [("CustomJob", uri, local)]


def test_task_log_is_the_task_own_lines() -> None:
    text = (
        "12:00:00.000 - INFO - Executing task \x1b[96m'a'\x1b[0m\n  a says hi\n"
        "12:00:01.000 - INFO - Task \x1b[96m'a'\x1b[0m finished with status SUCCESS\n"
        "12:00:01.100 - INFO - Executing task 'b'\n  b says hi\n"
        "12:00:02.000 - INFO - Task 'b' finished with status SUCCESS\n"
    )
    log = runs.task_log(text, "b")
    assert "b says hi" in log and "a says hi" not in log
    assert runs.task_log(text, "c") == ""


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        pytest.param({}, "", id="not-started"),
        pytest.param(
            {"startTime": "2026-01-01T00:00:00Z", "endTime": "2026-01-01T00:00:12.5Z"},
            "12.5 s",
            id="seconds",
        ),
        pytest.param(
            {"startTime": "2026-01-01T00:00:00Z", "endTime": "2026-01-01T00:02:05Z"},
            "2 min 05 s",
            id="minutes",
        ),
    ],
)
def test_duration(resource: dict[str, str], expected: str) -> None:
    assert runs.duration(resource) == expected
