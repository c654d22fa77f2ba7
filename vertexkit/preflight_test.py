"""Preflight applies each component's own input rules to a compiled pipeline, before any task.

The probe pipeline below is a user's pipeline: our components wired to parameters with names of
its own (not the built-in pipelines' conventional ones), one deploy inside `dsl.If`, and a
component of the user's own whose inputs share our names but are none of our business.
"""

# No `from __future__ import annotations`: KFP reads the annotations as real types.

import copy
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from kfp import compiler, dsl
from typer.testing import CliRunner

from vertexkit.cli import app
from vertexkit.components import (
    compare_models,
    custom_training_job,
    deploy_model,
    evaluate_model,
    gcs_dataset,
    hyperparameter_tuning_job,
    upload_model,
)
from vertexkit.preflight import PreflightError, check_pipeline
from vertexkit.runner import effective_values


@dsl.component
def users_own_step(timeout: str, replica_count: int) -> str:
    return f"{timeout}{replica_count}"


@dsl.pipeline(name="preflight-probe")
def probe(
    region: str = "us-central1",
    job_name: str = "train",
    replicas: int = 1,
    wait: str = "3600s",
    disk_gb: int = 100,
    trainer_framework: str = "",
    serving_framework: str = "sklearn",
    model_name: str = "probe-model",
    eval_task: str = "classification",
    metric_name: str = "accuracy",
    better: str = "maximize",
    margin: float = 0.0,
    endpoint_name: str = "probe-endpoint",
    share: int = 100,
    serving_machine: str = "n1-standard-2",
    gpu: str = "",
    gpus: int = 0,
    low: int = 1,
    high: int = 1,
    goal: str = "MAXIMIZE",
    trials: int = 4,
    parallel: int = 2,
) -> None:
    data = gcs_dataset(uri="gs://probe/data.csv", format="csv")
    train = custom_training_job(
        display_name=job_name,
        base_output_directory="gs://probe/training",
        container_image_uri="us-docker.pkg.dev/probe/trainers/app:latest",
        framework=trainer_framework,
        replica_count=replicas,
        timeout=wait,
        boot_disk_size_gb=disk_gb,
        location=region,
    )
    model = upload_model(
        display_name=model_name,
        model_dir=train.outputs["model"],
        framework=serving_framework,
        location=region,
    )
    evaluate_model(model=model.outputs["model"], test_data=data.outputs["dataset"], task=eval_task)
    compare = compare_models(
        challenger=model.outputs["model"],
        metric=metric_name,
        direction=better,
        min_improvement=margin,
    )
    with dsl.If(compare.outputs["Output"] == True):  # noqa: E712 (a KFP condition)
        deploy_model(
            model=model.outputs["model"],
            endpoint_display_name=endpoint_name,
            traffic_percentage=share,
            machine_type=serving_machine,
            accelerator_type=gpu,
            accelerator_count=gpus,
            min_replica_count=low,
            max_replica_count=high,
            location=region,
        )
    hyperparameter_tuning_job(
        display_name="probe-tuning",
        base_output_directory="gs://probe/tuning",
        metric_id="accuracy",
        goal=goal,
        parameters=[{"parameter_id": "lr", "type": "double", "min": 0.01, "max": 1.0}],
        max_trial_count=trials,
        parallel_trial_count=parallel,
        container_image_uri="us-docker.pkg.dev/probe/trainers/app:latest",
    )
    users_own_step(timeout="whenever", replica_count=-3)


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("probe") / "probe.yaml"
    compiler.Compiler().compile(probe, str(path))
    return yaml.safe_load(path.read_text())


def defaults(spec: dict[str, Any]) -> dict[str, Any]:
    return effective_values(yaml.safe_dump(spec), {})


def test_the_probe_pipeline_passes_as_written(spec: dict[str, Any]) -> None:
    check_pipeline(spec, defaults(spec))  # the user's own step's "timeout" is not ours


# (pipeline parameter, bad value, what the message says) -- one row per component rule.
PARAMETER_ROWS = {
    "training-region": ("region", "mars-central1", "unknown Vertex AI region"),
    "training-display-name-long": ("job_name", "x" * 2000, "at most 128"),
    "training-display-name-empty": ("job_name", "", "non-empty"),
    "training-replica-count": ("replicas", -1, "must be >= 1"),
    "training-timeout": ("wait", "abc", "duration in seconds"),
    "training-disk": ("disk_gb", 10, "100..64000"),
    "training-framework": ("trainer_framework", "nope", "unknown framework 'nope'"),
    "upload-framework": ("serving_framework", "pytorch", "unknown framework 'pytorch'"),
    "upload-display-name": ("model_name", "", "non-empty"),
    "evaluate-task": ("eval_task", "ranking", "'ranking' is not allowed"),
    "compare-metric": ("metric_name", "happiness", "unknown metric 'happiness'"),
    "compare-direction": ("better", "sideways", "'sideways' is not allowed"),
    "compare-margin": ("margin", -0.5, "must be >= 0"),
    "deploy-endpoint-name": ("endpoint_name", "e" * 129, "at most 128"),
    "deploy-traffic": ("share", 150, "within 0..100"),
    "deploy-min-replicas": ("low", 0, "must be >= 1"),
    "deploy-replica-range": ("high", 0, "must be >= 1"),
    "deploy-serving-machine": ("serving_machine", "n1-giant-7", "unknown machine type"),
    "tuning-goal": ("goal", "BEST", "'BEST' is not allowed"),
    "tuning-trials": ("trials", 0, "must be >= 1"),
    "tuning-parallel-above-max": ("parallel", 9, "above max_trial_count"),
}


@pytest.mark.parametrize(
    "parameter,value,reason", PARAMETER_ROWS.values(), ids=PARAMETER_ROWS.keys()
)
def test_a_bad_pipeline_parameter_is_named(
    spec: dict[str, Any], parameter: str, value: Any, reason: str
) -> None:
    with pytest.raises(PreflightError) as refused:
        check_pipeline(spec, defaults(spec) | {parameter: value})
    assert str(refused.value).startswith(f"--param {parameter}: ")
    assert reason in str(refused.value)


def test_serving_gpu_the_machine_cannot_take(spec: dict[str, Any]) -> None:
    values = defaults(spec) | {"gpu": "NVIDIA_H100_80GB", "gpus": 1}
    with pytest.raises(PreflightError, match=r"--param gpu: NVIDIA_H100_80GB cannot be attached"):
        check_pipeline(spec, values)


def test_replica_range_names_the_max(spec: dict[str, Any]) -> None:
    values = defaults(spec) | {"low": 3, "high": 2}
    with pytest.raises(PreflightError, match=r"--param high: 2 is below min_replica_count 3"):
        check_pipeline(spec, values)


def with_constant(spec: dict[str, Any], task: str, name: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(spec)
    inputs = changed["root"]["dag"]["tasks"][task]["inputs"]["parameters"]
    inputs[name] = {"runtimeValue": {"constant": value}}
    return changed


CONSTANT_ROWS = {
    "training-timeout": ("custom-training-job", "timeout", "abc"),
    "training-replica-count": ("custom-training-job", "replica_count", -1),
    "training-labels": ("custom-training-job", "labels", {"Team": "ml"}),
    "upload-labels": ("upload-model", "labels", {"team": "v" * 64}),
    "tuning-algorithm": ("hyperparameter-tuning-job", "algorithm", "BAYES"),
    "tuning-failed-trials": ("hyperparameter-tuning-job", "max_failed_trial_count", -1),
    "compare-metric": ("compare-models", "metric", "nope"),
}


@pytest.mark.parametrize("task,name,value", CONSTANT_ROWS.values(), ids=CONSTANT_ROWS.keys())
def test_a_bad_constant_names_the_task_and_input(
    spec: dict[str, Any], task: str, name: str, value: Any
) -> None:
    with pytest.raises(PreflightError, match=rf"^task {task}, input {name}"):
        check_pipeline(with_constant(spec, task, name, value), defaults(spec))


def test_inside_a_condition_the_deploy_task_is_checked(spec: dict[str, Any]) -> None:
    condition = next(name for name in spec["components"] if name.startswith("comp-condition"))
    deploy = spec["components"][condition]["dag"]["tasks"]["deploy-model"]
    assert "componentInputParameter" in deploy["inputs"]["parameters"]["traffic_percentage"]
    with pytest.raises(PreflightError, match=r"task deploy-model, input traffic_percentage"):
        check_pipeline(spec, defaults(spec) | {"share": -1})


PROBE_MODULE = """
from vertexkit.preflight_test import probe
"""


def test_vertexkit_run_refuses_before_the_local_cloud_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "probe_pipeline.py").write_text(textwrap.dedent(PROBE_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "probe_pipeline", raising=False)
    home = tmp_path / "home"
    args = ["run", "probe_pipeline:probe", "--home", str(home), "--param", "wait=abc"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "--param wait: " in " ".join(result.output.split())
    assert not home.exists()  # no local cloud, no bucket, no job: nothing ran
