"""The GPU inventory and allocator, fed by recorded `nvidia-smi` answers of real machines.

A fake is used here, and only here: this machine has no NVIDIA GPU, so `nvidia-smi` on PATH is a
small shell script that prints a recording from testdata/nvidia-smi/ (and fails on any other
query, so the query itself is checked). It is still a real process that the inventory runs.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1

from vertexkit.local import LocalCloud
from vertexkit.local.vertex.training import gpus
from vertexkit.specs import SpecError

TESTDATA = Path(__file__).parent / "testdata"
RECORDINGS = TESTDATA / "nvidia-smi"
JobState = aiplatform_v1.JobState


def fake_nvidia_smi(bin_dir: Path, recording: str, exit_code: int = 0) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "nvidia-smi"
    script.write_text(
        "#!/bin/sh\n"
        f'[ "$*" = "{" ".join(gpus.QUERY)}" ] || {{ echo "unexpected query: $*" >&2; exit 2; }}\n'
        f'cat "{RECORDINGS / recording}"\n'
        f"exit {exit_code}\n"
    )
    script.chmod(0o755)
    return bin_dir


def inventory(recording: str) -> list[gpus.Gpu]:
    return gpus.parse_inventory((RECORDINGS / recording).read_text())


def pool(accelerator: str = "", count: int = 0, replicas: int = 1, **extra: Any) -> dict:
    machine = {"machineType": extra.pop("machine", "n1-standard-8")}
    if accelerator:
        machine.update(acceleratorType=accelerator, acceleratorCount=count)
    return {"machineSpec": machine, "replicaCount": str(replicas), **extra}


# -- inventory ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("recording", "count", "name", "memory"),
    [
        ("h200x1.txt", 1, "NVIDIA H200", 143771),
        ("a100x8.txt", 8, "NVIDIA A100-SXM4-40GB", 40960),
        ("t4x4.txt", 4, "Tesla T4", 15360),
    ],
    ids=["1xH200", "8xA100", "4xT4"],
)
def test_discover_reads_what_nvidia_smi_prints(
    recording: str, count: int, name: str, memory: int, tmp_path: Path
) -> None:
    bin_dir = fake_nvidia_smi(tmp_path / "bin", recording)
    found = gpus.discover({"PATH": str(bin_dir)})
    assert [gpu.index for gpu in found] == list(range(count))
    assert {gpu.name for gpu in found} == {name}
    assert {gpu.memory_mib for gpu in found} == {memory}
    assert all(gpu.uuid.startswith("GPU-") for gpu in found)
    assert len({gpu.uuid for gpu in found}) == count


def test_no_nvidia_smi_means_no_gpu(tmp_path: Path) -> None:
    assert gpus.discover({"PATH": str(tmp_path)}) == []


def test_a_driver_that_does_not_answer_means_no_gpu(tmp_path: Path) -> None:
    bin_dir = fake_nvidia_smi(tmp_path / "bin", "driver-down.txt", exit_code=9)
    assert gpus.discover({"PATH": str(bin_dir)}) == []


@pytest.mark.parametrize(
    ("accelerator", "gpu_name", "same"),
    [
        ("NVIDIA_TESLA_T4", "Tesla T4", True),
        ("NVIDIA_TESLA_A100", "NVIDIA A100-SXM4-40GB", True),
        ("NVIDIA_A100_80GB", "NVIDIA A100-SXM4-80GB", True),
        ("NVIDIA_H200_141GB", "NVIDIA H200", True),
        ("NVIDIA_H100_MEGA_80GB", "NVIDIA H100 80GB HBM3", True),
        ("NVIDIA_TESLA_P4", "Tesla P40", False),
        ("NVIDIA_TESLA_A100", "NVIDIA H200", False),
    ],
    ids=["t4", "a100", "a100-80gb", "h200", "h100-mega", "p4-is-not-p40", "a100-on-h200"],
)
def test_accelerator_type_matches_the_gpu_name(accelerator: str, gpu_name: str, same: bool) -> None:
    assert gpus.matches(accelerator, gpus.Gpu(0, "GPU-x", gpu_name, 1)) is same


# -- refusal at create ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("recording", "pools", "field", "names"),
    [
        ("h200x1.txt", [pool("NVIDIA_TESLA_T4", 2)], "workerPoolSpecs[0]", ["2 GPUs", "has 1"]),
        (
            "a100x8.txt",
            [pool("NVIDIA_TESLA_A100", 8, machine="a2-highgpu-8g"),
             pool("NVIDIA_TESLA_A100", 8, replicas=2, machine="a2-highgpu-8g")],
            "workerPoolSpecs[0]",
            ["24 GPUs", "2 replica(s) x acceleratorCount 8", "has 8"],
        ),
        ("t4x4.txt", [pool(), pool("NVIDIA_TESLA_T4", 4, replicas=2)], "workerPoolSpecs[1]",
         ["8 GPUs", "has 4 (Tesla T4)"]),
    ],
    ids=["2-on-1xH200", "3x8-on-8xA100", "2x4-on-4xT4"],
)  # fmt: skip
def test_more_gpus_than_the_machine_has_is_refused(
    recording: str, pools: list[dict], field: str, names: list[str]
) -> None:
    allocator = gpus.GpuAllocator(inventory(recording))
    with pytest.raises(SpecError) as refused:
        allocator.check_fits({"workerPoolSpecs": pools}, "jobSpec")
    assert refused.value.field == f"jobSpec.{field}.machineSpec.acceleratorCount"
    for name in names:
        assert name in str(refused.value)


@pytest.mark.parametrize(
    ("recording", "pools"),
    [
        ("", [pool("NVIDIA_TESLA_T4", 4, replicas=4)]),
        ("t4x4.txt", [pool("NVIDIA_TESLA_T4", 2, replicas=2)]),
        ("h200x1.txt", [pool("TPU_V2", 8, machine="cloud-tpu")]),
    ],
    ids=["no-gpu-machine-runs-on-cpu", "exactly-all", "tpus-are-not-gpus"],
)
def test_jobs_that_can_run_here_are_accepted(recording: str, pools: list[dict]) -> None:
    allocator = gpus.GpuAllocator(inventory(recording) if recording else [])
    allocator.check_fits({"workerPoolSpecs": pools}, "jobSpec")


# -- allocation -----------------------------------------------------------------------------
def test_each_replica_gets_exactly_its_own_gpus() -> None:
    allocator = gpus.GpuAllocator(inventory("a100x8.txt"))
    spec = {"workerPoolSpecs": [pool("NVIDIA_TESLA_A100", 4, replicas=1), pool(),
                                pool("NVIDIA_TESLA_A100", 2, replicas=2)]}  # fmt: skip
    lines: list[str] = []
    lease = allocator.acquire("job-1", spec, threading.Event(), lines.append)
    assert lease is not None
    assert lease.env(0, 0)["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    assert lease.env(2, 0)["CUDA_VISIBLE_DEVICES"] == "4,5"
    assert lease.env(2, 1)["CUDA_VISIBLE_DEVICES"] == "6,7"
    assert lease.env(2, 1)["NVIDIA_VISIBLE_DEVICES"] == ",".join(
        gpu.uuid for gpu in inventory("a100x8.txt")[6:]
    )
    assert lease.env(2, 1)["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    # a replica that asked for no GPU sees none, as on Vertex
    assert lease.env(1, 0)["CUDA_VISIBLE_DEVICES"] == ""
    assert lease.env(1, 0)["NVIDIA_VISIBLE_DEVICES"] == "void"
    assert lines[0].startswith("workerpool0-0: GPUs 0 (NVIDIA A100-SXM4-40GB, GPU-")
    assert [line.split(":")[0] for line in lines] == [
        "workerpool0-0", "workerpool2-0", "workerpool2-1",
    ]  # fmt: skip


def test_no_gpu_machine_leaves_the_environment_alone() -> None:
    lease = gpus.GpuAllocator([]).acquire(
        "job", {"workerPoolSpecs": [pool("NVIDIA_TESLA_T4", 1)]}, threading.Event(), print
    )
    assert lease is not None and lease.env(0, 0) == {}


def acquire_in_thread(
    allocator: gpus.GpuAllocator, owner: str, spec: dict, stop: threading.Event
) -> tuple[threading.Thread, threading.Event, list[gpus.Lease | None]]:
    """Starts `acquire` in a thread; the event is set once it says it waits."""
    waiting, got = threading.Event(), []

    def log(line: str) -> None:
        if "waiting" in line:
            waiting.set()

    thread = threading.Thread(target=lambda: got.append(allocator.acquire(owner, spec, stop, log)))
    thread.start()
    return thread, waiting, got


def test_a_job_waits_until_the_gpus_it_needs_are_released() -> None:
    allocator = gpus.GpuAllocator(inventory("t4x4.txt"))
    three = {"workerPoolSpecs": [pool("NVIDIA_TESLA_T4", 1, replicas=3)]}
    two = {"workerPoolSpecs": [pool("NVIDIA_TESLA_T4", 2)]}
    first = allocator.acquire("first", three, threading.Event(), print)
    assert first is not None
    thread, waiting, got = acquire_in_thread(allocator, "second", two, threading.Event())
    assert waiting.wait(10), "the second job should say it waits for GPUs"
    assert got == [] and len(allocator.free()) == 1  # one T4 free: not enough, nothing taken
    allocator.release("first")
    thread.join(10)
    assert got and got[0] is not None
    assert got[0].env(0, 0)["CUDA_VISIBLE_DEVICES"] == "0,1"


def test_a_waiting_job_gives_up_when_stopped() -> None:
    allocator = gpus.GpuAllocator(inventory("h200x1.txt"))
    spec = {"workerPoolSpecs": [pool("NVIDIA_H200_141GB", 1)]}
    assert allocator.acquire("first", spec, threading.Event(), print) is not None
    stop = threading.Event()
    thread, waiting, got = acquire_in_thread(allocator, "second", spec, stop)
    assert waiting.wait(10)
    stop.set()
    thread.join(10)
    assert got == [None]
    allocator.release("first")
    assert len(allocator.free()) == 1  # the one that gave up holds nothing


# -- through the local cloud, with the real JobServiceClient -------------------------------------
@pytest.fixture(scope="module")
def h200_cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCloud]:
    """A local cloud on a machine with one H200 (as the recording says)."""
    bin_dir = fake_nvidia_smi(tmp_path_factory.mktemp("bin"), "h200x1.txt")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        cloud = LocalCloud(home=tmp_path_factory.mktemp("gpu-home")).start()
    try:
        yield cloud
    finally:
        cloud.stop()


def gpu_job(out: Path, release: Path | None, machine: str, accelerator: str, count: int = 1):
    args = [str(out)] + ([str(release)] if release else [])
    return {
        "display_name": "gpu-job",
        "job_spec": {"worker_pool_specs": [{
            "machine_spec": {"machine_type": machine, "accelerator_type": accelerator,
                             "accelerator_count": count},
            "replica_count": 1,
            "container_spec": {"image_uri": "us-docker.pkg.dev/p/r/app:latest",
                               "command": ["python", str(TESTDATA / "gpu_env.py"), *args]},
        }]},
    }  # fmt: skip


def wait_for(client: aiplatform_v1.JobServiceClient, name: str, states: set, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get_custom_job(name=name)
        if job.state in states:
            return job
        time.sleep(0.02)
    raise AssertionError(f"{name} never reached {states}; it is {job.state.name}")


def job_log(cloud: LocalCloud, name: str) -> str:
    path = cloud.home / "vertex" / "training" / name.rsplit("/", 1)[1] / "job.log"
    return path.read_text() if path.exists() else ""  # the job thread may not have written yet


def test_second_gpu_job_waits_pending_until_the_first_finishes(
    h200_cloud: LocalCloud, tmp_path: Path
) -> None:
    ctx = h200_cloud.context()
    client = ctx.job_client()
    release = tmp_path / "release"
    first = client.create_custom_job(
        parent=ctx.parent,
        custom_job=gpu_job(tmp_path / "first.json", release, "a2-highgpu-1g", "NVIDIA_TESLA_A100"),
    )
    wait_for(client, first.name, {JobState.JOB_STATE_RUNNING})
    second = client.create_custom_job(
        parent=ctx.parent,
        custom_job=gpu_job(tmp_path / "second.json", None, "n1-standard-8", "NVIDIA_TESLA_T4"),
    )
    wait_for(client, second.name, {JobState.JOB_STATE_PENDING})
    while "waiting in JOB_STATE_PENDING" not in job_log(h200_cloud, second.name):
        time.sleep(0.02)
    assert client.get_custom_job(name=second.name).state == JobState.JOB_STATE_PENDING
    assert not (tmp_path / "second.json").exists()  # its replica has not started

    release.touch()
    done = {JobState.JOB_STATE_SUCCEEDED, JobState.JOB_STATE_FAILED}
    assert wait_for(client, first.name, done).state == JobState.JOB_STATE_SUCCEEDED
    assert wait_for(client, second.name, done).state == JobState.JOB_STATE_SUCCEEDED
    h200 = inventory("h200x1.txt")[0]
    for out in ("first.json", "second.json"):
        seen = json.loads((tmp_path / out).read_text())
        assert seen["CUDA_VISIBLE_DEVICES"] == "0" and seen["NVIDIA_VISIBLE_DEVICES"] == h200.uuid
    first_log = job_log(h200_cloud, first.name)
    assert f"workerpool0-0: GPUs 0 (NVIDIA H200, {h200.uuid})" in first_log
    # the type asked for is not the one here: one line names both, and the job runs
    assert "NVIDIA_TESLA_A100 requested; this machine has NVIDIA H200" in first_log
    assert "running on CPU" not in first_log


def test_job_wanting_more_gpus_than_the_machine_has_is_refused_at_create(
    h200_cloud: LocalCloud, tmp_path: Path
) -> None:
    ctx = h200_cloud.context()
    client = ctx.job_client()
    before = list(client.list_custom_jobs(parent=ctx.parent))
    job = gpu_job(tmp_path / "x.json", None, "n1-standard-8", "NVIDIA_TESLA_T4", count=2)
    with pytest.raises(exceptions.BadRequest) as refused:
        client.create_custom_job(parent=ctx.parent, custom_job=job)
    message = refused.value.message
    assert "acceleratorCount" in message and "this machine has 1 (NVIDIA H200)" in message
    assert list(client.list_custom_jobs(parent=ctx.parent)) == before
