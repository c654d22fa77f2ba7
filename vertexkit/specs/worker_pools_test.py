from __future__ import annotations

from typing import Any

import pytest
from google.cloud import aiplatform_v1

from vertexkit.specs import (
    ContainerSpec,
    CustomJobSpec,
    PythonPackageSpec,
    Scheduling,
    SpecError,
    WorkerPoolSpec,
    validate_custom_job_spec,
)

REDUCTION_SERVER = "us-docker.pkg.dev/vertex-ai-training/training/reductionserver:latest"
CPU = {"machineType": "n1-standard-4"}
GPU = {
    "machineType": "n1-standard-8",
    "acceleratorType": "NVIDIA_TESLA_V100",
    "acceleratorCount": 2,
}


def pool(machine: dict[str, Any] = CPU, replicas: int = 1, image: str = "img") -> dict[str, Any]:
    return {
        "machineSpec": machine,
        "replicaCount": str(replicas),
        "containerSpec": {"imageUri": image},
    }


def rejected(spec: dict[str, Any]) -> SpecError:
    with pytest.raises(SpecError) as caught:
        validate_custom_job_spec(spec)
    return caught.value


def test_sdk_request_round_trips() -> None:
    """The JSON the SDK sends (via the proto) parses and comes back equal."""
    proto = aiplatform_v1.CustomJobSpec(
        worker_pool_specs=[
            {
                "machine_spec": {"machine_type": "n1-standard-4"},
                "replica_count": 1,
                "python_package_spec": {
                    "executor_image_uri": "prebuilt/sklearn-cpu:latest",
                    "package_uris": ["gs://bucket/trainer-0.1.tar.gz"],
                    "python_module": "trainer.task",
                    "args": ["--epochs=2"],
                    "env": [{"name": "MODE", "value": "fast"}],
                },
                "disk_spec": {"boot_disk_type": "pd-standard", "boot_disk_size_gb": 200},
            }
        ],
        scheduling={"timeout": "3600s", "restart_job_on_worker_restart": True, "strategy": "SPOT"},
        base_output_directory={"output_uri_prefix": "gs://bucket/out"},
        service_account="trainer@my-project.iam.gserviceaccount.com",
    )
    body = aiplatform_v1.CustomJobSpec.to_dict(proto, use_integers_for_enums=True)
    as_json = type(proto).to_json(proto, use_integers_for_enums=True)
    spec = validate_custom_job_spec(__import__("json").loads(as_json))
    assert spec.scheduling is not None and spec.scheduling.strategy == "SPOT"
    assert spec.scheduling.timeout_seconds == 3600
    back = aiplatform_v1.CustomJobSpec.from_json(__import__("json").dumps(spec.to_api()))
    assert back == proto
    assert body["worker_pool_specs"][0]["replica_count"] == "1"  # int64 travels as a string


def test_python_construction_with_snake_case_kwargs() -> None:
    spec = CustomJobSpec(
        worker_pool_specs=[
            WorkerPoolSpec(
                machine_spec={"machine_type": "n1-standard-4"},
                replica_count=1,
                container_spec=ContainerSpec(
                    image_uri="img", command=["python", "-m", "t"], env={"A": "1"}
                ),
            )
        ],
        scheduling=Scheduling(timeout=600, restart_job_on_worker_restart=True),
    )
    wire = spec.with_defaults().to_api()
    assert wire["scheduling"] == {"timeout": "600s", "restartJobOnWorkerRestart": True}
    assert wire["workerPoolSpecs"][0]["containerSpec"]["env"] == [{"name": "A", "value": "1"}]
    assert wire["workerPoolSpecs"][0]["diskSpec"] == {
        "bootDiskType": "pd-ssd",
        "bootDiskSizeGb": 100,
    }


def test_unknown_field_is_named() -> None:
    error = rejected({"workerPoolSpecs": [pool() | {"replicas": 2}]})
    assert error.field == "workerPoolSpecs[0].replicas"
    assert "unknown field" in str(error)


def test_no_pools() -> None:
    assert rejected({}).field == "workerPoolSpecs"


def test_at_most_four_pools() -> None:
    error = rejected({"workerPoolSpecs": [pool()] * 5})
    assert error.field == "workerPoolSpecs" and "at most 4" in str(error)


def test_chief_has_one_replica() -> None:
    error = rejected({"workerPoolSpecs": [pool(replicas=2)]})
    assert error.field == "workerPoolSpecs[0].replicaCount"
    assert "exactly 1" in str(error)


def test_chief_cannot_be_a_placeholder() -> None:
    assert rejected({"workerPoolSpecs": [{}, pool()]}).field == "workerPoolSpecs[0]"


def test_worker_pool_needs_replicas() -> None:
    error = rejected({"workerPoolSpecs": [pool(), pool(replicas=0)]})
    assert error.field == "workerPoolSpecs[1].replicaCount"


def test_placeholder_pools_before_a_later_pool() -> None:
    validate_custom_job_spec({"workerPoolSpecs": [pool(), {}, {}, pool()]})  # chief + evaluator
    error = rejected({"workerPoolSpecs": [pool(), {}]})
    assert error.field == "workerPoolSpecs[1]" and "placeholder" in str(error)


def test_exactly_one_of_container_or_python_package() -> None:
    both = pool() | {
        "pythonPackageSpec": {
            "executorImageUri": "img",
            "packageUris": ["gs://bkt/p.tar.gz"],
            "pythonModule": "t.task",
        }
    }
    assert "exactly one" in str(rejected({"workerPoolSpecs": [both]}))
    neither = {"machineSpec": CPU, "replicaCount": "1"}
    assert rejected({"workerPoolSpecs": [neither]}).field == "workerPoolSpecs[0]"


def test_container_needs_an_image() -> None:
    error = rejected({"workerPoolSpecs": [pool(image="")]})
    assert error.field == "workerPoolSpecs[0].containerSpec.imageUri"


@pytest.mark.parametrize(
    ("package", "field"),
    [
        ({"packageUris": ["gs://bkt/p.tar.gz"], "pythonModule": "t"}, "executorImageUri"),
        ({"executorImageUri": "img", "pythonModule": "t"}, "packageUris"),
        (
            {"executorImageUri": "img", "packageUris": ["/tmp/p.tar.gz"], "pythonModule": "t"},
            "packageUris[0]",
        ),
        (
            {
                "executorImageUri": "img",
                "packageUris": ["gs://bkt/p.tar.gz"],
                "pythonModule": "t-x",
            },
            "pythonModule",
        ),
    ],
)
def test_python_package_rules(package: dict[str, Any], field: str) -> None:
    spec = {
        "workerPoolSpecs": [{"machineSpec": CPU, "replicaCount": 1, "pythonPackageSpec": package}]
    }
    assert rejected(spec).field == f"workerPoolSpecs[0].pythonPackageSpec.{field}"


def test_python_package_spec_from_kwargs() -> None:
    spec = PythonPackageSpec(
        executor_image_uri="img", package_uris=["gs://bkt/p.tar.gz"], python_module="trainer.task"
    )
    assert spec.to_api()["pythonModule"] == "trainer.task"


def test_env_names_are_identifiers_and_unique() -> None:
    bad = pool() | {"containerSpec": {"imageUri": "i", "env": [{"name": "1X", "value": "v"}]}}
    assert (
        rejected({"workerPoolSpecs": [bad]}).field == "workerPoolSpecs[0].containerSpec.env[0].name"
    )
    twice = [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]
    dup = pool() | {"containerSpec": {"imageUri": "i", "env": twice}}
    assert "duplicate" in str(rejected({"workerPoolSpecs": [dup]}))


def test_tpu_job_has_one_pool_with_one_replica() -> None:
    tpu = {"machineType": "cloud-tpu", "acceleratorType": "TPU_V3", "acceleratorCount": 8}
    validate_custom_job_spec({"workerPoolSpecs": [pool(tpu)]})
    error = rejected({"workerPoolSpecs": [pool(tpu), pool(tpu)]})
    assert error.field == "workerPoolSpecs" and "exactly one worker pool" in str(error)
    v5e = {"machineType": "ct5lp-hightpu-4t"}
    assert "exactly one worker pool" in str(rejected({"workerPoolSpecs": [pool(), pool(v5e)]}))


def test_reduction_server_pool() -> None:
    server = pool({"machineType": "n1-highcpu-16"}, replicas=2, image=REDUCTION_SERVER)
    validate_custom_job_spec({"workerPoolSpecs": [pool(GPU), pool(GPU, 2), server]})
    error = rejected({"workerPoolSpecs": [pool(GPU), pool(CPU, 2), server]})
    assert error.field == "workerPoolSpecs[1]" and "NVIDIA_TESLA_T4" in str(error)
    error = rejected({"workerPoolSpecs": [pool(GPU), {}, server, pool()]})
    assert error.field == "workerPoolSpecs[1]"
    gpu_server = pool(GPU, image=REDUCTION_SERVER)
    error = rejected({"workerPoolSpecs": [pool(GPU), pool(GPU, 2), gpu_server]})
    assert error.field == "workerPoolSpecs[2].machineSpec.acceleratorType"
    error = rejected({"workerPoolSpecs": [pool(GPU), server]})
    assert error.field == "workerPoolSpecs[1].containerSpec.imageUri"
    assert "only in pool 2" in str(error)


def test_every_pool_has_one_disk_spec_for_all_replicas() -> None:
    spec = validate_custom_job_spec(
        {"workerPoolSpecs": [pool(), pool(replicas=3) | {"diskSpec": {"bootDiskSizeGb": 500}}]}
    ).with_defaults()
    disks = [p.disk_spec.to_api() for p in spec.worker_pool_specs if p.disk_spec]
    assert disks == [
        {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100},
        {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 500},
    ]


@pytest.mark.parametrize(
    ("scheduling", "field", "words"),
    [
        ({"timeout": "0s"}, "scheduling.timeout", "positive"),
        ({"timeout": "1h"}, "scheduling.timeout", "3600s"),
        ({"strategy": "CHEAP"}, "scheduling.strategy", "FLEX_START"),
        ({"strategy": 42}, "scheduling.strategy", "SPOT"),
    ],
)
def test_scheduling_rules(scheduling: dict[str, Any], field: str, words: str) -> None:
    error = rejected({"workerPoolSpecs": [pool()], "scheduling": scheduling})
    assert error.field == field and words in str(error)


def test_scheduling_accepts_enum_numbers_and_long_timeouts() -> None:
    spec = validate_custom_job_spec(
        {"workerPoolSpecs": [pool()], "scheduling": {"strategy": 4, "timeout": "1209600s"}}
    )
    assert spec.scheduling is not None and spec.scheduling.strategy == "SPOT"


def test_output_directory_and_service_account() -> None:
    error = rejected(
        {"workerPoolSpecs": [pool()], "baseOutputDirectory": {"outputUriPrefix": "/tmp/x"}}
    )
    assert error.field == "baseOutputDirectory.outputUriPrefix"
    error = rejected({"workerPoolSpecs": [pool()], "serviceAccount": "not-an-email"})
    assert error.field == "serviceAccount"


def test_nested_path_prefix_for_tuning_trials() -> None:
    with pytest.raises(SpecError) as caught:
        validate_custom_job_spec({"workerPoolSpecs": [pool(replicas=2)]}, path="trialJobSpec")
    assert caught.value.field == "trialJobSpec.workerPoolSpecs[0].replicaCount"
