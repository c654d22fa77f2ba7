"""`vertexkit jobs list|show` and `vertexkit logs JOB`.

`jobs` reads Vertex AI's training and prediction jobs (custom jobs, hyperparameter tuning jobs,
training pipelines, batch prediction jobs) through the REST API (vertexkit/vertex_rest.py),
from the local cloud or, with `--project`, from Vertex AI: the same four lists the console's
Training and Batch predictions pages show, as one table newest first. `logs` prints what the
local cloud kept of a custom or tuning job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from vertexkit.cli.cloud import rest_for_command
from vertexkit.cli.errors import UserError, plain_console
from vertexkit.cli.names import last_part
from vertexkit.cli.options import HomeOption, ProjectOption, RegionOption
from vertexkit.local_up import home_or_default
from vertexkit.vertex_rest import ServiceRefused, VertexRest, rfc3339_time

jobs_app = typer.Typer(
    no_args_is_help=True, help="Training and batch prediction jobs (custom, tuning, pipelines)."
)


@dataclass(frozen=True)
class JobKind:
    """One of Vertex AI's job collections (REST v1, `projects.locations.<collection>`)."""

    collection: str  # the REST collection, and the list answer's key
    label: str  # as the `kind` column shows it
    prefix: str  # the state enum's prefix: JobState or PipelineState


JOB_KINDS = (
    JobKind("customJobs", "custom job", "JOB_STATE_"),
    JobKind("hyperparameterTuningJobs", "tuning job", "JOB_STATE_"),
    JobKind("trainingPipelines", "training pipeline", "PIPELINE_STATE_"),
    JobKind("batchPredictionJobs", "batch prediction", "JOB_STATE_"),
)
# The states of Vertex AI's REST reference: `JobState` (custom, tuning and batch prediction jobs)
# and `PipelineState` (training pipelines), v1. `jobs_test.py` holds them to aiplatform_v1's.
JOB_STATES = (
    "JOB_STATE_UNSPECIFIED", "JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING",
    "JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED",
    "JOB_STATE_PAUSED", "JOB_STATE_EXPIRED", "JOB_STATE_UPDATING",
    "JOB_STATE_PARTIALLY_SUCCEEDED",
)  # fmt: skip
PIPELINE_STATES = (
    "PIPELINE_STATE_UNSPECIFIED", "PIPELINE_STATE_QUEUED", "PIPELINE_STATE_PENDING",
    "PIPELINE_STATE_RUNNING", "PIPELINE_STATE_SUCCEEDED", "PIPELINE_STATE_FAILED",
    "PIPELINE_STATE_CANCELLING", "PIPELINE_STATE_CANCELLED", "PIPELINE_STATE_PAUSED",
)  # fmt: skip
SHORT_STATES = sorted(
    {s.removeprefix("JOB_STATE_") for s in JOB_STATES}
    | {s.removeprefix("PIPELINE_STATE_") for s in PIPELINE_STATES}
)
KIND_NAMES = {"custom": "customJobs", "tuning": "hyperparameterTuningJobs",
              "training-pipeline": "trainingPipelines", "batch": "batchPredictionJobs"}  # fmt: skip


def short_state(state: str) -> str:
    return state.removeprefix("JOB_STATE_").removeprefix("PIPELINE_STATE_") or "UNSPECIFIED"


def duration_text(seconds: float | None) -> str:
    """`4.2 s`, `3 min 5 s`, `2 h 7 min`: as the console shows a run's or a task's duration."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def seconds_between(start: str | None, end: str | None, running: bool = False) -> float | None:
    """From start to end; a resource still running counts to now."""
    began, ended = rfc3339_time(start or ""), rfc3339_time(end or "")
    if began is None:
        return None
    if ended is None:
        if not running:
            return None
        ended = datetime.now(timezone.utc)
    return max((ended - began).total_seconds(), 0.0)


def _is_running(state: str) -> bool:
    return short_state(state) in {"RUNNING", "PENDING", "QUEUED", "CANCELLING", "UPDATING"}


def job_row(kind: JobKind, job: dict[str, Any]) -> dict[str, Any]:
    state = job.get("state", f"{kind.prefix}UNSPECIFIED")
    seconds = seconds_between(job.get("startTime"), job.get("endTime"), _is_running(state))
    return {
        "id": last_part(job["name"]),
        "kind": kind.label,
        "displayName": job.get("displayName", ""),
        "state": state,
        "createTime": job.get("createTime", ""),
        "startTime": job.get("startTime", ""),
        "endTime": job.get("endTime", ""),
        "durationSeconds": None if seconds is None else round(seconds, 3),
        "name": job["name"],
    }


def _state_wanted(value: str | None) -> str | None:
    """`--state`: a state's short name (`FAILED`) or its enum name, in any case."""
    if value is None:
        return None
    wanted = short_state(value.strip().upper())
    if wanted not in SHORT_STATES:
        raise UserError("--state", f"unknown state {value!r}: one of {', '.join(SHORT_STATES)}")
    return wanted


def _kinds_wanted(kind: str | None) -> tuple[JobKind, ...]:
    if kind is None:
        return JOB_KINDS
    if kind not in KIND_NAMES:
        raise UserError("--kind", f"unknown kind {kind!r}: one of {', '.join(KIND_NAMES)}")
    return tuple(k for k in JOB_KINDS if k.collection == KIND_NAMES[kind])


def list_jobs(
    vertex: VertexRest, kinds: tuple[JobKind, ...] = JOB_KINDS, state: str | None = None
) -> list[dict[str, Any]]:
    """Every job of these kinds (in `state`, a short name), newest first."""
    rows = [
        job_row(kind, job)
        for kind in kinds
        for job in vertex.list(f"{vertex.parent}/{kind.collection}", kind.collection)
    ]
    if state:
        rows = [row for row in rows if short_state(row["state"]) == state]
    return sorted(rows, key=lambda row: rfc3339_time(row["createTime"]) or _EPOCH, reverse=True)


_EPOCH = datetime.fromtimestamp(0, timezone.utc)


def _created(text: str) -> str:
    moment = rfc3339_time(text)
    return str(moment)[:19] if moment else "-"  # as `models list`: "YYYY-MM-DD HH:MM:SS", UTC


@jobs_app.command("list")
def list_command(
    state: Annotated[
        str | None, typer.Option(help="Only jobs in this state (SUCCEEDED, FAILED, RUNNING, ...)")
    ] = None,
    kind: Annotated[
        str | None, typer.Option(help=f"Only one kind: {', '.join(KIND_NAMES)}")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")] = False,
    project: ProjectOption = None,
    region: RegionOption = None,
    home: HomeOption = None,
) -> None:
    """Custom jobs, tuning jobs, training pipelines and batch predictions, newest first."""
    wanted, kinds = _state_wanted(state), _kinds_wanted(kind)
    with rest_for_command(project, region, home) as vertex:
        rows = list_jobs(vertex, kinds, wanted)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table()
    for column in ("id", "kind", "display name", "state", "created", "duration"):
        table.add_column(column, overflow="fold", no_wrap=column == "id")
    for row in rows:
        table.add_row(
            row["id"],
            row["kind"],
            row["displayName"],
            short_state(row["state"]),
            _created(row["createTime"]),
            duration_text(row["durationSeconds"]),
        )
    plain_console().print(table)


def find_job(vertex: VertexRest, job: str) -> tuple[JobKind, dict[str, Any]]:
    """A job by resource name, or by ID in whichever of the four collections holds it."""
    if job.startswith("projects/"):
        collection = job.split("/")[4] if job.count("/") >= 5 else ""
        kinds = [k for k in JOB_KINDS if k.collection == collection]
        if not kinds:
            raise UserError("JOB", f"{job!r} is not a custom, tuning, training or batch job")
        names = [(kinds[0], job)]
    else:
        names = [(kind, f"{vertex.parent}/{kind.collection}/{job}") for kind in JOB_KINDS]
    for kind, name in names:
        try:
            return kind, vertex.get(name)
        except ServiceRefused as exc:
            if exc.code not in (400, 404):  # 400: not an ID this collection gives out
                raise
    raise UserError("JOB", f"no custom job, tuning job, training pipeline or batch job {job!r}")


@jobs_app.command("show")
def show_command(
    job: Annotated[str, typer.Argument(help="Job ID or resource name")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the job's JSON")] = False,
    project: ProjectOption = None,
    region: RegionOption = None,
    home: HomeOption = None,
) -> None:
    """One job: kind, state, times, duration, error; a tuning job's trials, a training
    pipeline's custom job and model."""
    with rest_for_command(project, region, home) as vertex:
        kind, found = find_job(vertex, job)
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    row = job_row(kind, found)
    console = plain_console()
    lines = [
        ("name", found["name"]),
        ("kind", kind.label),
        ("display name", row["displayName"]),
        ("state", short_state(row["state"])),
        ("created", row["createTime"] or "-"),
        ("started", row["startTime"] or "-"),
        ("ended", row["endTime"] or "-"),
        ("duration", duration_text(row["durationSeconds"])),
        *_details(kind, found),
    ]
    if (found.get("error") or {}).get("message"):
        lines.append(("error", found["error"]["message"]))
    if kind.collection in ("customJobs", "hyperparameterTuningJobs") and not project:
        lines.append(("logs", f"vertexkit logs {row['id']}"))
    width = max(len(key) for key, _ in lines)
    for key, value in lines:
        console.print(f"{key + ':':<{width + 1}} {value}", highlight=False, soft_wrap=True)
    trials = found.get("trials") or []
    if trials:
        console.print(_trials_table(trials, found))


def _details(kind: JobKind, job: dict[str, Any]) -> list[tuple[str, str]]:
    """What each kind adds: its machines, its study, its model, its data."""
    found: list[tuple[str, str]] = []
    spec = job.get("jobSpec") or job.get("trialJobSpec") or {}
    for index, pool in enumerate(spec.get("workerPoolSpecs") or []):
        machine = pool.get("machineSpec") or {}
        accelerator = machine.get("acceleratorType")
        text = f"{machine.get('machineType', '?')} x{pool.get('replicaCount', 1)}"
        if accelerator:
            text += f", {machine.get('acceleratorCount', 1)} x {accelerator}"
        found.append((f"worker pool {index}", text))
    if kind.collection == "hyperparameterTuningJobs":
        metrics = (job.get("studySpec") or {}).get("metrics") or []
        goal = ", ".join(f"{m.get('metricId')} ({m.get('goal', '?')})" for m in metrics)
        found.append(("study", goal or "-"))
        done = len(job.get("trials") or [])
        found.append(("trials", f"{done} of {job.get('maxTrialCount', '?')}"))
    if kind.collection == "trainingPipelines":
        backing = (job.get("trainingTaskMetadata") or {}).get("backingCustomJob")
        if backing:
            found.append(("custom job", backing))
        uploaded = (job.get("modelToUpload") or {}).get("name") or job.get("modelId")
        if uploaded:
            found.append(("model", uploaded))
    if kind.collection == "batchPredictionJobs":
        found.append(("model", job.get("model", "-")))
        output = job.get("outputInfo") or {}
        target = output.get("gcsOutputDirectory") or output.get("bigqueryOutputTable")
        if target:
            found.append(("output", target))
    return found


def _trials_table(trials: list[dict[str, Any]], job: dict[str, Any]) -> Table:
    metrics = [m.get("metricId") for m in (job.get("studySpec") or {}).get("metrics") or []]
    table = Table("trial", "state", "parameters", *(metrics or ["metric"]), "duration")
    for trial in trials:
        params = ", ".join(
            f"{p.get('parameterId')}={_number(p.get('value'))}"
            for p in trial.get("parameters") or []
        )
        final = {
            m.get("metricId"): m.get("value")
            for m in (trial.get("finalMeasurement") or {}).get("metrics") or []
        }
        values = [_number(final.get(m)) if final.get(m) is not None else "-" for m in metrics]
        seconds = seconds_between(trial.get("startTime"), trial.get("endTime"))
        table.add_row(
            str(trial.get("id", "")),
            str(trial.get("state", "")),
            params,
            *(values or ["-"]),
            duration_text(seconds),
        )
    return table


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def job_log_files(home: Path, job: str) -> list[Path]:
    """job.log first, then every replica's log (per trial for tuning jobs), in order."""
    job_dir = home / "vertex" / "training" / job.rstrip("/").rsplit("/", 1)[-1]
    if not job_dir.is_dir():
        return []
    replica_logs = sorted(job_dir.rglob("workerpool*.log"), key=_log_order)
    return [p for p in [job_dir / "job.log", *replica_logs] if p.is_file()]


def _log_order(path: Path) -> tuple[int, str]:
    trial = path.parent.name.removeprefix("trial-")
    return (int(trial) if trial.isdigit() else 0, path.name)


def logs(
    job: Annotated[str, typer.Argument(help="Job ID or resource name (custom or tuning job)")],
    home: HomeOption = None,
) -> None:
    """Print a local job's logs: what the local cloud did, then each replica's output."""
    root = home_or_default(home)
    files = job_log_files(root, job)
    if not files:
        raise UserError("JOB", f"no logs for job {job!r} under {root}")
    for path in files:
        typer.echo(f"==> {path.relative_to(root)} <==")
        typer.echo(path.read_text(errors="replace"), nl=False)
