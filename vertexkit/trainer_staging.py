"""A user's trainer folder on Vertex: built, staged, and named by URI in the compiled pipeline.

`custom_training_job(trainer_dir=...)` builds the folder into a source distribution when the task
runs. Locally that works for any folder; on Vertex the task runs in the runtime image, which holds
only this repository's `trainers/` (the Dockerfile copies them). So before a pipeline leaves this
machine (`vertexkit compile --staging`, `vertexkit run --vertex`) every other `trainer_dir` a
task names is built here, staged under the pipeline root (or `--staging`), and replaced by
`python_package_uris: [<its gs:// URI>]`: the YAML carries no local path. The object name holds
the sdist's content hash, so an unchanged trainer is uploaded once.

A `trainer_dir` given as a constant is staged; one that arrives through a pipeline parameter is
known only when the run starts and is left to the task (it must then name a folder the image
holds).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

IMAGE_TRAINERS = Path(__file__).resolve().parents[1] / "trainers"  # what the image copies


def in_runtime_image(trainer_dir: str) -> bool:
    """`trainers/NAME` of this repository: the runtime image holds it at the same path."""
    parts = Path(trainer_dir).parts
    return (
        len(parts) == 2
        and parts[0] == "trainers"
        and not Path(trainer_dir).is_absolute()
        and (IMAGE_TRAINERS / parts[1]).is_dir()
    )


def _task_parameters(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The input parameters of every task, in the root DAG and in every sub-DAG."""
    dags = [spec.get("root", {}).get("dag", {})]
    dags += [component.get("dag", {}) for component in spec.get("components", {}).values()]
    for dag in dags:
        for task in dag.get("tasks", {}).values():
            yield task.setdefault("inputs", {}).setdefault("parameters", {})


def _constant_trainer_dir(parameters: dict[str, Any]) -> str:
    value = parameters.get("trainer_dir", {}).get("runtimeValue", {}).get("constant")
    return value if isinstance(value, str) else ""


def local_trainer_dirs(pipeline_yaml: str) -> list[str]:
    """The trainer folders the pipeline names that the runtime image does not hold."""
    spec = next(yaml.safe_load_all(pipeline_yaml))
    found = [_constant_trainer_dir(parameters) for parameters in _task_parameters(spec)]
    return sorted({d for d in found if d and not in_runtime_image(d)})


def stage_trainer_dirs(pipeline_yaml: str, stage: Callable[[str], str]) -> str:
    """The pipeline with each local `trainer_dir` replaced by `python_package_uris` of
    `stage(trainer_dir)` (called once per folder)."""
    documents = list(yaml.safe_load_all(pipeline_yaml))
    staged: dict[str, str] = {}
    for parameters in _task_parameters(documents[0]):
        trainer_dir = _constant_trainer_dir(parameters)
        if not trainer_dir or in_runtime_image(trainer_dir):
            continue
        if trainer_dir not in staged:
            staged[trainer_dir] = stage(trainer_dir)
        parameters["trainer_dir"] = {"runtimeValue": {"constant": ""}}
        parameters["python_package_uris"] = {"runtimeValue": {"constant": [staged[trainer_dir]]}}
    return yaml.safe_dump_all(documents, sort_keys=True) if staged else pipeline_yaml


def stage_with_context(pipeline_yaml: str, staging_uri: str, context: Any) -> str:
    """`stage_trainer_dirs` uploading to `<staging_uri>/trainers/` with `context`'s storage."""
    from vertexkit.runtime.packaging import stage_trainer

    return stage_trainer_dirs(
        pipeline_yaml, lambda trainer_dir: stage_trainer(context, trainer_dir, staging_uri)
    )
