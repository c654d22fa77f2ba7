"""Machine, accelerator and disk specs, checked against `data/compute.json`."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from vertexkit.specs.base import SpecModel, enum_name
from vertexkit.specs.catalog import MachineType, catalog
from vertexkit.specs.errors import SpecError, allowed, join_path

NO_ACCELERATOR = "ACCELERATOR_TYPE_UNSPECIFIED"
DISK_TYPES = ("pd-ssd", "pd-standard")
MIN_DISK_GB, MAX_DISK_GB, DEFAULT_DISK_GB = 100, 64000, 100


class MachineSpec(SpecModel):
    """One VM: `MachineSpec(machine_type="a2-highgpu-1g", accelerator_type="NVIDIA_TESLA_A100",
    accelerator_count=1)`."""

    machine_type: str = ""
    accelerator_type: str | None = None
    accelerator_count: int | None = Field(default=None, ge=0)
    tpu_topology: str | None = None
    gpu_partition_size: str | None = None
    reservation_affinity: dict[str, Any] | None = None

    @field_validator("accelerator_type", mode="before")
    @classmethod
    def _accelerator_name(cls, value: Any) -> Any:
        # Imported here: aiplatform_v1 takes ~1 s to import, and most users of the specs
        # (BigQuery tasks, the CLI's parameter checks) never see an enum given as a number.
        from google.cloud.aiplatform_v1.types import accelerator_type

        return enum_name(value, accelerator_type.AcceleratorType, "acceleratorType")

    @property
    def accelerator(self) -> str | None:
        """The accelerator type, or None for a CPU-only machine."""
        if self.accelerator_type in (None, "", NO_ACCELERATOR):
            return None
        return self.accelerator_type

    @property
    def count(self) -> int:
        return self.accelerator_count or 0

    @property
    def uses_gpu(self) -> bool:
        return self.accelerator is not None and not catalog().is_tpu_accelerator(self.accelerator)

    @property
    def uses_tpu(self) -> bool:
        known = catalog().machine_types.get(self.machine_type)
        if known is not None and known.tpu:
            return True
        return self.accelerator is not None and catalog().is_tpu_accelerator(self.accelerator)

    def check_standalone(self) -> None:
        # On its own a machine may be for serving; the pool or deployment using it re-checks.
        self.check("", for_prediction=True)

    def check(self, path: str, *, for_prediction: bool = False) -> None:
        machine = _known_machine(self.machine_type, join_path(path, "machineType"), for_prediction)
        self._check_accelerator_type(path)
        self._check_partition(path)
        if machine.tpu:
            self._check_tpu(machine, path)
        else:
            self._check_gpu(machine, path, for_prediction)

    def _check_accelerator_type(self, path: str) -> None:
        field = join_path(path, "acceleratorType")
        tables = catalog()
        name = self.accelerator
        if name is None:
            if self.count:
                raise SpecError(
                    field,
                    f"required when acceleratorCount is {self.count}; allowed: "
                    f"{allowed(tables.accelerators)}",
                )
            return
        if name in tables.implied_accelerators:
            raise SpecError(field, tables.implied_accelerators[name])
        if name not in tables.accelerators:
            raise SpecError(
                field, f"unknown accelerator type {name!r}; allowed: {allowed(tables.accelerators)}"
            )
        if name in tables.deprecated_accelerators:
            raise SpecError(
                field,
                f"{name} has reached end of support; use one of: "
                f"{allowed(tables.current_gpu_types())}",
            )

    def _check_partition(self, path: str) -> None:
        """MachineSpec.gpuPartitionSize (reference): "If set, the accelerator_count should be
        set to 1." It partitions a GPU, so it needs one."""
        if not self.gpu_partition_size:
            return
        if not self.uses_gpu:
            raise SpecError(
                join_path(path, "gpuPartitionSize"),
                "partitions a GPU: set acceleratorType to a GPU and acceleratorCount to 1",
            )
        if self.count != 1:
            raise SpecError(
                join_path(path, "acceleratorCount"),
                f"must be 1 when gpuPartitionSize is set; got {self.count}",
            )

    def _check_gpu(self, machine: MachineType, path: str, for_prediction: bool) -> None:
        name = self.accelerator
        if name is None:
            if machine.gpu_bundled:
                (bundled, counts), *_ = machine.accelerators.items()
                raise SpecError(
                    join_path(path, "acceleratorType"),
                    f"{machine.name} comes with its GPUs: set acceleratorType {bundled} "
                    f"and acceleratorCount {allowed(counts)}",
                )
            return
        if catalog().is_tpu_accelerator(name):
            raise SpecError(
                join_path(path, "machineType"),
                f"{name} needs a TPU machine type; allowed: "
                f"{allowed(catalog().machines_for(name))}",
            )
        if name not in machine.accelerators:
            takers = catalog().machines_for(name)
            raise SpecError(
                join_path(path, "acceleratorType"),
                f"{name} cannot be attached to {machine.name}; machine types that take it: "
                f"{allowed(takers)}"
                + (
                    f"; {machine.name} takes: {allowed(machine.accelerators)}"
                    if machine.accelerators
                    else ""
                ),
            )
        counts = machine.accelerators[name]
        if for_prediction and machine.gpu_bundled:
            counts = tuple(range(1, max(counts) + 1))  # deployments may co-schedule on part of a VM
        if self.count not in counts:
            raise SpecError(
                join_path(path, "acceleratorCount"),
                f"{machine.name} with {name} allows acceleratorCount {allowed(counts)}; "
                f"got {self.count}",
            )

    def _check_tpu(self, machine: MachineType, path: str) -> None:
        name = self.accelerator
        if name is None and machine.accelerator_required:
            raise SpecError(
                join_path(path, "acceleratorType"),
                f"{machine.name} needs acceleratorType; allowed: {allowed(machine.accelerators)}",
            )
        if name is not None and name not in machine.accelerators:
            choices = (
                allowed(machine.accelerators) if machine.accelerators else "none (leave unset)"
            )
            raise SpecError(
                join_path(path, "acceleratorType"),
                f"{name} cannot be used with {machine.name}; allowed: {choices}",
            )
        if name is not None and self.count not in machine.accelerators[name]:
            raise SpecError(
                join_path(path, "acceleratorCount"),
                f"{machine.name} with {name} allows acceleratorCount "
                f"{allowed(machine.accelerators[name])}; got {self.count}",
            )
        if self.tpu_topology and self.tpu_topology not in machine.topologies:
            raise SpecError(
                join_path(path, "tpuTopology"),
                f"{machine.name} allows tpuTopology {allowed(machine.topologies) or 'unset'}; "
                f"got {self.tpu_topology!r}",
            )


def _known_machine(name: str, field: str, for_prediction: bool) -> MachineType:
    tables = catalog()
    if not name:
        raise SpecError(field, "required; e.g. n1-standard-4, e2-standard-4, a2-highgpu-1g")
    if name in tables.machine_types:
        return tables.machine_types[name]
    if for_prediction and name in tables.prediction_only_machine_types:
        return tables.serving_only_machine(name)
    names = list(tables.machine_types)
    if for_prediction:
        names += sorted(tables.prediction_only_machine_types)
    if name in tables.prediction_only_machine_types:
        raise SpecError(
            field, f"{name} serves predictions only; custom training allows: {allowed(names)}"
        )
    raise SpecError(field, f"unknown machine type {name!r}; allowed: {allowed(names)}")


class DiskSpec(SpecModel):
    """Boot disk of every replica of a pool: pd-ssd (default) or pd-standard, 100..64000 GB."""

    boot_disk_type: str = "pd-ssd"
    boot_disk_size_gb: int = DEFAULT_DISK_GB

    @field_validator("boot_disk_type", mode="before")
    @classmethod
    def _default_type(cls, value: Any) -> Any:
        return "pd-ssd" if value in (None, "") else value

    @field_validator("boot_disk_size_gb", mode="before")
    @classmethod
    def _default_size(cls, value: Any) -> Any:
        return DEFAULT_DISK_GB if value in (None, "", 0, "0") else value  # proto zero means unset

    def check(self, path: str) -> None:
        if self.boot_disk_type not in DISK_TYPES:
            raise SpecError(
                join_path(path, "bootDiskType"),
                f"allowed: {allowed(DISK_TYPES)}; got {self.boot_disk_type!r}",
            )
        if not MIN_DISK_GB <= self.boot_disk_size_gb <= MAX_DISK_GB:
            raise SpecError(
                join_path(path, "bootDiskSizeGb"),
                f"must be between {MIN_DISK_GB} and {MAX_DISK_GB} GB; got {self.boot_disk_size_gb}",
            )


class DedicatedResources(SpecModel):
    """Endpoint deployment resources: a machine and a replica range."""

    machine_spec: MachineSpec = Field(default_factory=lambda: MachineSpec.model_construct())
    min_replica_count: int = 0
    max_replica_count: int = 0
    required_replica_count: int | None = None
    autoscaling_metric_specs: list[dict[str, Any]] | None = None
    spot: bool | None = None

    def check(self, path: str) -> None:
        if not self.machine_spec.machine_type:
            # Vertex's DeployedModel default machine type.
            self.machine_spec = self.machine_spec.model_copy(
                update={"machine_type": "n1-standard-2"}
            )
        self.machine_spec.check(join_path(path, "machineSpec"), for_prediction=True)
        if self.min_replica_count < 1:
            raise SpecError(
                join_path(path, "minReplicaCount"),
                f"must be at least 1; got {self.min_replica_count}",
            )
        if self.max_replica_count and self.max_replica_count < self.min_replica_count:
            raise SpecError(
                join_path(path, "maxReplicaCount"),
                f"must be at least minReplicaCount ({self.min_replica_count}); "
                f"got {self.max_replica_count}",
            )


def validate_dedicated_resources(
    resources: dict[str, Any], path: str = "dedicatedResources"
) -> None:
    """Checks a DeployedModel's `dedicatedResources` JSON; raises SpecError."""
    DedicatedResources.from_api(resources, path)
