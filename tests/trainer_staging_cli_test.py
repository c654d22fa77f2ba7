"""`vertexkit compile --staging` and `vertexkit run --vertex` build a user's own trainer folder,
stage it, and leave no local path in the pipeline (against a local cloud standing in for Google
Cloud Storage and Vertex AI; `run --vertex` reaches it through `vertexkit local exec`)."""

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from vertexkit.local import LocalCloud

BUCKET = "user-staging"
USER_MODULE = """
from kfp import dsl
from vertexkit.components import custom_training_job


@dsl.pipeline(name="own-trainer")
def own_trainer(project: str = "local-project") -> None:
    custom_training_job(
        project=project, display_name="train", base_output_directory="gs://user-staging/out",
        trainer_dir="my_trainer", python_module="my_trainer_pkg.task", framework="sklearn",
    )
"""
PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "my-trainer"
version = "0.1.0"
"""


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCloud]:
    with LocalCloud(home=tmp_path_factory.mktemp("staging") / "home") as started:
        started.storage.ensure_bucket(BUCKET)
        yield started


@pytest.fixture
def user_folder(tmp_path: Path) -> Path:
    (tmp_path / "user_pipe.py").write_text(USER_MODULE)
    package = tmp_path / "my_trainer" / "my_trainer_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "task.py").write_text("print('trained')\n")
    (tmp_path / "my_trainer" / "pyproject.toml").write_text(PYPROJECT)
    return tmp_path


def vertexkit(args: list[str], cwd: Path, cloud: LocalCloud) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VERTEXKIT_HOME")}
    env.update(cloud.env())
    command = [str(Path(sys.executable).parent / "vertexkit"), *args]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def staged_objects(cloud: LocalCloud, prefix: str) -> list[str]:
    return sorted(p.name for p in (cloud.storage.home / BUCKET / prefix).rglob("*.tar.gz"))


def package_uris(spec: dict) -> list[str]:
    [task] = spec["root"]["dag"]["tasks"].values()
    parameters = task["inputs"]["parameters"]
    assert parameters["trainer_dir"]["runtimeValue"]["constant"] == ""
    return parameters["python_package_uris"]["runtimeValue"]["constant"]


def test_compile_stages_the_trainer_and_the_yaml_carries_its_uri(
    cloud: LocalCloud, user_folder: Path
) -> None:
    done = vertexkit(
        ["compile", "user_pipe:own_trainer", "--staging", f"gs://{BUCKET}/stage",
         "--output-dir", "out"],
        user_folder, cloud,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # compiled under the pipeline's own name (issue 26), not the function's
    text = (user_folder / "out" / "own-trainer.yaml").read_text()
    [uri] = package_uris(yaml.safe_load(text))
    assert uri.startswith(f"gs://{BUCKET}/stage/trainers/") and uri.endswith(".tar.gz"), uri
    assert "constant: my_trainer\n" not in text and str(user_folder) not in text  # no local path
    assert staged_objects(cloud, "stage") == [uri.rsplit("/", 1)[-1]]


@pytest.mark.parametrize(
    ("extra", "named"),
    [([], "--staging"), (["--staging", "s3://elsewhere"], "--staging")],
    ids=["no-staging", "not-gs"],
)
def test_compile_refuses_a_local_trainer_without_a_gs_staging_path(
    cloud: LocalCloud, user_folder: Path, extra: list[str], named: str
) -> None:
    done = vertexkit(["compile", "user_pipe:own_trainer", "--output-dir", "out", *extra],
                     user_folder, cloud)  # fmt: skip
    assert done.returncode == 2 and named in done.stderr, done.stderr
    assert not (user_folder / "out" / "own-trainer.yaml").exists()


def test_run_vertex_stages_under_the_pipeline_root(cloud: LocalCloud, user_folder: Path) -> None:
    done = vertexkit(
        ["local", "exec", "--", "vertexkit", "run", "user_pipe:own_trainer", "--vertex",
         "--project", "local-project", "--pipeline-root", f"gs://{BUCKET}/root", "--no-wait"],
        user_folder, cloud,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    url = f"{cloud.url}/v1/projects/local-project/locations/us-central1/pipelineJobs"
    with urllib.request.urlopen(url) as response:
        [job] = json.load(response)["pipelineJobs"]
    [uri] = package_uris(job["pipelineSpec"])
    assert uri.startswith(f"gs://{BUCKET}/root/staging/trainers/"), uri
    assert staged_objects(cloud, "root/staging") == [uri.rsplit("/", 1)[-1]]
