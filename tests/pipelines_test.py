"""The built-in pipelines end to end on the local cloud, from their compiled YAML.

Each run starts its own in-process local cloud with a fresh home, exactly as `vertexkit run`
does, and checks what a user would: the model version, the decision, what the endpoint serves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials

from vertexkit import compiler, pipeline_registry, runner
from vertexkit.local import LocalCloud
from vertexkit.local.projects import numbered_name
from vertexkit.runner import FinishedRun

SPECIES = {
    "Adelie Penguin (Pygoscelis adeliae)",
    "Chinstrap penguin (Pygoscelis antarctica)",
    "Gentoo penguin (Pygoscelis papua)",
}


@pytest.mark.parametrize("name", sorted(pipeline_registry.BUILTIN_PIPELINES))
def test_compiled_yaml_is_fresh(name: str) -> None:
    result = compiler.compile_pipeline(name, Path("compiled"), check=True)
    assert not result.stale, (
        f"compiled/{name}.yaml is stale; run `vertexkit compile`\n{result.diff}"
    )


def _serving_state(run: FinishedRun) -> dict[str, Any]:
    """What the endpoint serves and which version is `default`, read through the SDK."""
    from google.cloud import aiplatform

    run.context.init_aiplatform()
    model = aiplatform.Model(run.outputs["model"]["metadata"]["resourceName"])
    versions = model.versioning_registry.list_versions()
    endpoint = aiplatform.Endpoint.list(
        filter=f'display_name="{run.params["endpoint_display_name"]}"'
    )[0]
    deployed = endpoint.list_models()
    default = [v.version_id for v in versions if "default" in (v.version_aliases or [])]
    instance = ["Biscoe", 48.6, 16.0, 230.0, 5800.0, "MALE"]  # a Gentoo by every measure
    return {
        "version_count": len(versions),
        "default": default,
        "deployed_versions": sorted(m.model_version_id for m in deployed),
        "traffic": dict(endpoint.traffic_split),
        "prediction": endpoint.predict(instances=[instance]).predictions[0],
    }


def _cli_views(run: FinishedRun) -> dict[str, str]:
    """`vertexkit models list`, `endpoints list` and `predict` against the running local cloud
    (the run has pointed this process's environment at it)."""
    from typer.testing import CliRunner

    from vertexkit.cli import app

    cli = CliRunner()
    instances = '[["Biscoe", 48.6, 16.0, 230.0, 5800.0, "MALE"]]'
    outputs = {}
    for name, args in {
        "models": ["models", "list"],
        "endpoints": ["endpoints", "list"],
        "predict": ["predict", run.params["endpoint_display_name"], "--instances", instances],
    }.items():
        result = cli.invoke(app, args, env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        outputs[name] = result.output
    return outputs


def _run(
    name: str, home: Path, assignments: list[str], with_cli: bool = False
) -> tuple[FinishedRun, dict[str, Any]]:
    pipeline_yaml, params = runner.prepare(name, assignments)
    state: dict[str, Any] = {}

    def inspect(finished: FinishedRun) -> None:
        state.update(_serving_state(finished))
        if with_cli:
            state["cli"] = _cli_views(finished)

    lines: list[str] = []
    run = runner.run_pipeline_job(
        name, params, pipeline_yaml, home=home, emit=lines.append, while_running=inspect
    )
    state["lines"] = [line.split("  ", 1)[-1].split() for line in lines]
    return run, state


@pytest.mark.slow
def test_training_promotes_then_caches_then_keeps_the_champion(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first, served = _run("training", home, [], with_cli=True)
    assert first.outputs["promoted"] is True
    model_id = first.outputs["model"]["metadata"]["resourceName"].split("/")[-1].split("@")[0]
    assert model_id in served["cli"]["models"] and "default" in served["cli"]["models"]
    assert f"{model_id}@1" in served["cli"]["endpoints"] and "100%" in served["cli"]["endpoints"]
    assert json.loads(served["cli"]["predict"])["predictions"] == [
        "Gentoo penguin (Pygoscelis papua)"
    ]
    assert first.outputs["metrics"]["metadata"]["accuracy"] > 0.9
    assert served["default"] == ["1"] and served["deployed_versions"] == ["1"]
    assert served["prediction"] == "Gentoo penguin (Pygoscelis papua)"
    # the training step's custom job, as it runs and ends, between the task's own lines
    task = "custom-training-job"
    lines = served["lines"]
    job_lines = [i for i, t in enumerate(lines) if t[:3] == [task, "custom", "job"]]
    assert [lines[i][-1] for i in job_lines] == ["RUNNING", "SUCCEEDED"], lines
    assert lines.index([task, "RUNNING"]) < job_lines[0]
    assert job_lines[-1] < next(i for i, t in enumerate(lines) if t[:2] == [task, "SUCCEEDED"])

    # Same parameters: every task is served from cache, so no new version appears.
    cached, served_again = _run("training", home, [])
    executor_states = {
        t["taskName"]: t["state"]
        for t in cached.job["jobDetail"]["taskDetails"]
        if t["taskName"] not in ("challenger-promoted", "batch-predict-requested")
        and t.get("parentTaskId")
    }
    assert set(executor_states.values()) == {"SKIPPED"}, executor_states
    assert (
        cached.outputs["model"]["metadata"]["resourceName"]
        == first.outputs["model"]["metadata"]["resourceName"]
    )
    assert served_again["version_count"] == 1

    # A one-tree, depth-1 forest is worse: version 2 is registered but the champion keeps serving.
    worse, served_after = _run("training", home, ["n_estimators=1", "max_depth=1"])
    assert worse.outputs["promoted"] is False, worse.outputs["decision"]
    assert worse.outputs["model"]["metadata"]["resourceName"].endswith("@2")
    assert (
        worse.outputs["metrics"]["metadata"]["accuracy"]
        < first.outputs["metrics"]["metadata"]["accuracy"]
    )
    assert served_after["version_count"] == 2
    assert served_after["default"] == ["1"]
    assert served_after["deployed_versions"] == ["1"]
    assert served_after["prediction"] in SPECIES


@pytest.mark.slow
def test_tuning_uploads_the_best_of_its_trials(tmp_path: Path) -> None:
    from google.cloud import aiplatform

    seen: dict[str, Any] = {}

    def parameters(trial: Any) -> str:
        return " ".join(f"{p.parameter_id}={p.value:.6g}" for p in trial.parameters)

    def inspect(run: FinishedRun) -> None:
        run.context.init_aiplatform()
        (job,) = aiplatform.HyperparameterTuningJob.list()
        trials = [
            (t.id, t.final_measurement.metrics[0].value)
            for t in job.trials
            if t.final_measurement.metrics
        ]
        model = aiplatform.Model(run.outputs["model"]["metadata"]["resourceName"])
        seen.update(trials=trials, artifact_uri=model.uri)
        seen["parameters"] = {t.id: parameters(t) for t in job.trials}

    lines: list[str] = []
    pipeline_yaml, params = runner.prepare(
        "tuning", ["max_trial_count=4", "parallel_trial_count=2"]
    )
    runner.run_pipeline_job(
        "tuning",
        params,
        pipeline_yaml,
        home=tmp_path / "home",
        emit=lines.append,
        while_running=inspect,
    )
    assert len(seen["trials"]) == 4
    # the follower's lines (issue 26): each trial as it starts, with its parameters, and as it
    # ends, with its final metric, between the tuning task's RUNNING and SUCCEEDED lines
    task = "hyperparameter-tuning-job"
    texts = [line.split("  ", 1)[-1].split() for line in lines]
    running = texts.index([task, "RUNNING"])
    ended = next(i for i, t in enumerate(texts) if t[:2] == [task, "SUCCEEDED"])
    for trial_id, value in seen["trials"]:
        started = [task, "trial", trial_id, "started", *seen["parameters"][trial_id].split()]
        finished = [task, "trial", trial_id, "SUCCEEDED", f"accuracy={value:.6g}"]
        assert running < texts.index(started) < texts.index(finished) < ended, lines
    best_id, best_value = max(seen["trials"], key=lambda trial: trial[1])
    assert all(value <= best_value for _, value in seen["trials"])
    assert seen["artifact_uri"].rstrip("/").endswith(f"/{best_id}/model")


def test_vertex_submission_is_a_request_vertex_accepts(
    local_cloud: LocalCloud, tmp_path: Path
) -> None:
    """`--vertex` builds the PipelineJob offline with the SDK; the local Vertex parses and accepts
    it with the aiplatform_v1 types, as Vertex would (no Google account here to send it to)."""
    image = "us-central1-docker.pkg.dev/my-project/vertexkit/runtime:0.1.0"
    pipeline_yaml, params = runner.prepare("training", ["n_estimators=50"], image=image)
    bucket = "vertex-submission-test"
    local_cloud.storage.ensure_bucket(bucket)
    job = runner.build_vertex_job(
        "training",
        params,
        pipeline_yaml,
        local_cloud.project,
        local_cloud.region,
        f"gs://{bucket}/root",
        work_dir=tmp_path,
        credentials=AnonymousCredentials(),
    )
    request = job._gca_resource
    values = dict(request.runtime_config.parameter_values)
    assert values["project"] == local_cloud.project and values["n_estimators"] == 50
    assert values["gcs_root"] == f"gs://{bucket}/root/training"
    executors = request.pipeline_spec["deploymentSpec"]["executors"]
    assert {executor["container"]["image"] for executor in executors.values()} == {image}

    client = local_cloud.context().pipeline_client()
    created = client.create_pipeline_job(parent=local_cloud.context().parent, pipeline_job=request)
    # Vertex names the job with the project number (core.names).
    assert created.name.startswith(numbered_name(local_cloud.context().parent) + "/pipelineJobs/")
    client.cancel_pipeline_job(name=created.name)
