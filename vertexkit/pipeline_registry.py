"""Finds pipelines by name (the built-ins) or by `module:function` (a user's own).

The runtime never imports `vertexkit.pipelines` at import time: a pipeline is resolved only when
a command asks for it, so the runtime image and the local cloud stay free of pipeline code.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

BUILTIN_PIPELINES: dict[str, str] = {
    "training": "vertexkit.pipelines.training:training_pipeline",
    "tuning": "vertexkit.pipelines.tuning:tuning_pipeline",
    "retraining": "vertexkit.pipelines.retraining:retraining_pipeline",
    "gpu_training": "vertexkit.pipelines.gpu_training:gpu_training_pipeline",
}


class PipelineNotFound(LookupError):
    pass


def resolve(name_or_ref: str) -> Any:
    """Returns the `@dsl.pipeline` function for a built-in name or a `module:function` ref."""
    ref = BUILTIN_PIPELINES.get(name_or_ref, name_or_ref)
    if ":" not in ref:
        raise PipelineNotFound(
            f"unknown pipeline {name_or_ref!r}: use one of {sorted(BUILTIN_PIPELINES)} "
            "or a module:function reference"
        )
    module_name, _, attribute = ref.partition(":")
    _importable_from_working_directory()
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PipelineNotFound(
            f"cannot import {module_name!r} for pipeline {name_or_ref!r}: {exc}"
        ) from exc
    pipeline = getattr(module, attribute, None)
    if pipeline is None:
        raise PipelineNotFound(f"{module_name!r} has no attribute {attribute!r}")
    from kfp.dsl.base_component import BaseComponent

    if not isinstance(pipeline, BaseComponent):  # what kfp's compiler accepts
        raise PipelineNotFound(
            f"{name_or_ref!r} is not a pipeline: a @dsl.pipeline (or @dsl.component) function "
            f"is needed; got {type(pipeline).__name__}"
        )
    return pipeline


def _importable_from_working_directory() -> None:
    """`vertexkit run my_module:my_pipeline` finds `my_module.py` in the folder it is run from,
    as `python -c "import my_module"` would there (a console script's path lacks that folder)."""
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)


def short_name(name_or_ref: str) -> str:
    """The file stem a pipeline compiles to (and its runs' folder): the built-in name, or a
    `module:function`'s own pipeline name (`@dsl.pipeline(name="my-penguins")` is
    `my-penguins`; without a name, kfp's: the function's, with dashes), as Vertex names the
    pipeline from it. Anything else (a pipeline's name itself) stays as given."""
    if name_or_ref in BUILTIN_PIPELINES or ":" not in name_or_ref:
        return name_or_ref
    try:
        named = str(getattr(resolve(name_or_ref), "name", "") or "")
    except PipelineNotFound:  # a ref only named (a KFP request built offline): its function
        named = ""
    return named or name_or_ref.rpartition(":")[2].removesuffix("_pipeline") or name_or_ref
