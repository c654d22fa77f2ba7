"""Resource specs and their validation, shared by the local cloud and the components.

Typed pydantic models of the Vertex REST resources (snake_case in Python, camelCase on the
wire via `from_api` / `to_api`), checked the way Vertex checks them on create. Every failure
is a `SpecError` whose `.field` is the dotted camelCase path and whose message names the
allowed values. The machine and accelerator tables live in `data/compute.json`.
"""

from __future__ import annotations

from vertexkit.specs.catalog import Catalog, MachineType, catalog
from vertexkit.specs.errors import SpecError
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
