"""A local cloud started with a standby driver runs its next pipeline job in it (real processes,
the real SDK submitting a real compiled pipeline)."""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import os
import signal
import threading
import time
import uuid
from pathlib import Path

import pytest
from google.cloud import aiplatform
from google.cloud.aiplatform import pipeline_jobs
from kfp import compiler, dsl

from vertexkit.local import LocalCloud
from vertexkit.local.processes import group_alive

SERVICE_ACCOUNT = "pipelines@local-project.iam.gserviceaccount.com"  # skips a project lookup


@dsl.component(install_kfp_package=False)
def double(a: int) -> int:
    return 2 * a


@dsl.pipeline(name="standby-one-step")
def one_step(a: int = 21) -> int:
    return double(a=a).output


@pytest.fixture
def standby_cloud(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The SDK polls every 5 s doubling; the local cloud answers in milliseconds.
    monkeypatch.setattr(pipeline_jobs, "_JOB_WAIT_TIME", 0.2)
    monkeypatch.setattr(pipeline_jobs, "_WAIT_TIME_MULTIPLIER", 1)
    cloud = LocalCloud(home=tmp_path / "home", standby_driver=True).start()
    for name, value in cloud.env().items():
        monkeypatch.setenv(name, value)
    yield cloud
    cloud.stop()


def _run_job(cloud: LocalCloud, tmp_path: Path) -> aiplatform.PipelineJob:
    template = tmp_path / "one_step.yaml"
    compiler.Compiler().compile(one_step, str(template))
    cloud.context().init_aiplatform(service_account=SERVICE_ACCOUNT)
    job = aiplatform.PipelineJob(
        display_name="standby",
        template_path=str(template),
        pipeline_root=f"gs://standby-{uuid.uuid4().hex[:12]}/root",
        job_id=f"standby-{uuid.uuid4().hex[:12]}",
        enable_caching=False,
    )
    job.submit()
    job.wait()
    return job


def _driver_log(cloud: LocalCloud, job: aiplatform.PipelineJob) -> str:
    job_dir = cloud.home / "vertex" / "pipelineJobs" / job.resource_name.rsplit("/", 1)[-1]
    return (job_dir / "driver.log").read_text()


def test_the_next_job_runs_in_the_standby_driver(standby_cloud, tmp_path) -> None:
    standby = standby_cloud.vertex.backend.driver_standby
    pid = standby.waiting()
    assert pid is not None
    job = _run_job(standby_cloud, tmp_path)
    assert job.state.name == "PIPELINE_STATE_SUCCEEDED"
    assert f"standby driver {pid}: running" in _driver_log(standby_cloud, job)
    assert standby.waiting() is None  # taken; a later job starts a driver of its own
    second = _run_job(standby_cloud, tmp_path)
    assert second.state.name == "PIPELINE_STATE_SUCCEEDED"
    assert "standby driver" not in _driver_log(standby_cloud, second)


def test_a_dead_standby_is_replaced_by_a_driver_of_its_own(standby_cloud, tmp_path) -> None:
    pid = standby_cloud.vertex.backend.driver_standby.waiting()
    os.killpg(pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while group_alive(pid):  # gone, not dying: a dying one may still take the job's folder
        assert time.monotonic() < deadline, "the standby driver outlived SIGKILL"
        time.sleep(0.01)
    job = _run_job(standby_cloud, tmp_path)
    assert job.state.name == "PIPELINE_STATE_SUCCEEDED"
    assert "standby driver" not in _driver_log(standby_cloud, job)


def test_stopping_the_cloud_ends_an_unused_standby(tmp_path) -> None:
    cloud = LocalCloud(home=tmp_path / "home", standby_driver=True).start()
    pid = cloud.vertex.backend.driver_standby.waiting()
    cloud.stop()
    assert not group_alive(pid)  # the whole group has ended: driver and task workers


def test_a_cloud_without_a_standby_keeps_none(local_cloud) -> None:
    assert local_cloud.vertex.backend.driver_standby.waiting() is None


def test_ten_runs_in_a_row_each_start_and_end(standby_cloud, tmp_path) -> None:
    """Issue 24's hang (the second of two back-to-back `run()` calls PENDING for 300 s, no
    driver): ten `PipelineJob.run()` in a row, the first in the standby driver, each must end
    SUCCEEDED. Each gets its own job ID: the SDK's default is the pipeline's name and the time
    to the second, so two runs started within one second collide (409, as on Vertex)."""
    template = tmp_path / "one_step.yaml"
    compiler.Compiler().compile(one_step, str(template))
    standby_cloud.context().init_aiplatform(service_account=SERVICE_ACCOUNT)
    for index in range(10):
        job = aiplatform.PipelineJob(
            display_name="in-a-row",
            template_path=str(template),
            pipeline_root=f"gs://standby-{uuid.uuid4().hex[:12]}/root",
            job_id=f"in-a-row-{index}-{uuid.uuid4().hex[:8]}",
            enable_caching=index % 2 == 1,  # every other run served from the cache: fast
        )
        running = threading.Thread(target=job.run, daemon=True)  # a hang fails, not hangs
        running.start()
        running.join(120)
        state = aiplatform.PipelineJob.get(job.resource_name).state.name
        assert state == "PIPELINE_STATE_SUCCEEDED", f"run {index}: {state}"
