"""A user's own pipelines on the local cloud, as `vertexkit run` runs them.

Each pipeline is compiled with the real KFP compiler and run through `runner.run_pipeline_job`
(a PipelineJob on an in-process local cloud, kfp.local in a separate process, real task
processes); what is checked is read back from the job's task details, as a user would read it.
"""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import importlib.util
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from kfp import compiler, dsl
from kfp.dsl import Dataset, Input, Model, Output

from vertexkit import runner
from vertexkit.components import deploy_model, upload_model
from vertexkit.pipeline_jobs import PipelineJobFailed, parse_time

REPO = Path(__file__).resolve().parents[1]
IMAGE = "python:3.11"  # what a user's component names; locally the task runs in this Python


def run_pipeline(
    pipeline: Any, home: Path, params: dict[str, Any] | None = None, **options: Any
) -> runner.FinishedRun:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pipeline.yaml"
        compiler.Compiler().compile(pipeline_func=pipeline, package_path=str(path))
        pipeline_yaml = path.read_text()
    options.setdefault("emit", lambda line: None)
    return runner.run_pipeline_job(pipeline.name, params or {}, pipeline_yaml, home=home, **options)


def tasks(run: runner.FinishedRun) -> dict[str, dict[str, Any]]:
    """Task details by task name (the pipeline's own root task left out)."""
    details = run.job["jobDetail"]["taskDetails"]
    return {t["taskName"]: t for t in details if t.get("parentTaskId")}


# -- the README's compose example, as written ---------------------------------------------------
def readme_compose_example() -> str:
    readme = (REPO / "README.md").read_text()
    found = re.search(r"## Compose your own pipeline\n\n```python\n(.*?)```", readme, re.S)
    assert found, "README.md lost its 'Compose your own pipeline' example"
    return found.group(1)


def test_readme_compose_example_runs_as_written(tmp_path: Path) -> None:
    """`vertexkit run my_module:my_pipeline` from the module's folder, no PYTHONPATH, no -p."""
    (tmp_path / "my_module.py").write_text(readme_compose_example())
    vertexkit = Path(sys.executable).parent / "vertexkit"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VERTEXKIT_HOME")}
    home = tmp_path / "home"
    done = subprocess.run(
        [str(vertexkit), "run", "my_module:my_pipeline", "--home", str(home)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for task in ("bigquery-export-dataset", "custom-training-job", "deploy-model"):
        assert re.search(rf"\b{task}\s+SUCCEEDED", done.stdout), done.stdout
    compiled = subprocess.run(
        [str(vertexkit), "compile", "my_module:my_pipeline", "--output-dir", "out"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr
    assert (tmp_path / "out" / "my-penguins.yaml").is_file()  # the pipeline's own name


# -- caching options, integers inside structured parameters, display names ---------------------
@dsl.component(base_image=IMAGE)
def stamp(tag: str) -> str:
    import time

    return f"{tag}-{time.time_ns()}"


@dsl.component(base_image=IMAGE)
def flags(config: dict, sizes: list) -> str:
    """The trainer's command-line flags, as a user's component builds them."""
    assert all(isinstance(size, int) for size in sizes), sizes
    return " ".join(f"--{key.replace('_', '-')}={value}" for key, value in sorted(config.items()))


@dsl.pipeline(name="caching-and-types")
def caching_pipeline(
    config: dict = {"n_estimators": 20, "learning_rate": 0.5},  # noqa: B006
    sizes: list = [1, 2],  # noqa: B006
) -> str:
    stamp(tag="always").set_caching_options(False).set_display_name("notify")
    stamp(tag="cached").set_display_name("cached-stamp")
    return flags(config=config, sizes=sizes).output


def test_task_caching_options_are_honoured_and_no_cache_means_every_task(tmp_path: Path) -> None:
    first = tasks(run_pipeline(caching_pipeline, tmp_path))
    second = tasks(run_pipeline(caching_pipeline, tmp_path))
    uncached = tasks(run_pipeline(caching_pipeline, tmp_path, enable_caching=False))
    assert {name: t["state"] for name, t in second.items()} == {
        "notify": "SUCCEEDED",  # set_caching_options(False): runs every time
        "cached-stamp": "SKIPPED",
        "flags": "SKIPPED",
    }
    assert {t["state"] for t in uncached.values()} == {"SUCCEEDED"}
    notify = [run["notify"]["execution"]["metadata"]["output:Output"] for run in (first, second)]
    assert notify[0] != notify[1]  # it really ran again


def test_tasks_leave_no_temp_files_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """kfp writes each task's ephemeral_component.py under `mktemp -d`: it goes with the task."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))  # the local cloud's processes inherit it
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR in this process too
    run_pipeline(caching_pipeline, tmp_path / "home", enable_caching=False)
    assert not list(temp.rglob("ephemeral_component.py"))
    assert not list(temp.glob("vertexkit-task-*"))


def test_integers_inside_list_and_dict_parameters_stay_integers(tmp_path: Path) -> None:
    run = run_pipeline(caching_pipeline, tmp_path)
    assert run.outputs["Output"] == "--learning-rate=0.5 --n-estimators=20"


# -- an importer ---------------------------------------------------------------------------------
@dsl.component(base_image=IMAGE)
def read_text(data: Input[Dataset]) -> str:
    with open(data.path) as handle:  # Vertex: /gcs/BUCKET/...; here the local object's file
        return handle.read()


@dsl.pipeline(name="imported")
def importer_pipeline(uri: str) -> str:
    imported = dsl.importer(artifact_uri=uri, artifact_class=Dataset, reimport=False)
    return read_text(data=imported.output).output


def test_an_importer_runs_on_a_fresh_home_and_its_gs_uri_reads_through_path(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    seeded = home / "storage" / "local-project-vertexkit-pipelines" / "seed" / "rows.csv"
    seeded.parent.mkdir(parents=True)
    seeded.write_text("a,b\n1,2\n")
    uri = "gs://local-project-vertexkit-pipelines/seed/rows.csv"
    run = run_pipeline(importer_pipeline, home, {"uri": uri})
    assert tasks(run)["importer"]["state"] == "SUCCEEDED"  # not SKIPPED (cached)
    assert run.outputs["Output"] == "a,b\n1,2\n"


# -- packages_to_install -------------------------------------------------------------------------
USER_ONLY_PACKAGE = "humanize"  # pure Python, not a dependency of vertexkit


@dsl.component(base_image=IMAGE, packages_to_install=[USER_ONLY_PACKAGE])
def readable(number: int) -> str:
    import humanize

    return humanize.intcomma(number)


@dsl.pipeline(name="user-packages")
def packages_pipeline(number: int = 1234567) -> str:
    return readable(number=number).output


def test_packages_to_install_go_to_an_isolated_environment(tmp_path: Path) -> None:
    assert importlib.util.find_spec(USER_ONLY_PACKAGE) is None, "vertexkit's env must lack it"
    run = run_pipeline(packages_pipeline, tmp_path)
    assert run.outputs["Output"] == "1,234,567"
    assert importlib.util.find_spec(USER_ONLY_PACKAGE) is None  # never installed into ours
    installed = list(
        (tmp_path / "vertex" / "task-envs").glob(f"*/lib/*/site-packages/{USER_ONLY_PACKAGE}")
    )
    assert len(installed) == 1, installed


# -- parallel branches ---------------------------------------------------------------------------
@dsl.component(base_image=IMAGE)
def nap(index: int) -> int:
    import time

    time.sleep(1.5)
    return index


@dsl.pipeline(name="three-naps")
def parallel_pipeline() -> None:
    with dsl.ParallelFor([0, 1, 2]) as index:
        nap(index=index).set_caching_options(False)


def overlapping_pairs(details: list[dict[str, Any]]) -> int:
    """How many pairs of tasks ran at the same time, by their recorded start and end times."""
    spans = [(parse_time(t["startTime"]), parse_time(t["endTime"])) for t in details]
    pairs = itertools.combinations(spans, 2)
    return sum(
        1 for (start_a, end_a), (start_b, end_b) in pairs if start_a < end_b and start_b < end_a
    )


@pytest.mark.parametrize(
    ("max_parallel", "overlaps"),
    [pytest.param(3, True, id="three-at-once"), pytest.param(1, False, id="max-parallel-1")],
)
def test_parallel_for_iterations_run_at_once_up_to_max_parallel(
    tmp_path: Path, max_parallel: int, overlaps: bool
) -> None:
    run = run_pipeline(parallel_pipeline, tmp_path, max_parallel=max_parallel)
    naps = [t for name, t in tasks(run).items() if name.startswith("nap")]
    assert sorted(t["taskName"] for t in naps) == ["nap [0]", "nap [1]", "nap [2]"]
    assert (overlapping_pairs(naps) > 0) is overlaps


# -- a user's model through .path, uploaded, deployed and served ---------------------------------
@dsl.component(base_image=IMAGE)
def train_small_model(model: Output[Model]) -> None:
    import os

    import joblib
    from sklearn.linear_model import LogisticRegression

    features = [[0.0, 0.1], [0.2, 0.0], [1.0, 0.9], [0.9, 1.1]]
    classifier = LogisticRegression().fit(features, [0, 0, 1, 1])
    os.makedirs(model.path, exist_ok=True)
    joblib.dump(classifier, os.path.join(model.path, "model.joblib"))


@dsl.pipeline(name="user-model")
def user_model_pipeline(project: str, location: str = "us-central1") -> None:
    trained = train_small_model()
    uploaded = upload_model(
        project=project,
        location=location,
        display_name="user-model",
        model_dir=trained.outputs["model"],
        framework="sklearn",
    )
    deploy_model(
        project=project,
        location=location,
        model=uploaded.outputs["model"],
        endpoint_display_name="user-endpoint",
    )


def test_a_model_written_through_path_is_uploaded_deployed_and_served(tmp_path: Path) -> None:
    served: list[Any] = []

    def predict(run: runner.FinishedRun) -> None:
        from google.cloud import aiplatform

        run.context.init_aiplatform()
        endpoint = aiplatform.Endpoint.list(filter='display_name="user-endpoint"')[0]
        served.extend(endpoint.predict(instances=[[0.0, 0.0], [1.0, 1.0]]).predictions)

    run = run_pipeline(user_model_pipeline, tmp_path, while_running=predict)
    model_uri = tasks(run)["train-small-model"]["outputs"]["model"]["artifacts"][0]["uri"]
    assert model_uri.startswith("gs://"), model_uri
    assert served == [0, 1]


# -- retries -------------------------------------------------------------------------------------
@dsl.component(base_image=IMAGE)
def flaky(attempts_file: str) -> int:
    """Fails on its first attempt, succeeds on its second."""
    from pathlib import Path

    record = Path(attempts_file)
    attempts = int(record.read_text()) + 1 if record.exists() else 1
    record.write_text(str(attempts))
    if attempts < 2:
        raise RuntimeError("first attempt fails")
    return attempts


@dsl.pipeline(name="retried")
def retry_pipeline(attempts_file: str) -> int:
    return flaky(attempts_file=attempts_file).set_retry(num_retries=2).output


def test_a_task_is_retried_by_its_retry_policy(tmp_path: Path) -> None:
    attempts_file = tmp_path / "attempts"
    run = run_pipeline(retry_pipeline, tmp_path / "home", {"attempts_file": str(attempts_file)})
    assert run.outputs["Output"] == 2 and attempts_file.read_text() == "2"


# -- a failing task's error ----------------------------------------------------------------------
@dsl.component(base_image=IMAGE)
def refuse_empty(rows: int) -> int:
    if rows == 0:
        raise ValueError("no rows in the training table")
    return rows


@dsl.container_component
def shell_step():
    # a program that does not exist here: refused before the first task (task_handler)
    return dsl.ContainerSpec(image="alpine:3.20", command=["/opt/app/step"], args=["hi"])


@dsl.pipeline(name="gcpc-custom-job")
def gcpc_pipeline(project: str, location: str = "us-central1") -> None:
    from google_cloud_pipeline_components.v1.custom_job import CustomTrainingJobOp

    CustomTrainingJobOp(
        display_name="gcpc-train",
        project=project,
        location=location,
        worker_pool_specs=[
            {
                "machine_spec": {"machine_type": "n1-standard-4"},
                "replica_count": 1,
                # no command: the local Vertex refuses it at create (no Docker for the image)
                "container_spec": {"image_uri": "python:3.11"},
            }
        ],
    )


@dsl.pipeline(name="fails-in-component")
def failing_component_pipeline(rows: int = 0) -> None:
    refuse_empty(rows=rows)


@dsl.pipeline(name="container-step")
def container_pipeline() -> None:
    shell_step()


@pytest.mark.parametrize(
    ("pipeline", "task", "cause"),
    [
        pytest.param(
            failing_component_pipeline,
            "refuse-empty",
            "ValueError: no rows in the training table",
            id="component-raises",
        ),
        pytest.param(container_pipeline, "shell-step", "'alpine:3.20'", id="container-component"),
        pytest.param(  # GCPC's launcher runs; the local Vertex's refusal is the cause
            gcpc_pipeline, "custom-training-job", "cannot run without Docker", id="gcpc-operator"
        ),
    ],
)
def test_a_failing_task_names_the_task_and_its_cause(
    tmp_path: Path, pipeline: Any, task: str, cause: str
) -> None:
    with pytest.raises(PipelineJobFailed) as failed:
        run_pipeline(pipeline, tmp_path)
    assert f"task {task!r}: " in str(failed.value) and cause in str(failed.value)
    assert "IndexError" not in str(failed.value)


def test_a_failing_component_leaves_executor_error_json(tmp_path: Path) -> None:
    with pytest.raises(PipelineJobFailed):
        run_pipeline(failing_component_pipeline, tmp_path)
    written = [json.loads(p.read_text()) for p in tmp_path.rglob("executor_error.json")]
    assert written == [{"errorMessage": "ValueError: no rows in the training table"}]
