"""What the local cloud needs to run a worker pool as local processes, beyond Vertex's own
rules (`vertexkit.specs`): a command to run (no Docker for an image's entrypoint), and command,
args and env that fit what exec() takes. Shared by every job that runs pools: custom jobs,
tuning trials, training pipelines."""

from __future__ import annotations

import os
from typing import Any

from vertexkit.local.vertex.training.dispositions import check_refused
from vertexkit.specs import SpecError

NO_ENTRYPOINT = (
    "{field}.command: this image's entrypoint cannot run without Docker; give `command` "
    '(e.g. ["python", "-m", "trainer.task"]) or use a python package spec (pythonPackageSpec)'
)


# Linux's MAX_ARG_STRLEN for one argv/env string, and half of ARG_MAX for all of them (the
# other half is left to the environment the local cloud adds).
MAX_ARG_BYTES = 128 * 1024
MAX_EXEC_BYTES = min(os.sysconf("SC_ARG_MAX"), 2 * 1024 * 1024) // 2


def check_runnable_pools(spec: dict[str, Any], prefix: str) -> None:
    """What the local cloud needs to run a pool, beyond Vertex's own rules."""
    check_refused(spec, prefix)  # fields that need what this machine cannot give
    pools = spec.get("workerPoolSpecs") or []
    if not pools:
        raise SpecError(f"{prefix}.workerPoolSpecs", "at least one worker pool is required")
    for i, pool in enumerate(pools):
        field = f"{prefix}.workerPoolSpecs[{i}]"
        if not int(pool.get("replicaCount") or 0):
            continue
        if "containerSpec" in pool:
            if not pool["containerSpec"].get("command"):
                raise SpecError(field, NO_ENTRYPOINT.format(field=f"{field}.containerSpec"))
            check_fits_in_a_process(pool["containerSpec"], f"{field}.containerSpec")
        elif "pythonPackageSpec" in pool:
            package = pool["pythonPackageSpec"]
            for key in ("packageUris", "pythonModule"):
                if not package.get(key):
                    raise SpecError(f"{field}.pythonPackageSpec.{key}", "is required")
            check_fits_in_a_process(package, f"{field}.pythonPackageSpec")
        else:
            raise SpecError(field, "give containerSpec or pythonPackageSpec")


def check_fits_in_a_process(spec: dict[str, Any], field: str) -> None:
    """A replica is a local process: its command, args and env must fit what exec() takes
    (one string under MAX_ARG_STRLEN, all of them well under ARG_MAX), or it would fail to
    start long after the job was accepted."""
    sizes = dict(exec_string_sizes(spec))
    for name, size in sizes.items():
        if size > MAX_ARG_BYTES:
            raise SpecError(
                f"{field}.{name}", f"is {size} bytes; a local process takes {MAX_ARG_BYTES}"
            )
    if sum(sizes.values()) > MAX_EXEC_BYTES:
        total = sum(sizes.values())
        raise SpecError(
            field, f"command, args and env take {total} bytes; at most {MAX_EXEC_BYTES}"
        )


def exec_string_sizes(spec: dict[str, Any]) -> list[tuple[str, int]]:
    """(field, bytes exec() needs) for each string of a pool's command, args and env."""
    env = [f"{item.get('name', '')}={item.get('value', '')}" for item in spec.get("env") or []]
    groups = {"command": spec.get("command") or [], "args": spec.get("args") or [], "env": env}
    return [
        (f"{key}[{i}]", len(str(value).encode()) + 1)
        for key, values in groups.items()
        for i, value in enumerate(values)
    ]
