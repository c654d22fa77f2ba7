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


# A compiled f-string and integers as JSON carries them: `{{$.inputs...}}` in a constant,
# `pipelinechannel--` inputs that only feed it, whole numbers as floats.
TRAIN_JOB: dict[str, Any] = {
    "name": "projects/p/locations/l/pipelineJobs/run-2",
    "state": "PIPELINE_STATE_SUCCEEDED",
    "runtimeConfig": {"parameterValues": {"gcs_root": "gs://b/vk", "n_estimators": 100.0}},
    "pipelineSpec": {
        "root": {
            "inputDefinitions": {
                "parameters": {
                    "gcs_root": {"parameterType": "STRING"},
                    "n_estimators": {"parameterType": "NUMBER_INTEGER", "defaultValue": 50.0},
                }
            },
            "dag": {
                "tasks": {
                    "train": {
                        "componentRef": {"name": "comp-train"},
                        "inputs": {
                            "parameters": {
                                "pipelinechannel--gcs_root": {
                                    "componentInputParameter": "gcs_root"
                                },
                                "pipelinechannel--n_estimators": {
                                    "componentInputParameter": "n_estimators"
                                },
                                "base_output_directory": {
                                    "runtimeValue": {
                                        "constant": "{{$.inputs.parameters"
                                        "['pipelinechannel--gcs_root']}}/training"
                                    }
                                },
                                "args": {
                                    "runtimeValue": {
                                        "constant": [
                                            "--n-estimators={{$.inputs.parameters"
                                            "['pipelinechannel--n_estimators']}}"
                                        ]
                                    }
                                },
                                "replicas": {"runtimeValue": {"constant": 2.0}},
                            }
                        },
                    },
                    "after": {"componentRef": {"name": "comp-after"}},
                }
            },
        },
        "components": {
            "comp-train": {
                "inputDefinitions": {
                    "parameters": {
                        "base_output_directory": {"parameterType": "STRING"},
                        "args": {"parameterType": "LIST"},
                        "replicas": {"parameterType": "NUMBER_INTEGER"},
                        "boot_disk_size_gb": {
                            "parameterType": "NUMBER_INTEGER",
                            "defaultValue": 100.0,
                        },
                        "ratio": {"parameterType": "NUMBER_DOUBLE", "defaultValue": 1.0},
                    }
                }
            }
        },
    },
    "jobDetail": {
        "taskDetails": [
            {"taskId": "1", "taskName": "run-2", "state": "SUCCEEDED"},
            {"taskId": "2", "parentTaskId": "1", "taskName": "train", "state": "SKIPPED"},
        ]
    },
}


def test_task_parameters_are_what_the_task_received_with_their_types() -> None:
    parameters = runs.task_parameters(TRAIN_JOB, "train")
    assert parameters == {
        "base_output_directory": ("gs://b/vk/training", "STRING"),
        "args": (["--n-estimators=100"], "LIST"),
        "replicas": (2, "NUMBER_INTEGER"),
        "boot_disk_size_gb": (100, "NUMBER_INTEGER"),  # the component's default
        "ratio": (1.0, "NUMBER_DOUBLE"),  # a double stays a double
    }
    assert all(type(v) is int for k, (v, _) in parameters.items() if k in ("replicas",))
    assert not any("pipelinechannel--" in json.dumps(v) for v in parameters.values())


def test_recorded_executor_inputs_win_over_the_spec() -> None:
    job = json.loads(json.dumps(TRAIN_JOB))
    job["jobDetail"]["taskDetails"][1]["execution"] = {"metadata": {"input:replicas": 3.0}}
    assert runs.task_parameters(job, "train")["replicas"] == (3, "NUMBER_INTEGER")


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        pytest.param("PIPELINE_STATE_SUCCEEDED", "NOT_TRIGGERED", id="finished-run"),
        pytest.param("PIPELINE_STATE_FAILED", "NOT_TRIGGERED", id="failed-run"),
        pytest.param("PIPELINE_STATE_CANCELLED", "CANCELLED", id="cancelled-run"),
        pytest.param("PIPELINE_STATE_RUNNING", "PENDING", id="running-run"),
    ],
)
def test_a_task_that_never_ran_is_shown_as_vertex_shows_it(state: str, expected: str) -> None:
    job = {**TRAIN_JOB, "state": state}
    shown = runs.shown_task_states(job, ["train", "after"])
    assert shown == {"train": "SKIPPED", "after": expected}
    assert runs.task_label("SKIPPED") == "Cached"
    assert runs.task_label("NOT_TRIGGERED") == "Not triggered"


def test_a_failed_run_error_names_the_failing_task_and_its_cause() -> None:
    job = {
        "state": "PIPELINE_STATE_FAILED",
        "error": {"message": "The DAG failed because some tasks failed."},
        "jobDetail": {
            "taskDetails": [
                {"taskId": "1", "taskName": "r", "state": "FAILED"},
                {
                    "taskId": "2",
                    "parentTaskId": "1",
                    "taskName": "train",
                    "state": "FAILED",
                    "error": {"message": "ValueError: no rows"},
                },
            ]
        },
    }
    assert runs.run_error(job) == (
        "task train failed: ValueError: no rows (The DAG failed because some tasks failed.)"
    )
