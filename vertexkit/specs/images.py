"""Vertex's prebuilt container images (`data/images.json`): which image a framework, version and
accelerator get, for training and for prediction, and the Reduction Server image.

The accelerator decides the image's kind: no accelerator is CPU, an NVIDIA type is GPU, a TPU type
(or a TPU machine type, whose accelerator is implied) is TPU. A version with no image of that kind
is refused, naming the framework, version and accelerator, as Vertex would leave a GPU unused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from vertexkit.specs.catalog import catalog
from vertexkit.specs.errors import SpecError
from vertexkit.specs.inputs import framework_name as canonical_framework

KINDS = ("CPU", "GPU", "TPU")
# {framework: {version: {kind: image URI}}}
ImageTable = dict[str, dict[str, dict[str, str]]]


@dataclass(frozen=True)
class ImageTables:
    training: ImageTable
    prediction: ImageTable
    reduction_server_image: str  # with its tag, as a worker pool names it


@cache
def image_tables() -> ImageTables:
    text = resources.files("vertexkit.specs").joinpath("data/images.json").read_text("utf-8")
    raw: dict[str, Any] = json.loads(text)
    return ImageTables(raw["training"], raw["prediction"], raw["reduction_server_image"])


def accelerator_kind(accelerator_type: str = "", machine_type: str = "") -> str:
    """'CPU', 'GPU' or 'TPU' for a machine spec; an unknown accelerator counts as none here
    (the machine spec check names it)."""
    machine = catalog().machine_types.get(machine_type)
    name = accelerator_type or (machine.implied_accelerator if machine else None) or ""
    if catalog().is_tpu_accelerator(name) or (machine and machine.tpu):
        return "TPU"
    info = catalog().accelerators.get(name)
    return "GPU" if info and info["kind"] == "GPU" else "CPU"


def training_image(
    framework: str, version: str = "", accelerator_type: str = "", machine_type: str = ""
) -> str:
    """The prebuilt training image (executorImageUri) for a framework on this machine."""
    return _choose("training", framework, version, accelerator_type, machine_type)


def prediction_image(framework: str, version: str = "", accelerator_type: str = "") -> str:
    """The prebuilt prediction image for a framework, for serving on `accelerator_type`."""
    return _choose("prediction", framework, version, accelerator_type, "")


def _choose(use: str, framework: str, version: str, accelerator: str, machine: str) -> str:
    table: ImageTable = getattr(image_tables(), use)
    name = framework_name(framework, table)
    kind = accelerator_kind(accelerator, machine)
    versions = table[name]
    if not version:
        having = [v for v, images in versions.items() if kind in images]
        if not having:
            raise SpecError("framework", _kind_missing(name, "", use, kind, accelerator))
        return versions[max(having, key=version_key)][kind]
    version = normalise_version(version)
    if version not in versions:
        raise SpecError(
            "framework_version",
            f"no prebuilt {name} {use} image for version {version!r}; "
            f"allowed: {sorted(versions, key=version_key)}",
        )
    if kind not in versions[version]:
        raise SpecError("framework_version", _kind_missing(name, version, use, kind, accelerator))
    return versions[version][kind]


def _kind_missing(name: str, version: str, use: str, kind: str, accelerator: str) -> str:
    table: ImageTable = getattr(image_tables(), use)
    having = sorted((v for v, i in table[name].items() if kind in i), key=version_key)
    asked = f"{accelerator} ({kind})" if accelerator else kind
    label = f"{name} {version}".strip()
    return (
        f"Vertex has no prebuilt {label} {use} image for {asked}; "
        f"{name} versions with a {kind} image: {having or 'none'}"
    )


def framework_name(framework: str, table: ImageTable | None = None) -> str:
    """'scikit-learn' -> 'sklearn', ...; refuses a framework with no prebuilt image."""
    choices = tuple(sorted(table if table is not None else image_tables().training))
    return canonical_framework(framework, choices)


def normalise_version(version: str) -> str:
    """'1-3', '1.3', '1.3.2' -> '1.3' (images are per minor version)."""
    parts = str(version).replace("-", ".").split(".")
    return ".".join(parts[:2])


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))
