"""The data file stays consistent with itself and with the installed aiplatform_v1 types."""

from __future__ import annotations

import pytest
from google.cloud import aiplatform_v1
from pydantic.alias_generators import to_camel

from vertexkit.specs import (
    ContainerSpec,
    CustomJobSpec,
    DedicatedResources,
    DiskSpec,
    HyperparameterTuningJob,
    MachineSpec,
    ParameterSpec,
    PythonPackageSpec,
    Scheduling,
    StudySpec,
    WorkerPoolSpec,
    catalog,
)
from vertexkit.specs.base import SpecModel


def test_accelerator_numbers_match_the_proto_enum() -> None:
    for name, info in catalog().accelerators.items():
        assert aiplatform_v1.AcceleratorType[name].value == info["enum"], name


def test_required_accelerators_are_documented() -> None:
    wanted = {
        "NVIDIA_TESLA_T4",
        "NVIDIA_TESLA_P4",
        "NVIDIA_TESLA_P100",
        "NVIDIA_TESLA_V100",
        "NVIDIA_L4",
        "NVIDIA_TESLA_A100",
        "NVIDIA_A100_80GB",
        "NVIDIA_H100_80GB",
        "NVIDIA_H100_MEGA_80GB",
        "NVIDIA_H200_141GB",
        "NVIDIA_B200",
        "TPU_V2",
        "TPU_V3",
        "TPU_V4_POD",
        "TPU_V5_LITEPOD",
    }
    tables = catalog()
    assert wanted <= set(tables.accelerators)
    assert {"TPU_V5P", "TPU_V6E"} <= set(tables.implied_accelerators)
    for name in wanted:
        assert tables.machines_for(name), f"no machine type takes {name}"


def test_every_machine_accelerator_is_known() -> None:
    tables = catalog()
    for machine in tables.machine_types.values():
        for name, counts in machine.accelerators.items():
            assert name in tables.accelerators and counts, machine.name
        if machine.implied_accelerator:
            assert machine.tpu


@pytest.mark.parametrize(
    ("model", "proto"),
    [
        (MachineSpec, aiplatform_v1.MachineSpec),
        (DiskSpec, aiplatform_v1.DiskSpec),
        (ContainerSpec, aiplatform_v1.ContainerSpec),
        (PythonPackageSpec, aiplatform_v1.PythonPackageSpec),
        (WorkerPoolSpec, aiplatform_v1.WorkerPoolSpec),
        (Scheduling, aiplatform_v1.Scheduling),
        (CustomJobSpec, aiplatform_v1.CustomJobSpec),
        (StudySpec, aiplatform_v1.StudySpec),
        (ParameterSpec, aiplatform_v1.StudySpec.ParameterSpec),
        (HyperparameterTuningJob, aiplatform_v1.HyperparameterTuningJob),
        (DedicatedResources, aiplatform_v1.DedicatedResources),
    ],
)
def test_models_cover_every_proto_field(model: type[SpecModel], proto: type) -> None:
    """A field the proto accepts must not be refused as unknown by our model."""
    proto_fields = {to_camel(name) for name in proto.meta.fields}
    model_fields = {to_camel(name) for name in model.model_fields}
    assert proto_fields - model_fields == set()
    assert model_fields - proto_fields == set()
