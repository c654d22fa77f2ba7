"""Which trainer folders are staged before a pipeline leaves this machine, and how the compiled
spec names them afterwards (real compiled YAML; `stage` is the seam the CLI fills with a real
upload, tested end to end in tests/trainer_staging_cli_test.py)."""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import tempfile
from pathlib import Path

import pytest
import yaml
from kfp import compiler, dsl

from vertexkit import trainer_staging
from vertexkit.components import custom_training_job


def compiled(trainer_dirs: list[str]) -> str:
    @dsl.pipeline(name="staging")
    def pipeline() -> None:
        for index, trainer_dir in enumerate(trainer_dirs):
            custom_training_job(
                display_name=f"train-{index}", base_output_directory="gs://b/out",
                trainer_dir=trainer_dir, python_module="pkg.task", framework="sklearn",
            )  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.yaml"
        compiler.Compiler().compile(pipeline, str(path))
        return path.read_text()


@pytest.mark.parametrize(
    ("trainer_dir", "held"),
    [
        ("trainers/tabular", True),
        ("trainers/custom_serving", True),
        ("trainers/not-in-this-repo", False),
        ("my_trainer", False),
        ("/abs/trainers/tabular", False),
        ("trainers/tabular/sub", False),
    ],
)
def test_only_this_repositorys_trainers_are_in_the_runtime_image(
    trainer_dir: str, held: bool
) -> None:
    assert trainer_staging.in_runtime_image(trainer_dir) is held


def test_local_trainer_folders_become_package_uris_staged_once() -> None:
    pipeline_yaml = compiled(["my_trainer", "trainers/tabular", "my_trainer", "other/dir"])
    assert trainer_staging.local_trainer_dirs(pipeline_yaml) == ["my_trainer", "other/dir"]
    staged: list[str] = []

    def stage(trainer_dir: str) -> str:  # records the calls; the upload is the CLI test's
        staged.append(trainer_dir)
        return f"gs://stage/trainers/{trainer_dir.replace('/', '-')}.tar.gz"

    rewritten = trainer_staging.stage_trainer_dirs(pipeline_yaml, stage)
    assert staged == ["my_trainer", "other/dir"]
    tasks = yaml.safe_load(rewritten)["root"]["dag"]["tasks"]
    by_task = {
        name: (
            task["inputs"]["parameters"]["trainer_dir"]["runtimeValue"]["constant"],
            task["inputs"]["parameters"].get("python_package_uris", {}).get("runtimeValue"),
        )
        for name, task in tasks.items()
    }
    assert sorted(by_task.values(), key=str) == sorted(
        [
            ("", {"constant": ["gs://stage/trainers/my_trainer.tar.gz"]}),
            ("", {"constant": ["gs://stage/trainers/my_trainer.tar.gz"]}),
            ("", {"constant": ["gs://stage/trainers/other-dir.tar.gz"]}),
            ("trainers/tabular", None),
        ],
        key=str,
    )
    assert trainer_staging.local_trainer_dirs(rewritten) == []


def test_a_pipeline_without_local_trainers_is_left_byte_for_byte() -> None:
    pipeline_yaml = compiled(["trainers/tabular"])
    assert trainer_staging.stage_trainer_dirs(pipeline_yaml, lambda d: "unused") == pipeline_yaml
