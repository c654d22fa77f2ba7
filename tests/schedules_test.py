"""Schedules on the local Vertex AI through the real SDK (`aiplatform.PipelineJobSchedule`).

Time is driven through the scheduler's injectable clock so a `*/5 * * * *` schedule fires in
milliseconds; the runs it starts are real pipeline jobs run by kfp.local. One test lets the
scheduler thread fire on its own at a real minute boundary of `* * * * *`.
"""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import json
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, aiplatform_v1
from kfp import compiler, dsl

from vertexkit.local import LocalCloud
from vertexkit.local.vertex.pipelines.routes import PipelinesArea


@dsl.component(install_kfp_package=False)
def double(x: int) -> int:
    return 2 * x


@dsl.component(install_kfp_package=False)
def report(value: int) -> str:
    return f"value={value}"


@dsl.pipeline(name="scheduled-two-step")
def scheduled_pipeline(x: int = 3) -> str:
    return report(value=double(x=x).output).output


class Clock:
    """The scheduler's clock, moved by the test."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, minutes: int) -> None:
        self.now += timedelta(minutes=minutes)


def schedule_client(cloud: LocalCloud) -> aiplatform_v1.ScheduleServiceClient:
    return aiplatform_v1.ScheduleServiceClient(
        credentials=AnonymousCredentials(),
        transport="rest",
        client_options={"api_endpoint": cloud.url},
    )


def area_of(cloud: LocalCloud) -> PipelinesArea:
    return next(area for area in cloud.vertex.areas if isinstance(area, PipelinesArea))


def start_cloud(home: Path, clock: Clock) -> LocalCloud:
    cloud = LocalCloud(home=home).start()
    scheduler = area_of(cloud).scheduler
    scheduler.close()  # the test ticks by hand: what fires and when is then deterministic
    scheduler.clock = clock
    cloud.context().init_aiplatform()
    return cloud


@pytest.fixture
def template(tmp_path: Path) -> str:
    path = tmp_path / "scheduled.yaml"
    compiler.Compiler().compile(scheduled_pipeline, str(path))
    return str(path)


@pytest.fixture
def clock() -> Clock:
    # A day ahead of real time, on a minute boundary + 30 s.
    start = datetime.now(timezone.utc).replace(second=30, microsecond=0) + timedelta(days=1)
    return Clock(start)


@pytest.fixture
def cloud(tmp_path: Path, clock: Clock) -> Iterator[LocalCloud]:
    cloud = start_cloud(tmp_path / "home", clock)
    yield cloud
    cloud.stop()


def make_schedule(template: str, cron: str, **kwargs: object) -> aiplatform.PipelineJobSchedule:
    job = aiplatform.PipelineJob(
        display_name="scheduled",
        template_path=template,
        pipeline_root=f"gs://schedules-{uuid.uuid4().hex[:10]}/root",
        parameter_values={"x": 21},
    )
    schedule = aiplatform.PipelineJobSchedule(pipeline_job=job, display_name="every-five")
    schedule.create(cron=cron, **kwargs)
    return schedule


def wait_for_runs(schedule: aiplatform.PipelineJobSchedule, count: int) -> list:
    """Waits until the schedule has `count` runs and all of them have ended."""
    deadline = time.monotonic() + 60
    while True:
        jobs = schedule.list_jobs()
        states = [job.state.name for job in jobs]
        ended = all(s in ("PIPELINE_STATE_SUCCEEDED", "PIPELINE_STATE_FAILED") for s in states)
        if len(jobs) >= count and ended:
            return jobs
        assert time.monotonic() < deadline, f"runs: {states}"
        time.sleep(0.2)


def test_fires_twice_and_starts_real_pipeline_jobs(
    cloud: LocalCloud, clock: Clock, template: str
) -> None:
    schedule = make_schedule(template, "*/5 * * * *", max_concurrent_run_count=2)
    scheduler = area_of(cloud).scheduler
    assert scheduler.tick() == []  # nothing due yet
    clock.advance(5)
    assert len(scheduler.tick()) == 1
    assert scheduler.tick() == []  # the same scheduled time never fires twice
    clock.advance(5)
    assert len(scheduler.tick()) == 1
    jobs = wait_for_runs(schedule, 2)

    assert [job.state.name for job in jobs] == ["PIPELINE_STATE_SUCCEEDED"] * 2
    for job in jobs:
        assert {t.task_name for t in job.task_details} >= {"double", "report"}
    schedule = aiplatform.PipelineJobSchedule.get(schedule.resource_name)
    assert schedule.state.name == "ACTIVE"
    assert schedule.gca_resource.started_run_count == 2
    last = schedule.gca_resource.last_scheduled_run_response
    assert last.run_response in {job.resource_name for job in jobs}
    expected_next = (clock.now + timedelta(minutes=5)).replace(second=0)
    expected_next -= timedelta(minutes=expected_next.minute % 5)
    assert schedule.gca_resource.next_run_time.timestamp() == expected_next.timestamp()


def test_pause_stops_firing_and_resume_with_catch_up_backfills(
    cloud: LocalCloud, clock: Clock, template: str
) -> None:
    schedule = make_schedule(template, "*/5 * * * *", max_concurrent_run_count=2)
    scheduler = area_of(cloud).scheduler
    schedule.pause()
    clock.advance(20)  # four scheduled times pass while paused
    assert scheduler.tick() == []
    assert aiplatform.PipelineJobSchedule.get(schedule.resource_name).state.name == "PAUSED"

    # PipelineJobSchedule.resume(catch_up=True) drops catch_up (the SDK sends only the name),
    # so catch-up goes through the GAPIC client, as it would against Vertex.
    schedule_client(cloud).resume_schedule(name=schedule.resource_name, catch_up=True)
    started = scheduler.tick()
    assert len(started) == 2  # the backfill waits for slots under max_concurrent_run_count
    wait_for_runs(schedule, 2)
    assert len(scheduler.tick()) == 2
    jobs = wait_for_runs(schedule, 4)
    assert len(jobs) == 4 and scheduler.tick() == []
    assert aiplatform.PipelineJobSchedule.get(schedule.resource_name).gca_resource.catch_up

    schedule.pause()
    clock.advance(20)
    schedule.resume(catch_up=False)  # without catch-up the missed times are skipped
    assert scheduler.tick() == []
    clock.advance(5)
    assert len(scheduler.tick()) == 1


def test_survives_a_restart_without_double_runs(
    tmp_path: Path, clock: Clock, template: str
) -> None:
    home = tmp_path / "home"
    first = start_cloud(home, clock)
    try:
        schedule = make_schedule(template, "*/5 * * * *")
        clock.advance(5)
        assert len(area_of(first).scheduler.tick()) == 1
        wait_for_runs(schedule, 1)
    finally:
        first.stop()
    second = start_cloud(home, clock)
    try:
        scheduler = area_of(second).scheduler
        assert scheduler.tick() == []  # same time again after the restart: not fired twice
        clock.advance(5)
        assert len(scheduler.tick()) == 1
        jobs = wait_for_runs(schedule, 2)
        assert len({job.resource_name for job in jobs}) == 2
        assert aiplatform.PipelineJobSchedule.get(schedule.resource_name).state.name == "ACTIVE"
    finally:
        second.stop()


def test_max_run_count_completes_the_schedule(
    cloud: LocalCloud, clock: Clock, template: str
) -> None:
    schedule = make_schedule(template, "*/5 * * * *", max_run_count=2, max_concurrent_run_count=5)
    scheduler = area_of(cloud).scheduler
    for _ in range(3):
        clock.advance(5)
        scheduler.tick()
    wait_for_runs(schedule, 2)
    schedule = aiplatform.PipelineJobSchedule.get(schedule.resource_name)
    assert schedule.state.name == "COMPLETED"
    assert schedule.gca_resource.started_run_count == 2
    assert len(schedule.list_jobs()) == 2
    with pytest.raises(exceptions.BadRequest, match="only an ACTIVE schedule can pause"):
        schedule.pause()


def test_refusals_create_nothing(cloud: LocalCloud, clock: Clock, template: str) -> None:
    start = clock.now + timedelta(days=2)
    refusals = [
        ({"cron": "61 * * * *"}, "schedule.cron"),
        ({"cron": "0 * * * * *"}, "needs 5 fields"),
        ({"cron": "TZ=Mars/Olympus 0 * * * *"}, "unknown time zone"),
        (
            {"cron": "0 * * * *", "start_time": _iso(start), "end_time": _iso(start)},
            "endTime .* must be after schedule.startTime",
        ),
        ({"cron": "0 * * * *", "max_run_count": -1}, "maxRunCount must be a positive"),
    ]
    for kwargs, message in refusals:
        with pytest.raises(exceptions.BadRequest, match=message):
            make_schedule(template, **kwargs)
    assert aiplatform.PipelineJobSchedule.list() == []


def test_one_real_firing_by_the_scheduler_thread(tmp_path: Path, template: str) -> None:
    # Real time, shifted so the next minute boundary is about 1.5 s away: the scheduler thread
    # fires `* * * * *` on its own, without a tick from the test.
    now = datetime.now(timezone.utc)
    offset = now.replace(second=58, microsecond=500000) - now
    cloud = LocalCloud(home=tmp_path / "home").start()
    try:
        area_of(cloud).scheduler.clock = lambda: datetime.now(timezone.utc) + offset
        cloud.context().init_aiplatform()
        schedule = make_schedule(template, "* * * * *")
        jobs = wait_for_runs(schedule, 1)
        assert jobs[0].state.name == "PIPELINE_STATE_SUCCEEDED"
    finally:
        cloud.stop()


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_cli_schedule_and_runs_on_the_running_local_cloud(local_cloud: LocalCloud) -> None:
    from typer.testing import CliRunner

    from vertexkit.cli import app

    cli = CliRunner()
    ref = "schedules_test:scheduled_pipeline"
    refused = [
        (["schedule", "create", ref, "--cron", "0 0 * * * *"], "needs 5 fields"),
        (["schedule", "create", "no_such_module:p", "--cron", "0 * * * *"], "cannot import"),
        (["schedule", "create", ref, "--cron", "0 * * * *", "-p", "nope=1"], "unknown parameter"),
        (
            ["schedule", "create", ref, "--cron", "0 * * * *", "--start-time",
             "2030-02-01T00:00:00Z", "--end-time", "2030-01-01T00:00:00Z"],
            "must be after",
        ),
    ]  # fmt: skip
    local_cloud.context().init_aiplatform()
    # The session cloud is shared: other tests' schedules may exist; a refusal adds none.
    before = {schedule.resource_name for schedule in aiplatform.PipelineJobSchedule.list()}
    for args, message in refused:
        result = cli.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert message in result.output
    after = {schedule.resource_name for schedule in aiplatform.PipelineJobSchedule.list()}
    assert after == before  # nothing was created by a refusal

    result = cli.invoke(app, ["schedule", "create", ref, "--cron", "0 3 * * *", "-p", "x=5"])
    assert result.exit_code == 0, result.output
    schedule_id = result.output.split("/schedules/")[1].split()[0]
    listed = cli.invoke(app, ["schedule", "list"])
    assert schedule_id in listed.output and "ACTIVE" in listed.output
    assert cli.invoke(app, ["schedule", "pause", schedule_id]).exit_code == 0
    assert "PAUSED" in cli.invoke(app, ["schedule", "list"]).output
    assert cli.invoke(app, ["schedule", "resume", schedule_id, "--catch-up"]).exit_code == 0
    assert cli.invoke(app, ["schedule", "delete", schedule_id]).exit_code == 0
    assert schedule_id not in cli.invoke(app, ["schedule", "list"]).output
    assert cli.invoke(app, ["runs", "show", "no-such-run"]).exit_code == 2


def test_end_time_stops_the_schedule_and_completes_it(
    cloud: LocalCloud, clock: Clock, template: str
) -> None:
    # Schedule.endTime (REST reference): "Timestamp after which no new runs can be scheduled.
    # If specified, the schedule will be completed when either end_time is reached or when
    # scheduled_run_count >= max_run_count."
    end = clock.now + timedelta(minutes=12)
    schedule = make_schedule(
        template, "*/5 * * * *", end_time=_iso(end), max_concurrent_run_count=5
    )
    scheduler = area_of(cloud).scheduler
    fired = []
    for _ in range(4):
        clock.advance(5)
        fired += scheduler.tick()
    assert len(fired) == 2  # the due times before endTime, none after
    wait_for_runs(schedule, 2)
    schedule = aiplatform.PipelineJobSchedule.get(schedule.resource_name)
    assert schedule.state.name == "COMPLETED"
    assert schedule.gca_resource.started_run_count == 2


def test_start_time_holds_off_every_run(cloud: LocalCloud, clock: Clock, template: str) -> None:
    # Schedule.startTime (REST reference): "Timestamp after which the first run can be
    # scheduled. Default to Schedule create time if not specified."
    start = clock.now + timedelta(days=1)
    schedule = make_schedule(template, "*/5 * * * *", start_time=_iso(start))
    scheduler = area_of(cloud).scheduler
    for _ in range(3):
        clock.advance(5)
        assert scheduler.tick() == []
    schedule = aiplatform.PipelineJobSchedule.get(schedule.resource_name)
    assert schedule.gca_resource.next_run_time.timestamp() >= start.timestamp()
    assert schedule.gca_resource.started_run_count == 0


def gapic_schedule(template: str, **fields: object) -> aiplatform_v1.Schedule:
    job = {
        "displayName": "scheduled",
        "pipelineSpec": yaml.safe_load(Path(template).read_text()),
        "runtimeConfig": {"gcsOutputDirectory": f"gs://schedules-{uuid.uuid4().hex[:10]}/root"},
    }
    body = {"displayName": "raw", "cron": "*/5 * * * *", "maxConcurrentRunCount": "5",
            "createPipelineJobRequest": {"pipelineJob": job}, **fields}  # fmt: skip
    return aiplatform_v1.Schedule.from_json(json.dumps(body))


def test_max_concurrent_active_run_count_skips_a_time_that_finds_its_runs_active(
    cloud: LocalCloud, clock: Clock, template: str
) -> None:
    # Schedule.maxConcurrentActiveRunCount (REST reference): "the maximum number of active runs
    # that can be executed concurrently for this Schedule. This limits the number of runs that
    # can be in a non-terminal state at the same time." A name in the body is the server's.
    client = schedule_client(cloud)
    parent = cloud.context().parent
    asked = f"{parent}/schedules/mine"
    schedule = gapic_schedule(template, name=asked, maxConcurrentActiveRunCount="1")
    schedule.create_pipeline_job_request.pipeline_job_id = "nightly"  # each run's ID prefix
    created = client.create_schedule(parent=parent, schedule=schedule)
    assert created.name != asked and "/schedules/" in created.name
    scheduler = area_of(cloud).scheduler
    clock.advance(5)
    assert len(scheduler.tick()) == 1
    clock.advance(5)
    assert scheduler.tick() == []  # its first run is still active
    assert client.get_schedule(name=created.name).started_run_count == 1
    runs = wait_for_runs(aiplatform.PipelineJobSchedule.get(created.name), 1)
    assert runs[0].resource_name.rsplit("/", 1)[1].startswith("nightly-")


def test_a_notebook_schedule_is_refused(cloud: LocalCloud, template: str) -> None:
    # Schedule.createNotebookExecutionJobRequest (REST reference): the local cloud runs no
    # Colab Enterprise notebooks, so it is a 400 naming the field, and nothing is stored.
    client = schedule_client(cloud)
    parent = cloud.context().parent
    body = {"displayName": "notebook", "cron": "0 * * * *", "maxConcurrentRunCount": "1",
            "createNotebookExecutionJobRequest": {"parent": parent, "notebookExecutionJob": {
                "displayName": "nb", "gcsNotebookSource": {"uri": "gs://b/n.ipynb"}}}}  # fmt: skip
    with pytest.raises(exceptions.BadRequest, match="createNotebookExecutionJobRequest"):
        client.create_schedule(
            parent=parent, schedule=aiplatform_v1.Schedule.from_json(json.dumps(body))
        )
    assert list(client.list_schedules(parent=parent)) == []
