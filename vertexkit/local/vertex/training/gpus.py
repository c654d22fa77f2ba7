"""The machine's NVIDIA GPUs, and who holds which: each replica gets exactly its
`acceleratorCount` GPUs, as Vertex gives each replica its own machine's GPUs.

The inventory is what `nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader`
prints; no `nvidia-smi` (or one that fails) means no GPUs, and jobs run on CPU as before. A job
takes all the GPUs its replicas need at once, or waits for them in JOB_STATE_PENDING (Vertex's
state while it finds machines); releasing them wakes the waiting jobs. Each replica sees its GPUs
through CUDA_VISIBLE_DEVICES (indices in PCI bus order, as nvidia-smi numbers them) and
NVIDIA_VISIBLE_DEVICES (UUIDs, for a container runtime); on a GPU machine a replica that asked for
none sees none, as on Vertex.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vertexkit.specs import SpecError, catalog

QUERY = ("--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader")
NVIDIA_SMI_TIMEOUT_SECONDS = 10
WAIT_SECONDS = 0.05  # how often a waiting job looks at its stop event
Log = Callable[[str], None]


@dataclass(frozen=True)
class Gpu:
    index: int
    uuid: str
    name: str
    memory_mib: int

    def describe(self) -> str:
        return f"{self.index} ({self.name}, {self.uuid})"


@dataclass(frozen=True)
class ReplicaRequest:
    pool: int
    index: int
    count: int
    accelerator_type: str

    @property
    def label(self) -> str:
        return f"workerpool{self.pool}-{self.index}"


# -- inventory -------------------------------------------------------------------------------
def parse_inventory(text: str) -> list[Gpu]:
    """The GPUs in nvidia-smi's CSV (`0, GPU-<uuid>, NVIDIA H200, 143771 MiB` per line)."""
    gpus = []
    for line in text.splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) != 4 or not parts[0].isdigit():
            continue
        memory = re.match(r"\d+", parts[3])
        gpus.append(Gpu(int(parts[0]), parts[1], parts[2], int(memory[0]) if memory else 0))
    return gpus


def discover(env: Mapping[str, str] | None = None) -> list[Gpu]:
    """This machine's NVIDIA GPUs, found by running `nvidia-smi` from PATH; [] without one."""
    executable = shutil.which("nvidia-smi", path=(env or os.environ).get("PATH"))
    if not executable:
        return []
    try:
        done = subprocess.run(
            [executable, *QUERY],
            capture_output=True,
            text=True,
            timeout=NVIDIA_SMI_TIMEOUT_SECONDS,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return []  # a driver that does not answer: no usable GPU
    return parse_inventory(done.stdout)


def gpu_model(accelerator_type: str) -> str:
    """'NVIDIA_TESLA_T4' -> 'T4', 'NVIDIA_H200_141GB' -> 'H200': the model in the GPU's name."""
    name = re.sub(r"^NVIDIA_(TESLA_)?", "", accelerator_type)
    return re.sub(r"(_MEGA)?_\d+GB$", "", name)


def matches(accelerator_type: str, gpu: Gpu) -> bool:
    return re.search(rf"\b{re.escape(gpu_model(accelerator_type))}\b", gpu.name.upper()) is not None


def is_gpu(accelerator_type: str) -> bool:
    info = catalog().accelerators.get(accelerator_type or "")
    return bool(info and info["kind"] == "GPU")


def requests(job_spec: Mapping[str, Any]) -> list[ReplicaRequest]:
    """One request per replica that asks for GPUs, in pool and replica order."""
    wanted = []
    for pool, spec in enumerate(job_spec.get("workerPoolSpecs") or []):
        machine = spec.get("machineSpec") or {}
        kind, count = machine.get("acceleratorType", ""), int(machine.get("acceleratorCount") or 0)
        if not is_gpu(kind) or count < 1:
            continue
        for index in range(int(spec.get("replicaCount") or 0)):
            wanted.append(ReplicaRequest(pool, index, count, kind))
    return wanted


# -- allocation ------------------------------------------------------------------------------
@dataclass
class Lease:
    """The GPUs one job holds, per replica; `env` is ClusterPlan's device hook."""

    inventory: tuple[Gpu, ...]
    granted: dict[tuple[int, int], list[Gpu]] = field(default_factory=dict)

    def env(self, pool: int, index: int) -> dict[str, str]:
        if not self.inventory:
            return {}  # no GPU on this machine: replicas inherit the environment as before
        gpus = self.granted.get((pool, index), [])
        return {
            "CUDA_DEVICE_ORDER": "PCI_BUS_ID",  # CUDA's numbering = nvidia-smi's
            "CUDA_VISIBLE_DEVICES": ",".join(str(gpu.index) for gpu in gpus),
            "NVIDIA_VISIBLE_DEVICES": ",".join(gpu.uuid for gpu in gpus) or "void",
        }


class GpuAllocator:
    """Hands out the inventory's GPUs to jobs, all of a job's at once, first come first served."""

    def __init__(self, inventory: list[Gpu]) -> None:
        self.inventory = tuple(inventory)
        self._held: dict[str, list[Gpu]] = {}
        self._changed = threading.Condition()

    def free(self) -> list[Gpu]:
        held = {gpu.index for gpus in self._held.values() for gpu in gpus}
        return [gpu for gpu in self.inventory if gpu.index not in held]

    def check_fits(self, job_spec: Mapping[str, Any], prefix: str) -> None:
        """Refuses a job that could never start here: more GPUs than the machine has."""
        wanted = requests(job_spec)
        total = sum(request.count for request in wanted)
        if not self.inventory or total <= len(self.inventory):
            return
        first = wanted[0]
        raise SpecError(
            f"{prefix}.workerPoolSpecs[{first.pool}].machineSpec.acceleratorCount",
            f"the job asks for {total} GPUs in all ({_per_replica(wanted)}) but this machine has "
            f"{len(self.inventory)} ({self.inventory[0].name}); ask for at most "
            f"{len(self.inventory)} GPUs across all replicas",
        )

    def acquire(
        self, owner: str, job_spec: Mapping[str, Any], stop: threading.Event, log: Log
    ) -> Lease | None:
        """Waits until every replica's GPUs are free, takes them; None if `stop` came first."""
        wanted = requests(job_spec)
        if not self.inventory or not wanted:
            return Lease(self.inventory)
        total = sum(request.count for request in wanted)
        with self._changed:
            if len(self.free()) < total:
                log(f"waiting in JOB_STATE_PENDING for {total} GPUs: others' jobs hold them")
            while len(self.free()) < total:
                if stop.is_set():
                    return None
                self._changed.wait(WAIT_SECONDS)
            lease = self._grant(owner, wanted)
        for request in wanted:
            gpus = lease.granted[(request.pool, request.index)]
            log(f"{request.label}: GPUs {', '.join(gpu.describe() for gpu in gpus)}")
        return lease

    def _grant(self, owner: str, wanted: list[ReplicaRequest]) -> Lease:
        free = self.free()
        lease = Lease(self.inventory)
        for request in wanted:
            lease.granted[(request.pool, request.index)] = free[: request.count]
            free = free[request.count :]
        self._held[owner] = [gpu for gpus in lease.granted.values() for gpu in gpus]
        return lease

    def release(self, owner: str) -> None:
        with self._changed:
            if self._held.pop(owner, None) is not None:
                self._changed.notify_all()


def _per_replica(wanted: list[ReplicaRequest]) -> str:
    pools: dict[int, list[ReplicaRequest]] = {}
    for request in wanted:
        pools.setdefault(request.pool, []).append(request)
    return "; ".join(
        f"workerpool{pool}: {len(reqs)} replica(s) x acceleratorCount {reqs[0].count}"
        for pool, reqs in pools.items()
    )


def describe_mismatch(accelerator_type: str, inventory: tuple[Gpu, ...]) -> str | None:
    """One line when the machine's GPUs are not the type asked for, else None."""
    if not inventory or any(matches(accelerator_type, gpu) for gpu in inventory):
        return None
    names = sorted({gpu.name for gpu in inventory})
    return f"{accelerator_type} requested; this machine has {', '.join(names)}: running on those."
