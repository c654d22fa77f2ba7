from __future__ import annotations

from typing import Any

import pytest

from vertexkit.specs import (
    DiskSpec,
    MachineSpec,
    SpecError,
    validate_custom_job_spec,
    validate_dedicated_resources,
)


def job_with(machine: dict[str, Any], **pool: Any) -> dict[str, Any]:
    return {
        "workerPoolSpecs": [
            {"machineSpec": machine, "replicaCount": "1", "containerSpec": {"imageUri": "img"}}
            | pool
        ]
    }


def rejected(machine: dict[str, Any], **pool: Any) -> SpecError:
    with pytest.raises(SpecError) as caught:
        validate_custom_job_spec(job_with(machine, **pool))
    return caught.value


@pytest.mark.parametrize(
    "machine",
    [
        {"machineType": "n1-standard-4"},
        {"machineType": "e2-standard-4"},
        {
            "machineType": "n1-standard-4",
            "acceleratorType": "NVIDIA_TESLA_T4",
            "acceleratorCount": 1,
        },
        {
            "machineType": "n1-standard-8",
            "acceleratorType": "NVIDIA_TESLA_V100",
            "acceleratorCount": 8,
        },
        {
            "machineType": "n1-highmem-2",
            "acceleratorType": "NVIDIA_TESLA_P100",
            "acceleratorCount": 4,
        },
        {
            "machineType": "n1-standard-16",
            "acceleratorType": "NVIDIA_TESLA_P4",
            "acceleratorCount": 2,
        },
        {
            "machineType": "a2-highgpu-4g",
            "acceleratorType": "NVIDIA_TESLA_A100",
            "acceleratorCount": 4,
        },
        {
            "machineType": "a2-megagpu-16g",
            "acceleratorType": "NVIDIA_TESLA_A100",
            "acceleratorCount": 16,
        },
        {
            "machineType": "a2-ultragpu-2g",
            "acceleratorType": "NVIDIA_A100_80GB",
            "acceleratorCount": 2,
        },
        {
            "machineType": "a3-highgpu-8g",
            "acceleratorType": "NVIDIA_H100_80GB",
            "acceleratorCount": 8,
        },
        {
            "machineType": "a3-megagpu-8g",
            "acceleratorType": "NVIDIA_H100_MEGA_80GB",
            "acceleratorCount": 8,
        },
        {
            "machineType": "a3-ultragpu-8g",
            "acceleratorType": "NVIDIA_H200_141GB",
            "acceleratorCount": 8,
        },
        {"machineType": "a4-highgpu-8g", "acceleratorType": "NVIDIA_B200", "acceleratorCount": 8},
        {"machineType": "g2-standard-24", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 2},
        {"machineType": "g2-standard-4", "acceleratorType": 11, "acceleratorCount": 1},  # int enum
        {"machineType": "cloud-tpu", "acceleratorType": "TPU_V3", "acceleratorCount": 8},
        {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "2x2"},
        {
            "machineType": "ct5lp-hightpu-8t",
            "acceleratorType": "TPU_V5_LITEPOD",
            "acceleratorCount": 8,
        },
        {"machineType": "ct5p-hightpu-4t", "tpuTopology": "2x2x1"},
        {"machineType": "ct6e-standard-8t", "tpuTopology": "2x4"},
    ],
)
def test_machines_vertex_accepts(machine: dict[str, Any]) -> None:
    spec = validate_custom_job_spec(job_with(machine))
    assert spec.worker_pool_specs[0].machine_spec is not None
    assert spec.worker_pool_specs[0].machine_spec.machine_type == machine["machineType"]


def test_unknown_machine_type_names_the_known_ones() -> None:
    error = rejected({"machineType": "n9-turbo-4"})
    assert error.field == "workerPoolSpecs[0].machineSpec.machineType"
    assert "n1-standard-4" in str(error) and "a2-highgpu-1g" in str(error)


def test_missing_machine_type() -> None:
    error = rejected({})
    assert error.field == "workerPoolSpecs[0].machineSpec.machineType"


def test_prediction_only_machine_is_not_for_training() -> None:
    error = rejected({"machineType": "n1-standard-2"})
    assert "predictions only" in str(error) and "n1-standard-4" in str(error)


def test_unknown_accelerator_names_the_enum() -> None:
    error = rejected({"machineType": "n1-standard-4", "acceleratorType": "NVIDIA_RTX_9090"})
    assert error.field == "workerPoolSpecs[0].machineSpec.acceleratorType"
    assert "NVIDIA_TESLA_T4" in str(error) and "NVIDIA_H100_80GB" in str(error)


def test_unknown_accelerator_number() -> None:
    error = rejected({"machineType": "n1-standard-4", "acceleratorType": 99})
    assert "99" in str(error) and "NVIDIA_L4" in str(error)


def test_gpu_on_wrong_machine_names_the_machines_that_take_it() -> None:
    error = rejected(
        {
            "machineType": "n2-standard-8",
            "acceleratorType": "NVIDIA_TESLA_T4",
            "acceleratorCount": 1,
        }
    )
    assert error.field == "workerPoolSpecs[0].machineSpec.acceleratorType"
    assert "n1-standard-4" in str(error) and "n2-standard-8" in str(error)


def test_a100_40gb_only_on_a2_highgpu() -> None:
    error = rejected(
        {
            "machineType": "a2-ultragpu-1g",
            "acceleratorType": "NVIDIA_TESLA_A100",
            "acceleratorCount": 1,
        }
    )
    assert "a2-highgpu-1g" in str(error) and "NVIDIA_A100_80GB" in str(error)


@pytest.mark.parametrize(
    ("machine", "accelerator", "count", "allowed"),
    [
        ("a2-highgpu-2g", "NVIDIA_TESLA_A100", 1, "allows acceleratorCount 2;"),
        ("a3-highgpu-4g", "NVIDIA_H100_80GB", 8, "allows acceleratorCount 4;"),
        ("g2-standard-48", "NVIDIA_L4", 1, "allows acceleratorCount 4;"),
        ("n1-standard-4", "NVIDIA_TESLA_T4", 3, "allows acceleratorCount 1, 2, 4;"),
        ("n1-standard-32", "NVIDIA_TESLA_V100", 2, "allows acceleratorCount 4, 8;"),
        ("n1-standard-96", "NVIDIA_TESLA_T4", 2, "allows acceleratorCount 4;"),
        ("cloud-tpu", "TPU_V2", 4, "allows acceleratorCount 8;"),
    ],
)
def test_wrong_count_names_the_allowed_counts(
    machine: str, accelerator: str, count: int, allowed: str
) -> None:
    error = rejected(
        {"machineType": machine, "acceleratorType": accelerator, "acceleratorCount": count}
    )
    assert error.field == "workerPoolSpecs[0].machineSpec.acceleratorCount"
    assert allowed in str(error)


def test_p100_does_not_fit_a_96_vcpu_n1() -> None:
    error = rejected(
        {
            "machineType": "n1-standard-96",
            "acceleratorType": "NVIDIA_TESLA_P100",
            "acceleratorCount": 4,
        }
    )
    assert "cannot be attached to n1-standard-96" in str(error)
    assert "NVIDIA_TESLA_T4" in str(error)  # what the machine does take


def test_count_without_type() -> None:
    error = rejected({"machineType": "n1-standard-4", "acceleratorCount": 2})
    assert error.field == "workerPoolSpecs[0].machineSpec.acceleratorType"
    assert "NVIDIA_TESLA_T4" in str(error)


def test_bundled_gpu_machine_needs_its_gpus_named() -> None:
    error = rejected({"machineType": "a2-highgpu-1g"})
    assert error.field == "workerPoolSpecs[0].machineSpec.acceleratorType"
    assert "NVIDIA_TESLA_A100" in str(error) and "acceleratorCount 1" in str(error)


def test_deprecated_k80_is_refused() -> None:
    error = rejected(
        {
            "machineType": "n1-standard-4",
            "acceleratorType": "NVIDIA_TESLA_K80",
            "acceleratorCount": 1,
        }
    )
    assert "end of support" in str(error) and "NVIDIA_TESLA_T4" in str(error)


def test_tpu_accelerator_on_cpu_machine() -> None:
    error = rejected(
        {"machineType": "n1-standard-8", "acceleratorType": "TPU_V3", "acceleratorCount": 8}
    )
    assert error.field == "workerPoolSpecs[0].machineSpec.machineType"
    assert "cloud-tpu" in str(error)


def test_cloud_tpu_needs_v2_or_v3() -> None:
    error = rejected({"machineType": "cloud-tpu"})
    assert "TPU_V2" in str(error) and "TPU_V3" in str(error)


def test_v6e_is_chosen_by_machine_type() -> None:
    error = rejected({"machineType": "ct6e-standard-4t", "acceleratorType": "TPU_V6E"})
    assert "ct6e-standard" in str(error) and "leave acceleratorType unset" in str(error)


def test_gpu_on_tpu_machine() -> None:
    error = rejected(
        {"machineType": "ct5lp-hightpu-4t", "acceleratorType": "NVIDIA_L4", "acceleratorCount": 1}
    )
    assert "TPU_V5_LITEPOD" in str(error)


def test_tpu_topology_must_match_machine() -> None:
    error = rejected({"machineType": "ct5lp-hightpu-1t", "tpuTopology": "2x2"})
    assert error.field == "workerPoolSpecs[0].machineSpec.tpuTopology"
    assert "1x1" in str(error)


def test_machine_spec_from_snake_case_kwargs() -> None:
    spec = MachineSpec(
        machine_type="g2-standard-8", accelerator_type="NVIDIA_L4", accelerator_count=1
    )
    assert spec.to_api() == {
        "machineType": "g2-standard-8",
        "acceleratorType": "NVIDIA_L4",
        "acceleratorCount": 1,
    }
    assert spec.uses_gpu and not spec.uses_tpu
    with pytest.raises(SpecError) as caught:
        MachineSpec(machine_type="g2-standard-8", accelerator_type="NVIDIA_L4", accelerator_count=2)
    assert caught.value.field == "acceleratorCount"


def test_disk_defaults_and_limits() -> None:
    assert DiskSpec().to_api() == {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100}
    assert DiskSpec.from_api({"bootDiskSizeGb": 0}).boot_disk_size_gb == 100  # proto "unset"
    assert (
        DiskSpec(boot_disk_type="pd-standard", boot_disk_size_gb=64000).boot_disk_size_gb == 64000
    )
    for size in (99, 64001):
        error = rejected({"machineType": "n1-standard-4"}, diskSpec={"bootDiskSizeGb": size})
        assert error.field == "workerPoolSpecs[0].diskSpec.bootDiskSizeGb"
        assert "100 and 64000" in str(error)
    error = rejected({"machineType": "n1-standard-4"}, diskSpec={"bootDiskType": "pd-balanced"})
    assert error.field == "workerPoolSpecs[0].diskSpec.bootDiskType"
    assert "pd-ssd, pd-standard" in str(error)


def test_dedicated_resources() -> None:
    validate_dedicated_resources(
        {
            "machineSpec": {"machineType": "n1-standard-2"},
            "minReplicaCount": 1,
            "maxReplicaCount": 3,
        }
    )
    validate_dedicated_resources({"minReplicaCount": 1})  # machine defaults to n1-standard-2
    # Deployments may take part of an accelerator-optimised VM's GPUs.
    validate_dedicated_resources(
        {
            "machineSpec": {
                "machineType": "a3-highgpu-8g",
                "acceleratorType": "NVIDIA_H100_80GB",
                "acceleratorCount": 2,
            },
            "minReplicaCount": 1,
        }
    )
    with pytest.raises(SpecError) as caught:
        validate_dedicated_resources({"machineSpec": {"machineType": "n1-standard-2"}})
    assert caught.value.field == "dedicatedResources.minReplicaCount"
    with pytest.raises(SpecError) as caught:
        validate_dedicated_resources(
            {
                "machineSpec": {"machineType": "n1-standard-4"},
                "minReplicaCount": 3,
                "maxReplicaCount": 2,
            }
        )
    assert caught.value.field == "dedicatedResources.maxReplicaCount"
    assert "minReplicaCount (3)" in str(caught.value)
    with pytest.raises(SpecError) as caught:
        validate_dedicated_resources(
            {"machineSpec": {"machineType": "z9-mega"}, "minReplicaCount": 1}
        )
    assert caught.value.field == "dedicatedResources.machineSpec.machineType"
    assert "n1-standard-2" in str(caught.value)
