"""`vertexkit run`: one compiled pipeline, run on the local cloud or submitted to Vertex AI.

Locally, the local cloud starts in-process (its state kept under VERTEXKIT_HOME), the task
processes inherit the environment that points the Google clients at it, and the compiled YAML
runs through `kfp.local` with caching on. The pipeline root is a folder of the local Cloud
Storage, so every artifact is also reachable as a `gs://` URI.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vertexkit.compiler import DEFAULT_IMAGE, compile_to_text
from vertexkit.context import CloudContext
from vertexkit.pipeline_params import input_parameters, parse_params
from vertexkit.pipeline_registry import short_name
from vertexkit.preflight import check_data, check_parameters

PIPELINE_BUCKET_SUFFIX = "-vertexkit-pipelines"


@dataclass
class LocalRun:
    name: str
    outputs: dict[str, Any]
    seconds: float
    pipeline_root: str
    context: CloudContext
    params: dict[str, Any] = field(default_factory=dict)


def prepare(name_or_ref: str, assignments: list[str], image: str | None = None) -> tuple[str, dict]:
    """Compiles the pipeline and parses its parameters: every check before anything is created."""
    pipeline_yaml = compile_to_text(name_or_ref, image)
    params = parse_params(pipeline_yaml, assignments)
    check_parameters(effective_values(pipeline_yaml, params))
    return pipeline_yaml, params


def effective_values(pipeline_yaml: str, params: dict[str, Any]) -> dict[str, Any]:
    """The pipeline's defaults overlaid with the given parameters."""
    declared = input_parameters(pipeline_yaml)
    return {key: spec.get("defaultValue") for key, spec in declared.items()} | params


@contextmanager
def _patched_environ(values: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_local(
    name_or_ref: str,
    params: dict[str, Any],
    pipeline_yaml: str,
    home: Path | None = None,
    enable_caching: bool = True,
    while_running: Callable[[LocalRun], None] | None = None,
) -> LocalRun:
    """Runs a compiled pipeline on an in-process local cloud and returns its outputs.

    `while_running` is called with the finished run before the local cloud stops, e.g. to
    send a sample prediction to the endpoint the pipeline deployed.
    """
    from kfp import components, local

    from vertexkit.local import LocalCloud

    name = short_name(name_or_ref)
    with LocalCloud(home=home) as cloud:
        context = cloud.context()
        bucket = f"{context.project}{PIPELINE_BUCKET_SUFFIX}"
        cloud.storage.ensure_bucket(bucket)
        root_uri = f"gs://{bucket}/{name}"
        pipeline_root = cloud.storage.gs_uri_to_path(root_uri)
        pipeline_file = cloud.home / "pipelines" / f"{name}.yaml"
        pipeline_file.parent.mkdir(parents=True, exist_ok=True)
        pipeline_file.write_text(pipeline_yaml)
        params = {
            "project": context.project,
            "location": context.region,
            "gcs_root": f"{root_uri}/outputs",
            **params,
        }
        params = {k: v for k, v in params.items() if k in _declared(pipeline_yaml)}
        check_data(context, effective_values(pipeline_yaml, params))
        started = time.monotonic()
        with _patched_environ(cloud.env()):
            local.init(
                runner=local.SubprocessRunner(use_venv=False),
                pipeline_root=str(pipeline_root),
                enable_caching=enable_caching,
                cache_root=str(cloud.home / "kfp-cache"),
            )
            task = components.load_component_from_file(str(pipeline_file))(**params)
            outputs = dict(task.outputs) if task.outputs else {}
            effective = {
                key: spec.get("defaultValue")
                for key, spec in input_parameters(pipeline_yaml).items()
            } | params
            run = LocalRun(name, outputs, time.monotonic() - started, root_uri, context, effective)
            if while_running:
                while_running(run)
        return run


def _declared(pipeline_yaml: str) -> set[str]:
    return set(input_parameters(pipeline_yaml))


def build_vertex_job(
    name_or_ref: str,
    params: dict[str, Any],
    pipeline_yaml: str,
    project: str,
    region: str,
    pipeline_root: str,
    enable_caching: bool = True,
    work_dir: Path | None = None,
    credentials: Any = None,
) -> Any:
    """An `aiplatform.PipelineJob` for the compiled YAML, built but not submitted.

    `credentials` default to Application Default Credentials, as the SDK's do.
    """
    from google.cloud import aiplatform

    if not pipeline_root.startswith("gs://"):
        raise ValueError(f"--pipeline-root must be a gs:// URI, got {pipeline_root!r}")
    CloudContext(project=project, region=region).init_aiplatform(
        staging_bucket=pipeline_root, credentials=credentials
    )
    name = short_name(name_or_ref)
    work_dir = work_dir or Path.cwd() / ".vertexkit" / "submitted"
    work_dir.mkdir(parents=True, exist_ok=True)
    template = work_dir / f"{name}.yaml"
    template.write_text(pipeline_yaml)
    declared = _declared(pipeline_yaml)
    values = {
        "project": project,
        "location": region,
        "gcs_root": f"{pipeline_root.rstrip('/')}/{name}",
        **params,
    }
    return aiplatform.PipelineJob(
        display_name=f"vertexkit-{name}",
        template_path=str(template),
        pipeline_root=pipeline_root,
        parameter_values={k: v for k, v in values.items() if k in declared},
        enable_caching=enable_caching,
        project=project,
        location=region,
        credentials=credentials,
    )


def image_warning(image: str | None) -> str | None:
    if not image or image == DEFAULT_IMAGE:
        return (
            f"the components use the placeholder image {DEFAULT_IMAGE!r}; build and push the "
            "runtime image (see README) and pass --image"
        )
    return None
