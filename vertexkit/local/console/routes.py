"""The console's routes under `/console/`: pages (GET), live state (JSON), actions (POST).

Reads go to the services' own stores and models; actions call the very handlers the Vertex REST
routes dispatch to (`VertexRouter.resolve`), so a cancel, a pause or a prediction from the
console is the same request the SDK would send. Nothing runs in the background: with no browser
open the console costs a run nothing.
"""

from __future__ import annotations

import json
import mimetypes
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from vertexkit.local.console import (
    batch_predictions,
    compare,
    dag,
    lineage,
    logs,
    pages,
    runs,
    training_pipelines,
)
from vertexkit.local.console.data import bigquery_page, storage_page
from vertexkit.local.console.decisions import decisions_page
from vertexkit.local.console.html import fragment
from vertexkit.local.console.security import (
    ARTIFACT_HEADERS,
    CSRF_FIELD,
    PAGE_HEADERS,
    Csrf,
    require_own_origin,
)
from vertexkit.local.console.sources import ConsoleSources
from vertexkit.local.errors import ApiError, bad_request, not_found
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.vertex.batch_prediction.models import COLLECTION as BATCH_PREDICTION_JOBS
from vertexkit.local.vertex.jobs import states as job_states
from vertexkit.local.vertex.pipelines.models import PIPELINE_JOBS, SCHEDULES
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.training.models import CUSTOM_JOBS, TUNING_JOBS
from vertexkit.local.vertex.training_pipelines.models import COLLECTION as TRAINING_PIPELINES

STATIC = Path(__file__).parent / "static"
PREVIEW_BYTES = 4096
MAX_FORM_BYTES = 1_600_000  # above online prediction's 1.5 MB, which the endpoint enforces
Resource = dict[str, Any]


class ConsoleService(Lifecycle):
    """The console's room in the local cloud: `routes()` is all the server registers."""

    def __init__(self, sources: ConsoleSources) -> None:
        self.sources = sources
        self.csrf = Csrf()

    # -- plumbing ------------------------------------------------------------------------------
    @property
    def store(self) -> Any:
        return self.sources.vertex_store

    def registry(self) -> Any:
        return self.sources.registry()

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/console", self.home),
            Route("/console/", self.home),
            Mount("/console/static", StaticFiles(directory=STATIC), name="console-static"),
            Route("/console/pipelines", self.pipelines),
            Route("/console/compare", self.compare),
            Route("/console/training", self.training),
            Route("/console/models", self.models),
            Route("/console/endpoints", self.endpoints),
            Route("/console/schedules", self.schedules),
            Route("/console/decisions", self.decisions),
            Route("/console/bigquery", self.bigquery),
            Route("/console/storage", self.storage),
            Route("/console/artifact", self.artifact),
            Route("/console/download", self.download),
            Route("/console/actions/{action}", self.action, methods=["POST"]),
            Route("/console/{name:path}/state.json", self.run_state),
            Route("/console/{name:path}/logs.json", self.job_log_chunks),
            Route("/console/{name:path}", self.resource),
        ]

    def session(self, request: Request) -> str:
        """This browser's console session (a new one when it has no cookie yet)."""
        if not hasattr(request.state, "console_session"):
            request.state.console_session, request.state.console_new = self.csrf.session(request)
        return request.state.console_session

    def token(self, request: Request) -> str:
        """The CSRF token the page's forms carry, bound to this browser's session."""
        return self.csrf.token(self.session(request))

    def respond(self, request: Request, markup: str, status: int = 200) -> HTMLResponse:
        """An HTML page with the console's headers and, for a new browser, its session cookie."""
        shown = self.sources.vertex_shown(str(markup))
        response = HTMLResponse(shown, status_code=status, headers=PAGE_HEADERS)
        session = self.session(request)
        if request.state.console_new:
            response.set_cookie(
                self.csrf.cookie, session, httponly=True, samesite="strict", path="/console"
            )
        return response

    def json(self, body: Any) -> Response:
        """A JSON answer of the page's scripts, names shown as on the page."""
        text = self.sources.vertex_shown(json.dumps(body, ensure_ascii=False))
        return Response(text, media_type="application/json", headers={"Cache-Control": "no-store"})

    # -- lists ---------------------------------------------------------------------------------
    async def home(self, _: Request) -> Response:
        return RedirectResponse("/console/pipelines", status_code=302)

    def pipeline_jobs(self) -> list[Resource]:
        jobs = self.store.list(PIPELINE_JOBS)
        return sorted(jobs, key=lambda job: job.get("createTime", ""), reverse=True)

    def schedule_names(self) -> dict[str, str]:
        return {s["name"]: s.get("displayName", s["name"]) for s in self.store.list(SCHEDULES)}

    async def pipelines(self, request: Request) -> Response:
        """The runs, newest first; `?state=SUCCEEDED&pipeline=training` keeps the matching ones."""
        jobs, names = await run_in_threadpool(lambda: (self.pipeline_jobs(), self.schedule_names()))
        wanted = pages.RunFilter(
            request.query_params.get("state", ""), request.query_params.get("pipeline", "")
        )
        return self.respond(request, pages.runs_list(jobs, names, wanted))

    async def compare(self, request: Request) -> Response:
        """Runs side by side: `?run=NAME&run=NAME...` (what the runs list's form sends)."""
        try:
            names = compare.checked_run_names(request.query_params.getlist("run"))
            jobs = [self.store.get(name, "PipelineJob") for name in names]
        except ValueError as error:
            return self.respond(request, pages.error_page(400, str(error)), 400)
        except ApiError as error:
            return self.respond(request, pages.error_page(error.code, error.message), error.code)
        return self.respond(request, await run_in_threadpool(compare.compare_page, jobs))

    async def training(self, request: Request) -> Response:
        custom = self.store.list(CUSTOM_JOBS)
        tuning = self.store.list(TUNING_JOBS)
        more = fragment(
            training_pipelines.pipelines_section(self.store.list(TRAINING_PIPELINES)[::-1]),
            batch_predictions.jobs_section(self.store.list(BATCH_PREDICTION_JOBS)[::-1]),
        )
        return self.respond(request, pages.jobs_list(custom[::-1], tuning[::-1], more))

    async def models(self, request: Request) -> Response:
        registry = self.registry().models
        listed = [(m, registry.versions(m["name"])) for m in self.store.list("models")]
        return self.respond(request, pages.models_list(listed))

    async def endpoints(self, request: Request) -> Response:
        return self.respond(request, pages.endpoints_list(self.store.list("endpoints")))

    async def schedules(self, request: Request) -> Response:
        return self.respond(
            request, pages.schedules_list(self.store.list(SCHEDULES), self.token(request))
        )

    async def decisions(self, request: Request) -> Response:
        body, status = await run_in_threadpool(
            decisions_page, self.sources, dict(request.query_params)
        )
        return self.respond(request, body, status)

    async def bigquery(self, request: Request) -> Response:
        body = await run_in_threadpool(bigquery_page, self.sources, dict(request.query_params))
        return self.respond(request, body)

    async def storage(self, request: Request) -> Response:
        body = await run_in_threadpool(storage_page, self.sources, dict(request.query_params))
        return self.respond(request, body)

    # -- one resource --------------------------------------------------------------------------
    async def resource(self, request: Request) -> Response:
        name = self.sources.vertex_key(request.path_params["name"])  # a URL may carry the number
        collection = name.split("/")[4] if name.count("/") >= 5 else ""
        handler = {
            PIPELINE_JOBS: self.run_page,
            "models": self.model_page,
            "endpoints": self.endpoint_page,
            CUSTOM_JOBS: self.custom_job_page,
            TUNING_JOBS: self.tuning_job_page,
            SCHEDULES: self.schedule_page,
            TRAINING_PIPELINES: self.training_pipeline_page,
            BATCH_PREDICTION_JOBS: self.batch_prediction_page,
        }.get(collection)
        if handler is None:
            return self.respond(
                request, pages.error_page(404, f"No console page for {name!r}."), 404
            )
        try:
            return await handler(request, name)
        except ApiError as error:
            return self.respond(request, pages.error_page(error.code, error.message), error.code)

    async def run_page(self, request: Request, name: str) -> Response:
        job = self.store.get(name, "PipelineJob")
        task = request.query_params.get("task")
        view = await run_in_threadpool(self.task_view, job, task) if task else None
        schedule = job.get("scheduleName", "")
        schedule_name = self.schedule_names().get(schedule, schedule)
        return self.respond(request, pages.run_page(job, self.token(request), view, schedule_name))

    def task_view(self, job: Resource, task: str) -> pages.TaskView:
        log_file = self.sources.vertex_home / "pipelineJobs" / runs.job_id(job) / "driver.log"
        text = log_file.read_text(errors="replace") if log_file.exists() else ""
        previews = {}
        for detail in runs.task_details(job).values():
            for output in (detail.get("outputs") or {}).values():
                for artifact in output.get("artifacts") or []:
                    if artifact.get("schemaTitle") == "system.Dataset":
                        previews[artifact["uri"]] = self.preview(artifact["uri"])
        return pages.TaskView(task, runs.task_log(text, task), previews)

    def preview(self, uri: str) -> str:
        """The first bytes of a text artifact (CSV, JSON lines); binary files say what they are."""
        try:
            path = self.sources.storage.gs_uri_to_path(uri)
        except ApiError:
            return ""
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file())
            path = files[0] if files else path
        if not path.is_file():
            return ""
        head = path.read_bytes()[:PREVIEW_BYTES]
        if b"\0" in head or path.suffix == ".parquet":
            return f"{path.name}: {path.stat().st_size} bytes (binary, download it to read)"
        return head.decode(errors="replace")

    async def run_state(self, request: Request) -> Response:
        """The live view's poll: the run's state and each task's, a few hundred bytes."""
        job = self.store.get(self.sources.vertex_key(request.path_params["name"]), "PipelineJob")
        tasks = dag.build_graph(job.get("pipelineSpec") or {}).nodes
        states = runs.shown_task_states(job, tasks)  # a run that ended: never-run tasks too
        body = {
            "state": runs.short_state(job.get("state", "")),
            "running": runs.is_running(job),
            "duration": runs.duration(job),
            "tasks": states,
            "labels": {task: runs.task_label(state) for task, state in states.items()},
        }
        return self.json(body)

    async def model_page(self, request: Request, name: str) -> Response:
        registry = self.registry().models
        model = registry.model_doc(name)
        versions = [registry.render(v, model) for v in registry.versions(name)]
        location = name.rsplit("/models/", 1)[0]
        model_id = name.rsplit("/", 1)[-1]
        evaluations = {
            v["versionId"]: registry.list_evaluations(location, f"{model_id}@{v['versionId']}")
            for v in versions
        }
        producers = await run_in_threadpool(
            lineage.model_version_producers, self.store.list(PIPELINE_JOBS), self.sources.vertex_key
        )
        made_by = {
            v["versionId"]: producers.get(self.sources.vertex_key(f"{name}@{v['versionId']}"))
            for v in versions
        }
        names = self.endpoint_names()
        return self.respond(request, pages.model_page(model, versions, evaluations, made_by, names))

    def endpoint_names(self) -> dict[str, str]:
        return {
            self.sources.vertex_key(e["name"]): e.get("displayName", "")
            for e in self.store.list("endpoints")
        }

    def endpoint_view(self, endpoint: Resource) -> pages.EndpointView:
        """What the endpoint page shows of each deployed model: its version's display name,
        and a sample instance in the feature order of the model taking the most traffic."""
        registry = self.registry().models
        names: dict[str, str] = {}
        sample: list[Any] | None = None
        columns: list[str] = []
        split = endpoint.get("trafficSplit") or {}
        deployed = sorted(
            endpoint.get("deployedModels") or [],
            key=lambda d: -float(split.get(d.get("id", ""), 0)),
        )
        for d in deployed:
            model = self.sources.vertex_key(d.get("model", ""))
            version = next(
                (
                    v
                    for v in registry.versions(model)
                    if v.get("versionId") == d.get("modelVersionId")
                ),
                None,
            ) if model else None  # fmt: skip
            if version is None:
                continue
            names[d.get("id", "")] = version.get("displayName", "")
            if sample is None:
                files = self.model_files(version.get("artifactUri", ""))
                sample = lineage.sample_instance(files)
                columns = lineage.feature_columns(files)
        return pages.EndpointView(names, sample, columns)

    def model_files(self, artifact_uri: str) -> Any:
        def read(file: str) -> str | None:
            try:
                path = self.sources.storage.gs_uri_to_path(f"{artifact_uri.rstrip('/')}/{file}")
            except ApiError:
                return None
            return path.read_text(errors="replace") if path.is_file() else None

        return read

    async def endpoint_page(self, request: Request, name: str) -> Response:
        endpoint = self.registry().endpoints.get(name)
        view = await run_in_threadpool(self.endpoint_view, endpoint)
        return self.respond(request, pages.endpoint_page(endpoint, self.token(request), view=view))

    def made_by(self, name: str) -> lineage.Producer | None:
        return lineage.resource_producer(
            self.store.list(PIPELINE_JOBS), name, self.sources.vertex_key
        )

    async def custom_job_page(self, request: Request, name: str) -> Response:
        job = self.store.get(name, "CustomJob")
        logs = await run_in_threadpool(self.job_logs, name, job)
        producer = await run_in_threadpool(self.made_by, name)
        return self.respond(request, pages.custom_job_page(job, logs, logs_url(job), producer))

    async def tuning_job_page(self, request: Request, name: str) -> Response:
        job = self.store.get(name, "HyperparameterTuningJob")
        logs = await run_in_threadpool(self.job_logs, name, job)
        producer = await run_in_threadpool(self.made_by, name)
        return self.respond(request, pages.tuning_job_page(job, logs, logs_url(job), producer))

    def job_dir(self, name: str) -> Path:
        return self.sources.vertex_home / "training" / name.rsplit("/", 1)[-1]

    def job_logs(self, name: str, job: Resource) -> list[logs.Chunk]:
        """Each log file's last TAIL_BYTES, as the page first shows them."""
        return logs.new_chunks(self.job_dir(name), {}, running=not job_states.is_terminal(job))

    async def job_log_chunks(self, request: Request) -> Response:
        """The log stream's poll: each file's bytes after the offsets the page sends."""
        name = self.sources.vertex_key(request.path_params["name"])  # a URL may carry the number
        if name.count("/") != 5 or name.split("/")[4] not in (CUSTOM_JOBS, TUNING_JOBS):
            raise not_found(f"{name} is not a custom or tuning job.")
        offsets = logs.parse_offsets(request.query_params.getlist("from"))
        job = self.store.get(name, "Job")  # its state before its files: no line is lost
        running = not job_states.is_terminal(job)
        chunks = await run_in_threadpool(logs.new_chunks, self.job_dir(name), offsets, running)
        body = {
            "state": runs.short_state(job.get("state", "")),
            "running": running,
            "logs": [asdict(chunk) for chunk in chunks],
        }
        return self.json(body)

    async def training_pipeline_page(self, request: Request, name: str) -> Response:
        pipeline = self.store.get(name, "TrainingPipeline")
        return self.respond(request, training_pipelines.training_pipeline_page(pipeline))

    async def batch_prediction_page(self, request: Request, name: str) -> Response:
        job = self.store.get(name, "BatchPredictionJob")
        return self.respond(request, batch_predictions.batch_prediction_page(job))

    async def schedule_page(self, request: Request, name: str) -> Response:
        schedule = self.store.get(name, "Schedule")
        jobs = [j for j in self.pipeline_jobs() if j.get("scheduleName") == name]
        return self.respond(request, pages.schedule_page(schedule, jobs, self.token(request)))

    # -- artifacts and downloads ---------------------------------------------------------------
    def object_file(self, uri: str) -> Path:
        path = self.sources.storage.gs_uri_to_path(uri)  # validates the name: stays in the store
        if not path.is_file():
            raise not_found(f"{uri} is not an object of the local Cloud Storage.")
        return path

    async def artifact(self, request: Request) -> Response:
        """An HTML/Markdown artifact, sandboxed by its own CSP header (no script, opaque origin)."""
        uri = request.query_params.get("uri", "")
        try:
            path = self.object_file(uri)
        except ApiError as error:
            return Response(
                error.message,
                status_code=error.code,
                headers=ARTIFACT_HEADERS,
                media_type="text/plain",
            )
        # KFP names an HTML artifact's file after the output (no suffix): the page says what it is.
        media = "text/html" if request.query_params.get("type") == "html" else "text/plain"
        return Response(path.read_bytes(), headers=ARTIFACT_HEADERS, media_type=media)

    async def download(self, request: Request) -> Response:
        uri = request.query_params.get("uri", "")
        path = self.object_file(uri)
        media = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return FileResponse(
            path,
            media_type=media,
            filename=path.name,
            content_disposition_type="attachment",
            headers={**PAGE_HEADERS, "Content-Security-Policy": "sandbox"},
        )

    # -- actions -------------------------------------------------------------------------------
    async def action(self, request: Request) -> Response:
        require_own_origin(request)
        form = await read_form(request)
        self.csrf.check(request, str(form.get(CSRF_FIELD, "")))
        action = request.path_params["action"]
        name = self.sources.vertex_key(str(form.get("name", "")))
        if action == "predict":
            return await self.predict(request, name, str(form.get("instances", "")))
        if action == "retry":
            retried = await run_in_threadpool(self.retry, name)
            url = self.sources.vertex_shown(pages.resource_url(retried["name"]))
            return RedirectResponse(url, status_code=303)
        verbs = {"cancel": ":cancel", "pause": ":pause", "resume": ":resume"}
        if action not in verbs:
            allowed = ", ".join([*verbs, "predict", "retry"])
            raise bad_request(f"action: {action!r} is not one of {allowed}")
        await run_in_threadpool(self.call_vertex, name + verbs[action], {})
        back = pages.resource_url(name) if action == "cancel" else "/console/schedules"
        return RedirectResponse(self.sources.vertex_shown(back), status_code=303)

    def retry(self, name: str) -> Resource:
        """A new run of a failed or cancelled run: its spec and runtime config, created by the
        REST create route's handler (validated there, before anything is stored)."""
        job = self.store.get(name, "PipelineJob") if "/pipelineJobs/" in name else None
        if job is None:
            raise bad_request(f"name: {name!r} is not a pipeline job.")
        if job.get("state") not in runs.RETRYABLE_STATES:
            raise ApiError(
                400,
                f"name: {name} is {job.get('state')}; only a run in "
                f"{' or '.join(sorted(runs.RETRYABLE_STATES))} can be retried.",
                reason="failedPrecondition",
                status="FAILED_PRECONDITION",
            )
        parent = name.split("/pipelineJobs/", 1)[0]
        return self.call_vertex(f"{parent}/pipelineJobs", runs.retry_body(job))

    def call_vertex(self, path: str, body: Resource) -> Any:
        """The Vertex REST handler for `POST /v1/{path}`, called as the REST route calls it."""
        path = self.sources.vertex_key(path)  # as the router reads a request's path
        resolved = self.sources.resolve_vertex("POST", path)
        if resolved is None:
            raise not_found(f"{path} is not a Vertex resource action.")
        handler, params = resolved
        content_length = len(json.dumps(body))
        request = VertexRequest(
            "POST", path, params, {}, body, {"content-length": str(content_length)}
        )
        return handler(request)

    async def predict(self, request: Request, name: str, instances_text: str) -> Response:
        token = self.token(request)
        endpoint = self.registry().endpoints.get(name)
        view = await run_in_threadpool(self.endpoint_view, endpoint)
        try:
            instances = json.loads(instances_text)
        except json.JSONDecodeError as exc:
            markup = pages.endpoint_page(
                endpoint, token, instances_text, error=f"instances: not JSON ({exc})", view=view
            )
            return self.respond(request, markup, 400)
        try:
            result = await run_in_threadpool(
                self.call_vertex, name + ":predict", {"instances": instances}
            )
        except ApiError as error:
            markup = pages.endpoint_page(
                endpoint, token, instances_text, error=error.message, view=view
            )
            return self.respond(request, markup, error.code)
        markup = pages.endpoint_page(endpoint, token, instances_text, result=result, view=view)
        return self.respond(request, markup)


async def read_form(request: Request) -> dict[str, str]:
    """An HTML form's fields (urlencoded, what the console's forms send), size capped.

    Parsed here rather than with Starlette's `request.form()`, which needs python-multipart
    for a format the console never sends."""
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != "application/x-www-form-urlencoded":
        raise bad_request(f"Content-Type {media_type!r}: console actions are HTML form posts.")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise ApiError(413, f"A console form is at most {MAX_FORM_BYTES} bytes.")
    return {
        key: values[-1]
        for key, values in parse_qs(body.decode(errors="replace"), keep_blank_values=True).items()
    }


def logs_url(job: Resource) -> str | None:
    """Where a running job's page polls for new log lines (None once the job has ended)."""
    return None if job_states.is_terminal(job) else pages.resource_url(job["name"]) + "/logs.json"


def console_url(base_url: str) -> str:
    return f"{base_url}/console/"


def run_url(base_url: str, job_name: str) -> str:
    return f"{base_url}/console/{quote(job_name)}"
