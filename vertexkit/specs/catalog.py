"""The compute tables of `data/compute.json`: machines, accelerators, counts, regions; and the
Reduction Server image, which lives with the other prebuilt images in `data/images.json`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class MachineType:
    name: str
    vcpus: int | None
    accelerators: dict[str, tuple[int, ...]] = field(default_factory=dict)
    gpu_bundled: bool = False
    tpu: bool = False
    accelerator_required: bool = False
    implied_accelerator: str | None = None
    topologies: tuple[str, ...] = ()


@dataclass(frozen=True)
class Catalog:
    machine_types: dict[str, MachineType]
    accelerators: dict[str, dict[str, Any]]
    implied_accelerators: dict[str, str]
    deprecated_accelerators: frozenset[str]
    prediction_only_machine_types: frozenset[str]
    reduction_server_image: str  # the repository, without tag or digest
    regions: tuple[str, ...]
    n1_gpu_vcpu_limits: dict[str, dict[str, int]] = field(default_factory=dict)

    def gpu_types(self) -> list[str]:
        return [name for name, info in self.accelerators.items() if info["kind"] == "GPU"]

    def current_gpu_types(self) -> list[str]:
        """GPU types a new job may ask for (end-of-support ones left out)."""
        return [name for name in self.gpu_types() if name not in self.deprecated_accelerators]

    def is_tpu_accelerator(self, name: str) -> bool:
        info = self.accelerators.get(name)
        return bool(info and info["kind"] == "TPU") or name in self.implied_accelerators

    def serving_only_machine(self, name: str) -> MachineType:
        """A prediction-only machine type: N1 ones take the N1 GPUs their vCPUs allow (the
        same ceiling as training), E2 and N2 ones take no accelerator."""
        vcpus = int(name.rsplit("-", 1)[1])
        accelerators: dict[str, tuple[int, ...]] = {}
        if name.startswith("n1-"):
            for gpu, ceilings in self.n1_gpu_vcpu_limits.items():
                counts = tuple(int(n) for n, ceiling in ceilings.items() if vcpus <= ceiling)
                if counts:
                    accelerators[gpu] = counts
        return MachineType(name=name, vcpus=vcpus, accelerators=accelerators)

    def machines_for(self, accelerator: str) -> list[str]:
        """Machine types that accept `accelerator`, in table order."""
        return [
            machine.name
            for machine in self.machine_types.values()
            if accelerator in machine.accelerators
        ]


def _machine(name: str, raw: dict[str, Any]) -> MachineType:
    return MachineType(
        name=name,
        vcpus=raw.get("vcpus"),
        accelerators={kind: tuple(counts) for kind, counts in raw.get("accelerators", {}).items()},
        gpu_bundled=bool(raw.get("gpu_bundled")),
        tpu=bool(raw.get("tpu")),
        accelerator_required=bool(raw.get("accelerator_required")),
        implied_accelerator=raw.get("implied_accelerator"),
        topologies=tuple(raw.get("topologies", ())),
    )


def _data(name: str) -> dict[str, Any]:
    text = resources.files("vertexkit.specs").joinpath(f"data/{name}").read_text("utf-8")
    return json.loads(text)


def _repository(image: str) -> str:
    return image.split("@")[0].rsplit(":", 1)[0]


@cache
def catalog() -> Catalog:
    raw = _data("compute.json")
    return Catalog(
        machine_types={name: _machine(name, m) for name, m in raw["machine_types"].items()},
        accelerators=raw["accelerators"],
        implied_accelerators=raw["implied_accelerators"],
        deprecated_accelerators=frozenset(raw["deprecated_accelerators"]),
        prediction_only_machine_types=frozenset(raw["prediction_only_machine_types"]),
        reduction_server_image=_repository(_data("images.json")["reduction_server_image"]),
        regions=tuple(raw["regions"]),
        n1_gpu_vcpu_limits=raw["n1_gpu_vcpu_limits"],
    )
