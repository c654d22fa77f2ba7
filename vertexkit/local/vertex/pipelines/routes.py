"""Vertex AI PipelineService (pipelineJobs) and ScheduleService (schedules) routes.

Requests are parsed with the `aiplatform_v1` types (an unknown or wrong-typed field is a 400
naming it) and checked the way Vertex checks them before anything is stored: a pipeline spec, a
gs:// pipeline root, known parameters, a valid cron, an end after the start, sane counts.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from vertexkit.local.errors import ApiError, bad_request, conflict, failed_precondition
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.storage.names import check_bucket_name
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core import fields
from vertexkit.local.vertex.core.area import AreaContext
from vertexkit.local.vertex.jobs.lifecycle import JobLog
from vertexkit.local.vertex.pipelines import models, outputs, responses
from vertexkit.local.vertex.pipelines.runner import PipelineRunner
from vertexkit.local.vertex.pipelines.scheduler import Scheduler, initial_cursor
from vertexkit.local.vertex.router import VertexRequest, VertexRouter
from vertexkit.local.vertex.store import Resource, now_rfc3339, page
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.cron import Cron, CronError
from vertexkit.specs.pipelines import validate_component_refs, validate_output_directory
from vertexkit.specs.requests import (
    validate_list_query,
    validate_metadata,
    validate_parameter_values,
    validate_parent,
)

LOCATION = "projects/{project}/locations/{location}"
JOBS = LOCATION + "/pipelineJobs"
JOB = JOBS + "/{job}"
SCHEDULES = LOCATION + "/schedules"
SCHEDULE = SCHEDULES + "/{schedule}"
UPDATABLE_SCHEDULE_FIELDS = {
    "displayName",
    "cron",
    "startTime",
    "endTime",
    "allowQueueing",
    "maxRunCount",
    "maxConcurrentRunCount",
    "maxConcurrentActiveRunCount",
    "createPipelineJobRequest",
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class PipelinesArea(Lifecycle):
    """Pipeline jobs and schedules; `start()` recovers state and starts the scheduler thread."""

    def __init__(self, router: VertexRouter, backend: VertexBackend) -> None:
        self.backend = backend
        self.store = backend.store
        self.runner = PipelineRunner(backend)
        self.scheduler = Scheduler(backend, self._start_scheduled_run)
        self._register(router)

    def start(self) -> None:
        self.runner.fail_interrupted_jobs()
        self.scheduler.start()

    def close(self) -> None:
        self.scheduler.close()
        self.runner.close()

    def _register(self, router: VertexRouter) -> None:
        routes = [
            ("POST", JOBS, self.create_job),
            ("GET", JOBS, self.list_jobs),
            ("GET", JOB, self.get_job),
            ("POST", JOB + ":cancel", self.cancel_job),
            ("DELETE", JOB, self.delete_job),
            ("POST", JOBS + ":batchCancel", self.batch_cancel_jobs),
            ("POST", JOBS + ":batchDelete", self.batch_delete_jobs),
            ("POST", SCHEDULES, self.create_schedule),
            ("GET", SCHEDULES, self.list_schedules),
            ("GET", SCHEDULE, self.get_schedule),
            ("PATCH", SCHEDULE, self.update_schedule),
            ("DELETE", SCHEDULE, self.delete_schedule),
            ("POST", SCHEDULE + ":pause", self.pause_schedule),
            ("POST", SCHEDULE + ":resume", self.resume_schedule),
        ]
        for method, template, handler in routes:
            router.route(method, template)(handler)

    # -- pipeline jobs ---------------------------------------------------------------------------
    def create_job(self, request: VertexRequest) -> Resource:
        validate_parent(request.params["project"], request.params["location"])
        job_id = request.query.get("pipelineJobId") or ""
        return responses.public(self.submit_job(request.parent, request.body, job_id))

    def submit_job(
        self, parent: str, body: dict[str, Any], job_id: str, schedule_name: str | None = None
    ) -> Resource:
        """Validates, stores (PENDING) and starts a pipeline job; the one path for every job.

        Everything is checked before the record or the root bucket exists, so a refused job
        leaves nothing behind (no PENDING record that never runs)."""
        body = with_legacy_parameters(protos.normalize(aiplatform_v1.PipelineJob, body))
        root_uri = validate_pipeline_job(body)
        pipeline_name = body["pipelineSpec"]["pipelineInfo"]["name"]
        job_id = job_id or _default_job_id(pipeline_name)
        if not models.JOB_ID_PATTERN.match(job_id):
            raise bad_request(
                f"pipelineJobId {job_id!r} is invalid: it must match [a-z][-a-z0-9]{{0,127}}"
            )
        name = f"{parent}/pipelineJobs/{job_id}"
        if self.store.find(name):
            raise conflict(f"PipelineJob {name} already exists.")
        body.setdefault("displayName", pipeline_name)
        if schedule_name:
            body["scheduleName"] = schedule_name
        self.backend.storage.ensure_bucket(root_uri.removeprefix("gs://").split("/", 1)[0])
        job = models.new_pipeline_job(name, body)
        job.update(outputs.filled_fields(job, parent.split("/")[1]))
        job["jobDetail"] = outputs.run_contexts(self.store, parent, pipeline_name, job_id)
        self.store.insert(models.PIPELINE_JOBS, name, job)
        note = JobLog(self.runner.jobs_home / job_id)  # job.log, beside the driver's log
        for line in fields.notes(body, fields.PIPELINE_JOB_NOTES, "pipelineJob"):
            note(line)
        job_root = self.backend.storage.gs_uri_to_path(
            f"{root_uri.rstrip('/')}/{parent.split('/')[1]}/{job_id}"
        )
        # kfp.local honours each task's cachingOptions.enableCache, which the SDK's
        # enable_caching rewrote; the global switch only has to allow it.
        self.runner.start(job, job_root, enable_caching=True)
        return job

    def get_job(self, request: VertexRequest) -> Resource:
        job = self.store.get(request.path, "PipelineJob")
        # the run context as it is now: `submit(experiment=)` adds the experiment as a parent
        outputs.refresh_contexts(self.store, job)
        return responses.public(job)

    def list_jobs(self, request: VertexRequest) -> Resource:
        terms = models.parse_filter(request.query.get("filter", ""))
        jobs = [
            job
            for job in self.store.list(models.PIPELINE_JOBS, request.parent)
            if models.matches(job, terms)
        ]
        jobs = models.order(jobs, request.query.get("orderBy") or "create_time desc")
        mask = responses.read_mask(request.query.get("readMask"))
        if mask is None:
            items = [responses.pipeline_job_list_item(job) for job in jobs]
        else:  # the SDK's `list(enable_simple_view=True)`: what the mask names, jobDetail too
            for job in jobs:
                outputs.refresh_contexts(self.store, job)
            items = [responses.masked(responses.public(job), mask) for job in jobs]
        return checked_page(items, request.query, "pipelineJobs")

    def cancel_job(self, request: VertexRequest) -> Resource:
        name = request.path.rsplit(":", 1)[0]
        self._cancel(name)
        return {}

    def _cancel(self, name: str) -> None:
        def change(job: Resource) -> None:
            if models.is_terminal(job):
                raise failed_precondition(
                    f"Cannot cancel pipeline job {name}: it is already {job['state']}."
                )
            models.set_state(job, models.CANCELLING)

        self.store.mutate(name, change, "PipelineJob")
        self.runner.cancel(name)

    def delete_job(self, request: VertexRequest) -> Resource:
        self._delete_job(request.path)
        return self.backend.operations.run_now(request.parent, "DeleteOperationMetadata", "", {})

    def _delete_job(self, name: str) -> None:
        job = self.store.get(name, "PipelineJob")
        if not models.is_terminal(job):
            raise failed_precondition(
                f"Cannot delete pipeline job {name} in state {job['state']}: cancel it first."
            )
        self.store.delete(name)

    def batch_cancel_jobs(self, request: VertexRequest) -> Resource:
        names = list(request.body.get("names") or [])
        for name in names:
            self._cancel(name)
        return self.backend.operations.run_now(
            request.parent,
            "BatchCancelPipelineJobsOperationMetadata",
            "BatchCancelPipelineJobsResponse",
            {"pipelineJobs": [responses.public(self.store.get(n)) for n in names]},
        )

    def batch_delete_jobs(self, request: VertexRequest) -> Resource:
        names = list(request.body.get("names") or [])
        deleted = [responses.public(self.store.get(n, "PipelineJob")) for n in names]
        for name in names:
            self._delete_job(name)
        return self.backend.operations.run_now(
            request.parent,
            "DeleteOperationMetadata",
            "BatchDeletePipelineJobsResponse",
            {"pipelineJobs": deleted},
        )

    # -- schedules -------------------------------------------------------------------------------
    def create_schedule(self, request: VertexRequest) -> Resource:
        validate_parent(request.params["project"], request.params["location"])
        body = protos.normalize(aiplatform_v1.Schedule, request.body)
        validate_schedule(body, now=self.scheduler.clock())
        name = f"{request.parent}/schedules/{self.store.new_id()}"
        now = now_rfc3339()
        schedule: Resource = {
            **body,
            "name": name,
            "state": models.ACTIVE,
            "startedRunCount": "0",
            "createTime": now,
            "updateTime": now,
        }
        schedule.setdefault("maxConcurrentRunCount", "1")
        schedule.setdefault("startTime", models.format_time(self.scheduler.clock()))
        cursor = initial_cursor(schedule, self.scheduler.clock())
        schedule["_cursor"] = models.format_time(cursor)
        schedule["nextRunTime"] = _iso(Cron.parse(schedule["cron"]).next_after(cursor))
        self.store.insert(models.SCHEDULES, name, schedule)
        return responses.public(schedule)

    def get_schedule(self, request: VertexRequest) -> Resource:
        return responses.public(self.store.get(request.path, "Schedule"))

    def list_schedules(self, request: VertexRequest) -> Resource:
        terms = models.parse_filter(request.query.get("filter", ""))
        items = [
            responses.public(schedule)
            for schedule in self.store.list(models.SCHEDULES, request.parent)
            if models.matches(schedule, terms)
        ]
        items = models.order(items, request.query.get("orderBy") or "create_time desc")
        return checked_page(items, request.query, "schedules")

    def update_schedule(self, request: VertexRequest) -> Resource:
        mask = [_camel(p.strip()) for p in request.query.get("updateMask", "").split(",") if p]
        unknown = [field for field in mask if field not in UPDATABLE_SCHEDULE_FIELDS]
        if not mask or unknown:
            raise bad_request(
                f"updateMask: {', '.join(unknown) or 'empty'}; updatable fields: "
                + ", ".join(sorted(UPDATABLE_SCHEDULE_FIELDS))
            )
        patch = protos.normalize(aiplatform_v1.Schedule, request.body)
        current = self.store.get(request.path, "Schedule")
        merged = {**current}
        for field in mask:
            if field in patch:
                merged[field] = patch[field]
            else:
                merged.pop(field, None)
        validate_schedule(responses.public(merged), now=self.scheduler.clock(), creating=False)

        def change(schedule: Resource) -> None:
            schedule.clear()
            schedule.update(merged)
            schedule["updateTime"] = now_rfc3339()
            if schedule["state"] == models.ACTIVE:
                cursor = max(
                    models.parse_time(schedule["_cursor"]),
                    initial_cursor(schedule, self.scheduler.clock()),
                )
                schedule["_cursor"] = models.format_time(cursor)
                schedule["nextRunTime"] = _iso(Cron.parse(schedule["cron"]).next_after(cursor))

        return responses.public(self.store.mutate(request.path, change, "Schedule"))

    def delete_schedule(self, request: VertexRequest) -> Resource:
        self.store.get(request.path, "Schedule")
        self.store.delete(request.path)
        for firing in self.store.list(models.FIRINGS, request.path):
            self.store.delete(firing["name"])
        return self.backend.operations.run_now(request.parent, "DeleteOperationMetadata", "", {})

    def pause_schedule(self, request: VertexRequest) -> Resource:
        name = request.path.rsplit(":", 1)[0]

        def change(schedule: Resource) -> None:
            if schedule["state"] != models.ACTIVE:
                raise failed_precondition(
                    f"Schedule {name} is {schedule['state']}; only an ACTIVE schedule can pause."
                )
            schedule["state"] = models.PAUSED
            schedule["lastPauseTime"] = schedule["updateTime"] = now_rfc3339()
            schedule.pop("nextRunTime", None)

        self.store.mutate(name, change, "Schedule")
        return {}

    def resume_schedule(self, request: VertexRequest) -> Resource:
        name = request.path.rsplit(":", 1)[0]
        catch_up = bool(request.body.get("catchUp", False))
        now = self.scheduler.clock()

        def change(schedule: Resource) -> None:
            if schedule["state"] != models.PAUSED:
                raise failed_precondition(
                    f"Schedule {name} is {schedule['state']}; only a PAUSED schedule can resume."
                )
            schedule["state"] = models.ACTIVE
            schedule["catchUp"] = catch_up
            schedule["lastResumeTime"] = schedule["updateTime"] = now_rfc3339()
            if catch_up:
                schedule["_backfill"] = True  # the missed times fire, oldest first
            else:
                cursor = max(models.parse_time(schedule["_cursor"]), now)
                schedule["_cursor"] = models.format_time(cursor)
            cursor = models.parse_time(schedule["_cursor"])
            schedule["nextRunTime"] = _iso(Cron.parse(schedule["cron"]).next_after(cursor))

        self.store.mutate(name, change, "Schedule")
        return {}

    def _start_scheduled_run(self, schedule: Resource, moment: datetime) -> Resource:
        request = schedule["createPipelineJobRequest"]
        job = dict(request.get("pipelineJob") or {})
        pipeline_name = job.get("pipelineSpec", {}).get("pipelineInfo", {}).get("name", "run")
        # Every run needs an ID of its own: a pipelineJobId the request names is their prefix.
        prefix = request.get("pipelineJobId") or _slug(pipeline_name)
        job_id = f"{prefix}-{moment.strftime('%Y%m%d%H%M%S')}"
        parent = request.get("parent") or schedule["name"].rsplit("/schedules/", 1)[0]
        if self.store.find(f"{parent}/pipelineJobs/{job_id}"):
            job_id += f"-{self.store.next_counter(job_id)}"
        return self.submit_job(parent, job, job_id, schedule_name=schedule["name"])


# -- validation ----------------------------------------------------------------------------------
def validate_pipeline_job(job: Resource, field: str = "pipelineJob") -> str:
    """Checks a PipelineJob the way Vertex does at create; returns its gs:// pipeline root."""
    spec = job.get("pipelineSpec")
    if not spec:
        raise bad_request(f"{field}.pipelineSpec is required (a compiled KFP pipeline spec)")
    if not spec.get("pipelineInfo", {}).get("name"):
        raise bad_request(f"{field}.pipelineSpec.pipelineInfo.name is required")
    if not spec.get("root", {}).get("dag"):
        raise bad_request(f"{field}.pipelineSpec.root.dag is required: is this a pipeline spec?")
    validate_metadata(job, field, display_name_required=False)
    fields.check_refused(job, fields.PIPELINE_JOB_REFUSED, field)
    runtime = job.get("runtimeConfig", {})
    root = runtime.get("gcsOutputDirectory") or spec.get("defaultPipelineRoot") or ""
    if not root:
        raise bad_request(
            f"{field}.runtimeConfig.gcsOutputDirectory is required (or a defaultPipelineRoot)"
        )
    if not root.startswith("gs://") or len(root) <= len("gs://"):
        raise bad_request(f"{field}.runtimeConfig.gcsOutputDirectory must be gs://BUCKET/PATH")
    _validate_root_bucket(root, f"{field}.runtimeConfig.gcsOutputDirectory")
    validate_output_directory(root, f"{field}.runtimeConfig.gcsOutputDirectory")
    validate_component_refs(spec, f"{field}.pipelineSpec")
    validate_parameter_values(
        spec.get("root", {}).get("inputDefinitions", {}).get("parameters", {}),
        runtime.get("parameterValues") or {},
        f"{field}.runtimeConfig.parameterValues",
    )
    return root


def with_legacy_parameters(job: Resource) -> Resource:
    """`runtimeConfig.parameters` (deprecated, for specs of schemaVersion 2.0.0 and lower) as
    the `parameterValues` it stands for; a name in both keeps its parameterValues value."""
    runtime = job.get("runtimeConfig") or {}
    legacy = runtime.get("parameters") or {}
    if not legacy:
        return job
    values = {name: _legacy_value(value) for name, value in legacy.items()}
    runtime = {**runtime, "parameterValues": {**values, **(runtime.get("parameterValues") or {})}}
    runtime.pop("parameters")
    return {**job, "runtimeConfig": runtime}


def _legacy_value(value: dict[str, Any]) -> Any:
    # aiplatform_v1.Value: int64 travels as a JSON string, as proto3 JSON writes it.
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    return value.get("stringValue", "")


def _validate_root_bucket(root: str, field: str) -> None:
    try:
        check_bucket_name(root.removeprefix("gs://").split("/", 1)[0])
    except ApiError as exc:
        raise bad_request(f"{field}: {exc.message}") from None


def checked_page(items: list[Resource], query: dict[str, str], key: str) -> Resource:
    validate_list_query(query)
    return page(items, query, key)


def validate_schedule(schedule: Resource, now: datetime, creating: bool = True) -> None:
    """Every refusal before a schedule is stored: each message names the field."""
    validate_metadata(schedule, "schedule")
    if "createNotebookExecutionJobRequest" in schedule:
        raise bad_request(
            "schedule.createNotebookExecutionJobRequest: the local cloud schedules pipeline "
            "jobs only (use createPipelineJobRequest)"
        )
    request = schedule.get("createPipelineJobRequest")
    if not request or not request.get("pipelineJob"):
        raise bad_request("schedule.createPipelineJobRequest.pipelineJob is required")
    validate_pipeline_job(request["pipelineJob"], "schedule.createPipelineJobRequest.pipelineJob")
    prefix = request.get("pipelineJobId") or ""
    if prefix and not models.JOB_ID_PATTERN.match(f"{prefix}-20260101000000"):
        raise bad_request(
            f"schedule.createPipelineJobRequest.pipelineJobId {prefix!r} is invalid: each run's "
            "ID is <pipelineJobId>-<yyyymmddhhmmss>, which must match [a-z][-a-z0-9]{0,127}"
        )
    if not schedule.get("cron"):
        raise bad_request("schedule.cron is required (5 fields, optional CRON_TZ= prefix)")
    try:
        Cron.parse(schedule["cron"])
    except CronError as exc:
        raise bad_request(f"schedule.cron: {exc}") from None
    start = models.parse_time(schedule["startTime"]) if schedule.get("startTime") else None
    end = models.parse_time(schedule["endTime"]) if schedule.get("endTime") else None
    if end and start and end <= start:
        raise bad_request(
            f"schedule.endTime ({schedule['endTime']}) must be after "
            f"schedule.startTime ({schedule['startTime']})"
        )
    if end and creating and end <= now:
        raise bad_request(f"schedule.endTime ({schedule['endTime']}) is in the past")
    for count_field in ("maxRunCount", "maxConcurrentRunCount", "maxConcurrentActiveRunCount"):
        value = int(schedule.get(count_field) or 0)
        if value < 0:
            raise bad_request(f"schedule.{count_field} must be a positive number, got {value}")
    if creating and not int(schedule.get("maxConcurrentRunCount") or 0):
        raise bad_request("schedule.maxConcurrentRunCount is required and must be at least 1")


def _slug(text: str) -> str:
    slug = re.sub(r"[^-0-9a-z]+", "-", text.lower()).strip("-") or "run"
    return slug if slug[0].isalpha() else f"run-{slug}"


def _default_job_id(pipeline_name: str) -> str:
    return f"{_slug(pipeline_name)}-{datetime.now().strftime('%Y%m%d%H%M%S%f')}"


def _iso(moment: datetime) -> str:
    return models.format_time(moment).replace(".000000Z", "Z")


def register(context: AreaContext) -> PipelinesArea:
    return PipelinesArea(context.router, context.backend)
