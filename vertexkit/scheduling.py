"""Recurring pipeline runs on three targets, from one set of arguments.

- the local cloud: an `aiplatform.PipelineJobSchedule` against the local Vertex AI, which fires
  while `vertexkit local up` runs (state under VERTEXKIT_HOME, so it survives restarts);
- Vertex AI: the same `PipelineJobSchedule`, built from `runner.build_vertex_job`;
- Kubeflow Pipelines: `kfp.Client(host).create_recurring_run`, with the cron converted from
  Vertex's 5-field dialect to KFP's 6-field one (seconds first).

Every check (pipeline compiles, parameters, cron, start/end) runs before anything is created.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from vertexkit.context import CloudContext
from vertexkit.pipeline_registry import short_name
from vertexkit.runner import PIPELINE_BUCKET_SUFFIX, declared_parameters, run_display_name
from vertexkit.specs.cron import Cron, CronError, to_kubeflow

DEFAULT_KFP_EXPERIMENT = "vertexkit-schedules"


class ScheduleError(ValueError):
    """A schedule that would be refused; the message is one line naming the field."""


@dataclass(frozen=True)
class Timing:
    cron: str
    start_time: str | None = None  # RFC 3339
    end_time: str | None = None
    max_run_count: int | None = None
    max_concurrent_run_count: int = 1
    allow_queueing: bool = False

    def validate(self) -> None:
        try:
            Cron.parse(self.cron)
        except CronError as exc:
            raise ScheduleError(f"--cron: {exc}") from None
        start = _parse_time("--start-time", self.start_time)
        end = _parse_time("--end-time", self.end_time)
        if start and end and end <= start:
            raise ScheduleError(f"--end-time {self.end_time} must be after --start-time")
        if self.max_run_count is not None and self.max_run_count < 1:
            raise ScheduleError("--max-run-count must be at least 1")
        if self.max_concurrent_run_count < 1:
            raise ScheduleError("--max-concurrent-run-count must be at least 1")

    def schedule_kwargs(self) -> dict[str, Any]:
        """Arguments for `PipelineJobSchedule.create`."""
        values: dict[str, Any] = {
            "cron": self.cron,
            "max_concurrent_run_count": self.max_concurrent_run_count,
            "allow_queueing": self.allow_queueing,
        }
        optional = {
            "start_time": self.start_time,
            "end_time": self.end_time,
            "max_run_count": self.max_run_count,
        }
        values.update({key: value for key, value in optional.items() if value is not None})
        return values


def _parse_time(option: str, value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ScheduleError(
            f"{option} {value!r}: expected RFC 3339, e.g. 2030-01-01T00:00:00Z"
        ) from None
    if moment.tzinfo is None:
        raise ScheduleError(f"{option} {value!r}: give a time zone, e.g. a trailing Z for UTC")
    return moment


def _write_template(work_dir: Path, name: str, pipeline_yaml: str) -> Path:
    work_dir.mkdir(parents=True, exist_ok=True)
    template = work_dir / f"{short_name(name)}.yaml"
    template.write_text(pipeline_yaml)
    return template


def create_local(
    context: CloudContext,
    name: str,
    pipeline_yaml: str,
    params: dict[str, Any],
    timing: Timing,
    work_dir: Path,
    enable_caching: bool = True,
) -> Any:
    """A PipelineJobSchedule on the local cloud that `context` points at."""
    from google.cloud import aiplatform

    timing.validate()
    context.init_aiplatform()
    pipeline = short_name(name)
    declared = declared_parameters(pipeline_yaml)
    values = {"project": context.project, "location": context.region, **params}
    job = aiplatform.PipelineJob(
        display_name=run_display_name(pipeline_yaml),
        template_path=str(_write_template(work_dir, name, pipeline_yaml)),
        pipeline_root=f"gs://{context.project}{PIPELINE_BUCKET_SUFFIX}/{pipeline}",
        parameter_values={k: v for k, v in values.items() if k in declared},
        enable_caching=enable_caching,
    )
    schedule = aiplatform.PipelineJobSchedule(pipeline_job=job, display_name=pipeline)
    # The SDK logs a link to Google's console for the schedule ("View Schedule: https://console
    # .cloud.google.com/...?project=local-project"), which does not exist: the local console's
    # link is the caller's to print (`local_console_url`).
    sdk_logger = logging.getLogger("google.cloud.aiplatform.pipeline_job_schedules")
    level = sdk_logger.level
    sdk_logger.setLevel(logging.WARNING)
    try:
        schedule.create(**timing.schedule_kwargs())
    finally:
        sdk_logger.setLevel(level)
    return schedule


def local_console_url(context: CloudContext, resource_name: str) -> str | None:
    """The local console's page of a resource, where the context is a local cloud."""
    if not context.vertex_endpoint:
        return None
    return f"{context.vertex_endpoint.rstrip('/')}/console/{resource_name}"


def create_vertex(vertex_job: Any, name: str, timing: Timing, service_account: str | None) -> Any:
    """A PipelineJobSchedule on Vertex AI for a job from `runner.build_vertex_job`."""
    from google.cloud import aiplatform

    timing.validate()
    schedule = aiplatform.PipelineJobSchedule(
        pipeline_job=vertex_job, display_name=short_name(name)
    )
    schedule.create(service_account=service_account, **timing.schedule_kwargs())
    return schedule


def kfp_recurring_run(
    name: str, template: Path, params: dict[str, Any], timing: Timing, experiment_id: str
) -> tuple[dict[str, Any], str | None]:
    """The `kfp.Client.create_recurring_run` arguments, and a note about the cron translation."""
    timing.validate()
    cron, note = to_kubeflow(timing.cron)
    request: dict[str, Any] = {
        "experiment_id": experiment_id,
        "job_name": short_name(name),
        "cron_expression": cron,
        "max_concurrency": timing.max_concurrent_run_count,
        "params": params,
        "pipeline_package_path": str(template),
        "no_catchup": True,
        "enabled": True,
    }
    if timing.start_time:
        request["start_time"] = timing.start_time
    if timing.end_time:
        request["end_time"] = timing.end_time
    translation = f"cron {timing.cron!r} is {cron!r} in Kubeflow's 6-field dialect (seconds first)"
    return request, translation + (f"; {note}" if note else "")


def create_kfp(
    host: str,
    name: str,
    pipeline_yaml: str,
    params: dict[str, Any],
    timing: Timing,
    work_dir: Path,
    experiment: str = DEFAULT_KFP_EXPERIMENT,
) -> tuple[Any, str]:
    import kfp

    template = _write_template(work_dir, name, pipeline_yaml)
    client = kfp.Client(host=host)
    experiment_id = client.create_experiment(name=experiment).experiment_id
    request, note = kfp_recurring_run(name, template, params, timing, experiment_id)
    return client.create_recurring_run(**request), note


# -- managing schedules and runs (local cloud or Vertex, through the same clients) ------------
def schedule_client(context: CloudContext) -> Any:
    from google.cloud import aiplatform_v1

    return context._gapic(aiplatform_v1.ScheduleServiceClient)


def resolve_schedule(context: CloudContext, name_or_id: str) -> str:
    if name_or_id.startswith("projects/"):
        return name_or_id
    return f"{context.parent}/schedules/{name_or_id}"


def resolve_run(context: CloudContext, name_or_id: str) -> str:
    if name_or_id.startswith("projects/"):
        return name_or_id
    return f"{context.parent}/pipelineJobs/{name_or_id}"


def list_schedules(context: CloudContext) -> list[Any]:
    return list(schedule_client(context).list_schedules(parent=context.parent))


def pause(context: CloudContext, name: str) -> None:
    schedule_client(context).pause_schedule(name=resolve_schedule(context, name))


def resume(context: CloudContext, name: str, catch_up: bool) -> None:
    # Through GAPIC: PipelineJobSchedule.resume(catch_up=...) does not send catch_up.
    schedule_client(context).resume_schedule(
        name=resolve_schedule(context, name), catch_up=catch_up
    )


def delete(context: CloudContext, name: str) -> None:
    schedule_client(context).delete_schedule(name=resolve_schedule(context, name)).result()


def list_runs(context: CloudContext, schedule: str | None = None) -> list[Any]:
    request: dict[str, Any] = {"parent": context.parent}
    if schedule:
        request["filter"] = f'schedule_name="{resolve_schedule(context, schedule)}"'
    return list(context.pipeline_client().list_pipeline_jobs(request=request))


def get_run(context: CloudContext, name: str) -> Any:
    return context.pipeline_client().get_pipeline_job(name=resolve_run(context, name))
