"""`vertexkit schedule create|list|pause|resume|delete` and `vertexkit runs list|show`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from vertexkit.cli.cloud import cloud_for_command, rest_for_command
from vertexkit.cli.errors import UserError, client_error_message, fail, plain_console
from vertexkit.cli.jobs import duration_text, seconds_between
from vertexkit.cli.names import find_by_name
from vertexkit.cli.options import (
    HomeOption,
    ProjectOption,
    RegionOption,
    check_display_names,
    resource_id_or_name,
    spec_checked,
)
from vertexkit.context import VERTEX_ENV
from vertexkit.local_up import running_local_up
from vertexkit.specs.naming import validate_region
from vertexkit.vertex_rest import ServiceRefused, rfc3339_time

if TYPE_CHECKING:
    from vertexkit import scheduling

schedule_app = typer.Typer(no_args_is_help=True, help="Recurring pipeline runs.")
runs_app = typer.Typer(no_args_is_help=True, help="Pipeline runs (pipeline jobs).")
ScheduleArgument = Annotated[
    str,
    typer.Argument(
        help="Schedule ID, resource name or display name (where unique)",
        callback=resource_id_or_name("schedules"),
    ),
]
RunArgument = Annotated[
    str,
    typer.Argument(
        help="Run (pipeline job) ID or resource name", callback=resource_id_or_name("pipelineJobs")
    ),
]
console = plain_console()
err_console = plain_console(stderr=True)


@schedule_app.command("create")
def create(
    name: Annotated[str, typer.Argument(help="Built-in pipeline name or module:function")],
    cron: Annotated[str, typer.Option(help="5-field cron, optional CRON_TZ=Zone prefix")],
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="key=value (repeatable)")
    ] = None,
    start_time: Annotated[str | None, typer.Option(help="RFC 3339; default now")] = None,
    end_time: Annotated[str | None, typer.Option(help="RFC 3339; default never")] = None,
    max_run_count: Annotated[int | None, typer.Option(help="Stop after this many runs")] = None,
    max_concurrent_run_count: Annotated[int, typer.Option(help="Runs at once")] = 1,
    allow_queueing: Annotated[bool, typer.Option(help="Queue a run when all slots are busy")] = (
        False
    ),
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Run every task again")] = False,
    vertex: Annotated[bool, typer.Option("--vertex", help="Schedule on Vertex AI")] = False,
    project: ProjectOption = None,
    region: Annotated[
        str,
        typer.Option(help="Vertex region (with --vertex)", callback=spec_checked(validate_region)),
    ] = "us-central1",
    pipeline_root: Annotated[str | None, typer.Option(help="gs:// root (with --vertex)")] = None,
    service_account: Annotated[str | None, typer.Option(help="Runs as (with --vertex)")] = None,
    image: Annotated[str | None, typer.Option(help="Runtime image for the components")] = None,
    kfp_host: Annotated[str | None, typer.Option(help="Kubeflow Pipelines host URL")] = None,
    home: HomeOption = None,
) -> None:
    """Schedule a pipeline: on the local cloud by default, --vertex, or --kfp-host URL."""
    from vertexkit import runner, scheduling  # with kfp: imported when a verb needs it

    timing = scheduling.Timing(
        cron=cron,
        start_time=start_time,
        end_time=end_time,
        max_run_count=max_run_count,
        max_concurrent_run_count=max_concurrent_run_count,
        allow_queueing=allow_queueing,
    )
    timing.validate()
    pipeline_yaml, params = runner.prepare(name, param or [], image=image)
    check_display_names(params)
    work_dir = (home or Path(".vertexkit")) / "scheduled"
    if kfp_host:
        _create_on_kfp(kfp_host, name, pipeline_yaml, params, timing, work_dir)
    elif vertex:
        if not project or not pipeline_root:
            fail("--vertex needs --project and --pipeline-root gs://BUCKET/PATH")
        job = runner.build_vertex_job(
            name, params, pipeline_yaml, project, region, pipeline_root, not no_cache, work_dir
        )
        schedule = scheduling.create_vertex(job, name, timing, service_account)
        console.print(f"created {schedule.resource_name} ({cron})")
    else:
        _create_locally(name, pipeline_yaml, params, timing, work_dir, not no_cache, home)


def _create_locally(
    name: str,
    pipeline_yaml: str,
    params: dict[str, Any],
    timing: scheduling.Timing,
    work_dir: Path,
    caching: bool,
    home: Path | None,
) -> None:
    from vertexkit import scheduling  # with kfp: imported when a verb needs it

    # Found as every verb finds it (`vertexkit.local_up`): the env a shell exported, or the
    # claim of the `vertexkit local up` serving the home.
    running = bool(os.environ.get(VERTEX_ENV)) or running_local_up(home) is not None
    with cloud_for_command(home=home) as context:
        schedule = scheduling.create_local(
            context, name, pipeline_yaml, params, timing, work_dir, caching
        )
        console.print(f"created {schedule.resource_name} ({timing.cron})")
        link = scheduling.local_console_url(context, schedule.resource_name)
        if running and link:  # the console of a cloud that ends with this command is dead
            console.print(f"console: {link}")
    if not running:
        err_console.print(
            "note: no `vertexkit local up` is running; this schedule fires only while "
            "`vertexkit local up` runs (with the same VERTEXKIT_HOME)"
        )


def _create_on_kfp(
    host: str,
    name: str,
    pipeline_yaml: str,
    params: dict[str, Any],
    timing: scheduling.Timing,
    work_dir: Path,
) -> None:
    from vertexkit import scheduling  # with kfp: imported when a verb needs it

    recurring_run, note = scheduling.create_kfp(host, name, pipeline_yaml, params, timing, work_dir)
    err_console.print(f"note: {note}")
    console.print(f"created recurring run {recurring_run.recurring_run_id} on {host}")


@schedule_app.command("list")
def list_command(
    project: ProjectOption = None, region: RegionOption = None, home: HomeOption = None
) -> None:
    """List schedules with their state, next run time and started runs."""
    from vertexkit import scheduling  # with kfp: imported when a verb needs it

    with cloud_for_command(project, region, home) as context:
        table = Table("name", "cron", "state", "next run", "runs")
        table.add_column("id", no_wrap=True)  # the id is what pause/resume/delete take
        for item in scheduling.list_schedules(context):
            next_run = item.next_run_time.isoformat() if item.next_run_time else "-"
            table.add_row(
                item.display_name,
                item.cron,
                item.state.name,
                next_run,
                str(item.started_run_count),
                item.name.rsplit("/", 1)[-1],
            )
        console.print(table)


def _manage(
    action: str,
    schedule: str,
    project: str | None,
    region: str | None,
    home: Path | None,
    **kwargs: Any,
) -> None:
    from google.api_core import exceptions

    from vertexkit import scheduling  # with kfp: imported when a verb needs it

    with cloud_for_command(project, region, home) as context:
        schedule = _schedule_named(context, schedule)
        try:
            getattr(scheduling, action)(context, schedule, **kwargs)
        except exceptions.ClientError as exc:
            raise UserError("SCHEDULE", f"{schedule!r}: {client_error_message(exc)}") from None
    done = f"{action}d" if action != "pause" else "paused"
    console.print(f"{done} {schedule}")


def _schedule_named(context: Any, schedule: str) -> str:
    """A schedule's resource name, ID or (unique) display name, as the resource name or ID the
    service takes; a value that names none goes to the service as an ID (it answers 404)."""
    from vertexkit import scheduling  # with kfp: imported when a verb needs it

    items = (
        {"name": item.name, "displayName": item.display_name}
        for item in scheduling.list_schedules(context)
    )
    found = find_by_name(schedule, items, "schedule", "SCHEDULE")
    return found["name"] if found else schedule


@schedule_app.command("pause")
def pause(
    schedule: ScheduleArgument,
    project: ProjectOption = None,
    region: RegionOption = None,
    home: HomeOption = None,
) -> None:
    """Pause a schedule (its running jobs continue)."""
    _manage("pause", schedule, project, region, home)


@schedule_app.command("resume")
def resume(
    schedule: ScheduleArgument,
    catch_up: Annotated[bool, typer.Option(help="Run the times missed while paused")] = False,
    project: ProjectOption = None,
    region: RegionOption = None,
    home: HomeOption = None,
) -> None:
    """Resume a paused schedule; --catch-up runs the missed times."""
    _manage("resume", schedule, project, region, home, catch_up=catch_up)


@schedule_app.command("delete")
def delete(
    schedule: ScheduleArgument,
    project: ProjectOption = None,
    region: RegionOption = None,
    home: HomeOption = None,
) -> None:
    """Delete a schedule (its past runs stay)."""
    _manage("delete", schedule, project, region, home)


@runs_app.command("list")
def runs_list(
    schedule: Annotated[
        str | None, typer.Option(help="Only the runs of this schedule (ID or display name)")
    ] = None,
    project: ProjectOption = None,
    region: RegionOption = None,
    home: HomeOption = None,
) -> None:
    """List pipeline runs, newest first."""
    # Through REST (vertexkit/vertex_rest.py): neither kfp nor the aiplatform SDK is imported.
    with rest_for_command(project, region, home) as vertex:
        if schedule:  # an ID, resource name or (unique) display name
            schedules = vertex.list(f"{vertex.parent}/schedules", "schedules")
            found = find_by_name(schedule, schedules, "schedule", "--schedule")
            schedule = found["name"] if found else schedule
        query = {"filter": _schedule_filter(vertex.parent, schedule)} if schedule else None
        table = Table("state", "created", "ended")
        table.add_column("run", no_wrap=True)
        for job in vertex.list(f"{vertex.parent}/pipelineJobs", "pipelineJobs", query):
            table.add_row(*_run_row(job))
        plain_console().print(table)  # made now: its width follows COLUMNS as it is now


def _schedule_filter(parent: str, schedule: str) -> str:
    """The runs of one schedule. Its name resolves as in `scheduling.resolve_schedule`, which
    this verb does not import (with kfp and the runner, 0.8 s)."""
    name = schedule if schedule.startswith("projects/") else f"{parent}/schedules/{schedule}"
    return f'schedule_name="{name}"'


def _run_row(job: dict[str, Any]) -> tuple[str, ...]:
    """The cells the SDK's PipelineJob gave: its state's name, its times in ISO 8601, its ID."""
    created, ended = rfc3339_time(job.get("createTime", "")), rfc3339_time(job.get("endTime", ""))
    return (
        job.get("state", "PIPELINE_STATE_UNSPECIFIED").removeprefix("PIPELINE_STATE_"),
        created.isoformat() if created else "-",
        ended.isoformat() if ended else "-",
        job["name"].rsplit("/", 1)[-1],
    )


@runs_app.command("show")
def runs_show(
    run: RunArgument,
    project: ProjectOption = None,
    region: RegionOption = None,
    home: HomeOption = None,
) -> None:
    """Show one run: state, duration, error, and each task's state, timing, duration and the
    job it ran (`vertexkit jobs show ID`, `vertexkit logs ID`)."""
    # Through REST (vertexkit/vertex_rest.py), as `runs list`: no kfp, no aiplatform SDK.
    with rest_for_command(project, region, home) as vertex:
        name = run if run.startswith("projects/") else f"{vertex.parent}/pipelineJobs/{run}"
        try:
            job = vertex.get(name)
        except ServiceRefused as exc:
            raise UserError("RUN", f"{run!r}: {client_error_message(exc)}") from None
    state = job.get("state", "PIPELINE_STATE_UNSPECIFIED")
    running = state.removeprefix("PIPELINE_STATE_") in ("RUNNING", "PENDING", "QUEUED")
    seconds = seconds_between(job.get("startTime"), job.get("endTime"), running)
    out = plain_console()
    out.print(f"{job['name']}\nstate: {state}\nduration: {duration_text(seconds)}")
    if (job.get("error") or {}).get("message"):
        out.print(f"error: {job['error']['message']}", highlight=False)
    tasks = [
        task
        for task in (job.get("jobDetail") or {}).get("taskDetails") or []
        if task.get("parentTaskId")  # the pipeline's own root task is the run itself
    ]
    table = Table("task", "state", "start", "end", "duration", "job")
    for task in tasks:
        table.add_row(
            task.get("taskName", ""),
            task.get("state", ""),
            _iso(task.get("startTime")),
            _iso(task.get("endTime")),
            duration_text(seconds_between(task.get("startTime"), task.get("endTime"))),
            ", ".join(f"{kind} {job_id}" for kind, job_id in task_jobs(task)) or "-",
        )
    out.print(table)
    for task in tasks:
        if (task.get("error") or {}).get("message"):
            out.print(f"{task.get('taskName')}: {task['error']['message']}", highlight=False)


def _iso(text: str | None) -> str:
    moment = rfc3339_time(text or "")
    return moment.isoformat() if moment else "-"


# The Vertex jobs a task's `gcp_resources` (GCPC's GcpResources) can name, as `jobs` shows them.
TASK_JOB_KINDS = {
    "CustomJob": "custom job",
    "HyperparameterTuningJob": "tuning job",
    "TrainingPipeline": "training pipeline",
    "BatchPredictionJob": "batch prediction",
}


def task_jobs(task: dict[str, Any]) -> list[tuple[str, str]]:
    """The (kind, ID) of each Vertex job the task ran, read from its `gcp_resources` output."""
    metadata = (task.get("execution") or {}).get("metadata") or {}
    text = metadata.get("output:gcp_resources")
    try:
        resources = json.loads(text).get("resources") or [] if isinstance(text, str) else []
    except (ValueError, AttributeError):
        return []
    return [
        (TASK_JOB_KINDS[item["resourceType"]], item.get("resourceUri", "").rsplit("/", 1)[-1])
        for item in resources
        if isinstance(item, dict) and item.get("resourceType") in TASK_JOB_KINDS
    ]


@runs_app.command("cancel")
def runs_cancel(
    run: RunArgument,
    project: ProjectOption = None,
    region: RegionOption = None,
    home: HomeOption = None,
) -> None:
    """Cancel a run (`pipelineJobs.cancel`): its running tasks and their jobs are cancelled."""
    with rest_for_command(project, region, home) as vertex:
        name = run if run.startswith("projects/") else f"{vertex.parent}/pipelineJobs/{run}"
        try:
            vertex.post(f"{name}:cancel", {})
        except ServiceRefused as exc:
            raise UserError("RUN", f"{run!r}: {client_error_message(exc)}") from None
    console.print(f"cancelling {run}")
