"""Resource specs and their validation, shared by the local cloud and the components.

Typed pydantic models of the Vertex REST resources (snake_case in Python, camelCase on the
wire via `from_api` / `to_api`), checked the way Vertex checks them on create. Every failure
is a `SpecError` whose `.field` is the dotted camelCase path and whose message names the
allowed values. The machine and accelerator tables live in `data/compute.json`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Light, and imported at once: `catalog` the function must win over `catalog` the submodule,
# which a lazy lookup would leave in its place once any module imported the submodule.
from vertexkit.specs.catalog import Catalog, MachineType, catalog
from vertexkit.specs.errors import SpecError

if TYPE_CHECKING:
    from vertexkit.specs.machines import (
        DedicatedResources,
        DiskSpec,
        MachineSpec,
        validate_dedicated_resources,
    )
    from vertexkit.specs.naming import (
        parse_resource_name,
        validate_display_name,
        validate_endpoint_id,
        validate_labels,
        validate_model_id,
        validate_region,
    )
    from vertexkit.specs.schedules import Schedule, validate_cron
    from vertexkit.specs.study import (
        HyperparameterTuningJob,
        MetricSpec,
        ParameterSpec,
        StudySpec,
        validate_tuning_job,
    )
    from vertexkit.specs.worker_pools import (
        ContainerSpec,
        CustomJobSpec,
        PythonPackageSpec,
        Scheduling,
        WorkerPoolSpec,
        validate_custom_job_spec,
    )

# The other names load on first use (PEP 562), so a caller of one small module (the CLI's
# option checks use `naming` alone) does not pay for every spec's pydantic models: importing
# the CLI's verbs went from 0.47-0.51 to 0.26-0.29 s of CPU.
_HOMES = {  # each name: the module that defines it, imported on first use
    "ContainerSpec": "vertexkit.specs.worker_pools",
    "CustomJobSpec": "vertexkit.specs.worker_pools",
    "DedicatedResources": "vertexkit.specs.machines",
    "DiskSpec": "vertexkit.specs.machines",
    "HyperparameterTuningJob": "vertexkit.specs.study",
    "MachineSpec": "vertexkit.specs.machines",
    "MetricSpec": "vertexkit.specs.study",
    "ParameterSpec": "vertexkit.specs.study",
    "PythonPackageSpec": "vertexkit.specs.worker_pools",
    "Schedule": "vertexkit.specs.schedules",
    "Scheduling": "vertexkit.specs.worker_pools",
    "StudySpec": "vertexkit.specs.study",
    "WorkerPoolSpec": "vertexkit.specs.worker_pools",
    "parse_resource_name": "vertexkit.specs.naming",
    "validate_cron": "vertexkit.specs.schedules",
    "validate_custom_job_spec": "vertexkit.specs.worker_pools",
    "validate_dedicated_resources": "vertexkit.specs.machines",
    "validate_display_name": "vertexkit.specs.naming",
    "validate_endpoint_id": "vertexkit.specs.naming",
    "validate_labels": "vertexkit.specs.naming",
    "validate_model_id": "vertexkit.specs.naming",
    "validate_region": "vertexkit.specs.naming",
    "validate_tuning_job": "vertexkit.specs.study",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value


__all__ = [
    "Catalog",
    "ContainerSpec",
    "CustomJobSpec",
    "DedicatedResources",
    "DiskSpec",
    "HyperparameterTuningJob",
    "MachineSpec",
    "MachineType",
    "MetricSpec",
    "ParameterSpec",
    "PythonPackageSpec",
    "Schedule",
    "Scheduling",
    "SpecError",
    "StudySpec",
    "WorkerPoolSpec",
    "catalog",
    "parse_resource_name",
    "validate_cron",
    "validate_custom_job_spec",
    "validate_dedicated_resources",
    "validate_display_name",
    "validate_endpoint_id",
    "validate_labels",
    "validate_model_id",
    "validate_region",
    "validate_tuning_job",
]
