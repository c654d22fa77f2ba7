"""`vertexkit compile`: pipelines to KFP IR YAML, with the runtime image set, and a staleness check.

The same YAML runs on Vertex AI Pipelines, Kubeflow Pipelines and locally. Components are built
with a placeholder image; `--image` rewrites every executor's image to the one a user pushed.
"""

from __future__ import annotations

import difflib
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml
from kfp import compiler

from vertexkit import pipeline_registry

DEFAULT_IMAGE = "vertexkit/runtime:0.1.0"


@dataclass(frozen=True)
class CompileResult:
    name: str
    path: Path
    stale: bool
    diff: str = ""


def compile_to_text(name_or_ref: str, image: str | None = None) -> str:
    pipeline = pipeline_registry.resolve(name_or_ref)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "pipeline.yaml"
        compiler.Compiler().compile(pipeline_func=pipeline, package_path=str(target))
        text = _stable_header(target.read_text())
    return set_image(text, image) if image and image != DEFAULT_IMAGE else text


def _stable_header(pipeline_yaml: str) -> str:
    """Replaces KFP's comment header with one that does not change from run to run.

    KFP prints parameter defaults there, and the key order of a list-of-dicts default follows
    hash randomisation, which would make `compile --check` flap.
    """
    lines = pipeline_yaml.splitlines(keepends=True)
    body_start = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    header = [line for line in lines[:body_start] if line.startswith(("# Name:", "# Description:"))]
    return (
        "# PIPELINE DEFINITION (written by `vertexkit compile`)\n"
        + "".join(header)
        + "".join(lines[body_start:])
    )


def set_image(pipeline_yaml: str, image: str) -> str:
    """Rewrites the image of every container executor in a compiled pipeline."""
    documents = list(yaml.safe_load_all(pipeline_yaml))
    spec = documents[0]
    for executor in spec.get("deploymentSpec", {}).get("executors", {}).values():
        container = executor.get("container")
        if container and container.get("image") == DEFAULT_IMAGE:
            container["image"] = image
    return yaml.safe_dump_all(documents, sort_keys=True)


def compile_pipeline(
    name_or_ref: str, output_dir: Path, image: str | None = None, check: bool = False
) -> CompileResult:
    """Writes `output_dir/NAME.yaml`; with `check`, only reports whether it is stale."""
    return write_compiled(name_or_ref, compile_to_text(name_or_ref, image), output_dir, check)


def write_compiled(
    name_or_ref: str, text: str, output_dir: Path, check: bool = False
) -> CompileResult:
    """Writes a compiled pipeline's `text` to `output_dir/NAME.yaml` (with `check`, only
    reports whether the file there differs)."""
    name = pipeline_registry.short_name(name_or_ref)
    path = output_dir / f"{name}.yaml"
    current = path.read_text() if path.exists() else ""
    stale = current != text
    if check:
        diff = "".join(
            difflib.unified_diff(
                current.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=str(path),
                tofile=f"{path} (fresh)",
                n=1,
            )
        )
        return CompileResult(name, path, stale, diff[:4000])
    output_dir.mkdir(parents=True, exist_ok=True)
    if stale:
        path.write_text(text)
    return CompileResult(name, path, stale)
