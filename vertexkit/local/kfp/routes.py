"""The KFP v2beta1 REST API (`/apis/v2beta1/...`): pipelines and their versions, experiments,
runs, recurring runs, healthz, in the JSON grpc-gateway writes for the KFP API server (proto
field names, enum names, RFC 3339 times, int64 as strings), errors as `{error, code, message,
details}`.

Each run is a local PipelineJob (`vertexkit-kfp-run` label, ID `kfp-<run id>`), created, read
and cancelled through the `PipelineJobs` handle: a KFP run executes on the same executor as any
PipelineJob and shows in the console beside them. The KFP service keeps its own records
(pipelines, versions, experiments, run and recurring-run requests) under `<home>/kfp/`; a run's
state and task details are read from its job when asked.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from vertexkit.local.kfp import fields, listing, packages, runs, triggers
from vertexkit.local.kfp.errors import (
    ALREADY_EXISTS,
    FAILED_PRECONDITION,
    INVALID_ARGUMENT,
    NOT_FOUND,
    UNIMPLEMENTED,
    KfpError,
    already_exists,
    failed_precondition,
    invalid,
    not_found,
)
from vertexkit.local.kfp.jobs import JobRefused, PipelineJobs
from vertexkit.local.lifecycle import Lifecycle
from vertexkit.local.ticker import Ticker
from vertexkit.local.vertex.store import ResourceStore

log = logging.getLogger(__name__)
Resource = dict[str, Any]
PREFIX = "/apis/v2beta1"
EXPERIMENTS, PIPELINES, VERSIONS = "kfpExperiments", "kfpPipelines", "kfpPipelineVersions"
RUNS, RECURRING = "kfpRuns", "kfpRecurringRuns"
DEFAULT_EXPERIMENT = "Default"
DEFAULT_EXPERIMENT_DESCRIPTION = (
    "All runs created without specifying an experiment will be grouped here."
)
DEFAULT_PIPELINE_ROOT = "gs://mlpipeline/v2/artifacts"  # KFP's own bucket name, as gs://
AVAILABLE, ARCHIVED = "AVAILABLE", "ARCHIVED"
ENABLED, DISABLED = "ENABLED", "DISABLED"
LIST_QUERY = {"page_token", "page_size", "sort_by", "filter"}
# experiment_id on a run's verbs: deprecated in run.proto and unused by the KFP server too
RUN_VERB_QUERY = {"experiment_id"}
MAX_CONCURRENCY = 10  # the KFP API server's limit
VERTEX_TO_KFP = (  # Vertex's field paths in a refusal, as a KFP client spells them
    ("pipelineJob.runtimeConfig.parameterValues", "runtime_config.parameters"),
    ("pipelineJob.runtimeConfig.gcsOutputDirectory", "runtime_config.pipeline_root"),
    ("pipelineJob.pipelineSpec", "pipeline_spec"),
    ("pipelineJob.displayName", "display_name"),
    ("pipelineJob.", ""),
)


def _now() -> str:
    return triggers.rfc3339(time.time())


def _in_namespace(item: Resource, namespace: str | None, key: str = "namespace") -> bool:
    """A list's `namespace` filter: none given lists every namespace."""
    return namespace is None or item.get(key, "") == namespace


def _public(resource: Resource) -> Resource:
    return {key: value for key, value in resource.items() if not key.startswith("_")}


@dataclass
class KfpRequest:
    params: dict[str, str]
    query: dict[str, str]
    body: Any = None
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)


Handler = Callable[[KfpRequest], Resource]


class KfpService(Lifecycle):
    def __init__(self, home: Path, jobs: PipelineJobs, tick_seconds: float = 0.5) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.store = ResourceStore(home / "state.sqlite")
        self.jobs = jobs
        self.clock: Callable[[], float] = triggers.utc_now
        self._lock = threading.RLock()
        self._tick_lock = threading.Lock()
        self._ticker = Ticker(self.tick, tick_seconds, "kfp-scheduler")
        self._routes: list[tuple[str, re.Pattern[str], Handler, set[str]]] = []
        self._register()
        self._default_experiment("")

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        self._ticker.start()

    def close(self) -> None:
        self._ticker.close()
        self.store.close()

    # -- HTTP ------------------------------------------------------------------------------------
    def routes(self) -> list[BaseRoute]:
        methods = ["GET", "POST", "PATCH", "DELETE", "PUT"]
        return [Route("/apis/{path:path}", self._dispatch, methods=methods)]

    def _register(self) -> None:
        table: list[tuple[str, str, Handler, set[str]]] = [
            ("GET", "/healthz", self.healthz, set()),
            # experiments
            ("POST", "/experiments", self.create_experiment, set()),
            ("GET", "/experiments", self.list_experiments, LIST_QUERY | {"namespace"}),
            ("GET", "/experiments/{experiment_id}", self.get_experiment, set()),
            ("DELETE", "/experiments/{experiment_id}", self.delete_experiment, set()),
            ("POST", "/experiments/{experiment_id}:archive", self.archive_experiment, set()),
            ("POST", "/experiments/{experiment_id}:unarchive", self.unarchive_experiment, set()),
            # pipelines and versions
            (
                "POST",
                "/pipelines/upload",
                self.upload_pipeline,
                {"name", "display_name", "description", "namespace", "tags"},
            ),
            (
                "POST",
                "/pipelines/upload_version",
                self.upload_version,
                {"name", "display_name", "pipelineid", "description", "tags"},
            ),
            ("POST", "/pipelines/create", self.create_pipeline_and_version, set()),
            ("POST", "/pipelines", self.create_pipeline, set()),
            ("GET", "/pipelines", self.list_pipelines, LIST_QUERY | {"namespace"}),
            ("GET", "/pipelines/names/{name}", self.get_pipeline_by_name, {"namespace"}),
            ("GET", "/pipelines/{pipeline_id}", self.get_pipeline, set()),
            ("DELETE", "/pipelines/{pipeline_id}", self.delete_pipeline, {"cascade"}),
            ("POST", "/pipelines/{pipeline_id}/versions", self.create_version, set()),
            ("GET", "/pipelines/{pipeline_id}/versions", self.list_versions, LIST_QUERY),
            ("GET", "/pipelines/{pipeline_id}/versions/{version_id}", self.get_version, set()),
            (
                "DELETE",
                "/pipelines/{pipeline_id}/versions/{version_id}",
                self.delete_version,
                set(),
            ),
            # runs
            ("POST", "/runs", self.create_run, RUN_VERB_QUERY),
            ("GET", "/runs", self.list_runs, LIST_QUERY | {"namespace", "experiment_id"}),
            ("GET", "/runs/{run_id}", self.get_run, RUN_VERB_QUERY),
            ("DELETE", "/runs/{run_id}", self.delete_run, RUN_VERB_QUERY),
            ("POST", "/runs/{run_id}:archive", self.archive_run, RUN_VERB_QUERY),
            ("POST", "/runs/{run_id}:unarchive", self.unarchive_run, RUN_VERB_QUERY),
            ("POST", "/runs/{run_id}:terminate", self.terminate_run, RUN_VERB_QUERY),
            ("POST", "/runs/{run_id}:retry", self.retry_run, RUN_VERB_QUERY),
            # recurring runs
            ("POST", "/recurringruns", self.create_recurring_run, set()),
            (
                "GET",
                "/recurringruns",
                self.list_recurring_runs,
                LIST_QUERY | {"namespace", "experiment_id"},
            ),
            ("GET", "/recurringruns/{recurring_run_id}", self.get_recurring_run, set()),
            # propagation_policy: how Kubernetes deletes a ScheduledWorkflow's children; here
            # the recurring run has none to delete (its runs stay, as on KFP)
            (
                "DELETE",
                "/recurringruns/{recurring_run_id}",
                self.delete_recurring_run,
                {"propagation_policy"},
            ),
            ("POST", "/recurringruns/{recurring_run_id}:enable", self.enable_recurring_run, set()),
            (
                "POST",
                "/recurringruns/{recurring_run_id}:disable",
                self.disable_recurring_run,
                set(),
            ),
        ]
        # Methods of the API that the local cloud answers 501 UNIMPLEMENTED, each with its reason.
        for method, template, reason in NOT_SERVED:
            table.append((method, template, _refuser(reason), set()))
        for method, template, handler, query in table:
            pattern = re.escape(PREFIX + template)
            pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/:]+)", pattern)
            self._routes.append((method, re.compile(f"^{pattern}$"), handler, query))

    async def _dispatch(self, request: Request) -> Response:
        path = request.url.path
        try:
            matched = [(m, p, h, q) for m, p, h, q in self._routes if p.match(path)]
            if not matched:
                raise not_found(
                    f"{request.method} {path} is not a method of the KFP v2beta1 API served locally"
                )
            chosen = [r for r in matched if r[0] == request.method]
            if not chosen:
                raise KfpError(UNIMPLEMENTED, f"{request.method} is not allowed on {path}")
            _, pattern, handler, allowed = chosen[0]
            query = dict(request.query_params)
            fields.check_query(query, allowed)
            kfp_request = KfpRequest(pattern.match(path).groupdict(), query)  # type: ignore[union-attr]
            raw = await request.body()
            content_type = request.headers.get("content-type", "")
            if content_type.startswith("multipart/form-data"):
                kfp_request.files = _multipart(content_type, raw)
            elif raw.strip():
                try:
                    kfp_request.body = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise invalid(f"the request body is not JSON ({exc.msg})") from None
            answer = await run_in_threadpool(handler, kfp_request)
        except KfpError as exc:
            return exc.response()
        return JSONResponse(answer)

    # -- healthz ---------------------------------------------------------------------------------
    def healthz(self, _: KfpRequest) -> Resource:
        return {"multi_user": False, "pipeline_store": "database"}

    # -- experiments -----------------------------------------------------------------------------
    def _default_experiment(self, namespace: str) -> Resource:
        with self._lock:
            for experiment in self.store.list(EXPERIMENTS):
                if (
                    experiment["display_name"] == DEFAULT_EXPERIMENT
                    and experiment.get("namespace", "") == namespace
                ):
                    return experiment
            return self._insert_experiment(
                {
                    "display_name": DEFAULT_EXPERIMENT,
                    "description": DEFAULT_EXPERIMENT_DESCRIPTION,
                    "namespace": namespace,
                }
            )

    def _insert_experiment(self, body: Resource) -> Resource:
        experiment = {
            "experiment_id": str(uuid.uuid4()),
            "display_name": body["display_name"],
            "description": body.get("description", ""),
            "created_at": _now(),
            "namespace": body.get("namespace", ""),
            "storage_state": AVAILABLE,
        }
        self.store.insert(EXPERIMENTS, f"experiments/{experiment['experiment_id']}", experiment)
        return experiment

    def create_experiment(self, request: KfpRequest) -> Resource:
        body = fields.parse(request.body, fields.EXPERIMENT, "experiment")
        if not body.get("display_name"):
            raise invalid("experiment.display_name is required")
        namespace = body.get("namespace") or ""
        with self._lock:
            for experiment in self.store.list(EXPERIMENTS):
                if (
                    experiment["display_name"] == body["display_name"]
                    and experiment.get("namespace", "") == namespace
                ):
                    raise already_exists(
                        f"Failed to create a new experiment: an experiment named "
                        f"{body['display_name']!r} already exists in namespace {namespace!r}"
                    )
            return self._insert_experiment(body)

    def _existing(self, path: str, what: str) -> Resource:
        """The stored resource at `path`, or KFP's NOT_FOUND naming `what`."""
        found = self.store.find(path)
        if found is None:
            raise not_found(f"{what} not found")
        return found

    def _experiment(self, experiment_id: str) -> Resource:
        return self._existing(f"experiments/{experiment_id}", f"Experiment {experiment_id}")

    def get_experiment(self, request: KfpRequest) -> Resource:
        return self._experiment(request.params["experiment_id"])

    def list_experiments(self, request: KfpRequest) -> Resource:
        namespace = request.query.pop("namespace", None)
        items = [e for e in self.store.list(EXPERIMENTS) if _in_namespace(e, namespace)]
        return listing.page(items, request.query, EXPERIMENT_FIELDS, "experiments", "experiment_id")

    def delete_experiment(self, request: KfpRequest) -> Resource:
        """As experiment.proto says: the experiment goes, its runs and recurring runs stay."""
        experiment = self._experiment(request.params["experiment_id"])
        self.store.delete(f"experiments/{experiment['experiment_id']}")
        return {}

    def archive_experiment(self, request: KfpRequest) -> Resource:
        """KFP archives the experiment's runs and disables its recurring runs with it."""
        experiment_id = self._experiment(request.params["experiment_id"])["experiment_id"]
        self._set(f"experiments/{experiment_id}", storage_state=ARCHIVED)
        for run in self.store.list(RUNS):
            if run.get("experiment_id") == experiment_id:
                self._set(f"runs/{run['run_id']}", storage_state=ARCHIVED)
        for recurring in self.store.list(RECURRING):
            if recurring.get("experiment_id") == experiment_id:
                self._set(
                    f"recurringruns/{recurring['recurring_run_id']}",
                    status=DISABLED,
                    mode="DISABLE",
                    updated_at=_now(),
                )
        return {}

    def unarchive_experiment(self, request: KfpRequest) -> Resource:
        experiment_id = self._experiment(request.params["experiment_id"])["experiment_id"]
        self._set(f"experiments/{experiment_id}", storage_state=AVAILABLE)
        return {}

    def _set(self, name: str, **values: Any) -> Resource:
        return self.store.mutate(name, lambda resource: resource.update(values))

    # -- pipelines -------------------------------------------------------------------------------
    def _upload_file(self, request: KfpRequest) -> tuple[str, Resource]:
        if "uploadfile" not in request.files:
            raise invalid("uploadfile is required: a multipart form field holding the package")
        filename, data = request.files["uploadfile"]
        document = packages.read_package(filename, data)
        packages.split_spec(document, "uploadfile")
        stem = re.sub(r"(\.tar\.gz|\.tgz|\.zip|\.ya?ml|\.json)$", "", Path(filename).name)
        return stem, document

    def upload_pipeline(self, request: KfpRequest) -> Resource:
        stem, document = self._upload_file(request)
        query = request.query
        pipeline = self._new_pipeline(
            {
                "name": query.get("name") or query.get("display_name") or stem,
                "display_name": query.get("display_name") or query.get("name") or stem,
                "description": query.get("description", ""),
                "namespace": query.get("namespace", ""),
                **_tags(query),
            }
        )
        self._new_version(
            pipeline["pipeline_id"],
            {
                "name": pipeline["name"],
                "display_name": pipeline["display_name"],
                "description": pipeline.get("description", ""),
                "pipeline_spec": document,
            },
            "pipeline_version",
        )
        return pipeline

    def upload_version(self, request: KfpRequest) -> Resource:
        stem, document = self._upload_file(request)
        query = request.query
        pipeline_id = query.get("pipelineid") or ""
        if not pipeline_id:
            raise invalid("pipelineid is required: the pipeline the version belongs to")
        self._pipeline(pipeline_id)
        return self._new_version(
            pipeline_id,
            {
                "name": query.get("name") or query.get("display_name") or stem,
                "display_name": query.get("display_name") or query.get("name") or stem,
                "description": query.get("description", ""),
                "pipeline_spec": document,
                **_tags(query),
            },
            "pipeline_version",
        )

    def create_pipeline(self, request: KfpRequest) -> Resource:
        return self._new_pipeline(fields.parse(request.body, fields.PIPELINE, "pipeline"))

    def create_pipeline_and_version(self, request: KfpRequest) -> Resource:
        body = fields.parse(request.body, fields.PIPELINE_AND_VERSION, "request")
        if not body.get("pipeline") or not body.get("pipeline_version"):
            raise invalid("request.pipeline and request.pipeline_version are required")
        version = dict(body["pipeline_version"])
        self._check_version(version, "request.pipeline_version")
        with self._lock:
            pipeline = self._new_pipeline(body["pipeline"])
            version.pop("pipeline_id", None)
            self._new_version(pipeline["pipeline_id"], version, "request.pipeline_version")
        return pipeline

    def _new_pipeline(self, body: Resource) -> Resource:
        name = body.get("name") or body.get("display_name") or ""
        if not name:
            raise invalid("pipeline.name or pipeline.display_name is required")
        namespace = body.get("namespace") or ""
        with self._lock:
            for pipeline in self.store.list(PIPELINES):
                if pipeline["name"] == name and pipeline.get("namespace", "") == namespace:
                    raise already_exists(
                        f"Failed to create a new pipeline: a pipeline named {name!r} already "
                        f"exists in namespace {namespace!r}"
                    )
            pipeline = {
                "pipeline_id": str(uuid.uuid4()),
                "name": name,
                "display_name": body.get("display_name") or name,
                "description": body.get("description", ""),
                "created_at": _now(),
                "namespace": namespace,
            }
            if body.get("tags"):
                pipeline["tags"] = body["tags"]
            self.store.insert(PIPELINES, f"pipelines/{pipeline['pipeline_id']}", pipeline)
            return pipeline

    def _check_version(self, body: Resource, where: str) -> None:
        if body.get("pipeline_spec") in (None, {}, ""):
            raise invalid(f"{where}.pipeline_spec is required")
        packages.split_spec(body["pipeline_spec"], f"{where}.pipeline_spec")

    def _new_version(self, pipeline_id: str, body: Resource, where: str) -> Resource:
        self._check_version(body, where)
        name = body.get("name") or body.get("display_name") or ""
        if not name:
            raise invalid(f"{where}.name or {where}.display_name is required")
        with self._lock:
            for version in self.store.list(VERSIONS, f"pipelines/{pipeline_id}"):
                if version["name"] == name:
                    raise already_exists(
                        f"Failed to create a new pipeline version: the pipeline {pipeline_id} "
                        f"already has a version named {name!r}"
                    )
            version = {
                "pipeline_id": pipeline_id,
                "pipeline_version_id": str(uuid.uuid4()),
                "name": name,
                "display_name": body.get("display_name") or name,
                "description": body.get("description", ""),
                "created_at": _now(),
                "pipeline_spec": body["pipeline_spec"],
            }
            for key in ("code_source_url", "tags"):
                if body.get(key):
                    version[key] = body[key]
            self.store.insert(
                VERSIONS,
                f"pipelines/{pipeline_id}/versions/{version['pipeline_version_id']}",
                version,
            )
            return version

    def _pipeline(self, pipeline_id: str) -> Resource:
        return self._existing(f"pipelines/{pipeline_id}", f"Pipeline {pipeline_id}")

    def get_pipeline(self, request: KfpRequest) -> Resource:
        return self._pipeline(request.params["pipeline_id"])

    def get_pipeline_by_name(self, request: KfpRequest) -> Resource:
        namespace = request.query.get("namespace", "")
        for pipeline in self.store.list(PIPELINES):
            if (
                pipeline["name"] == request.params["name"]
                and pipeline.get("namespace", "") == namespace
            ):
                return pipeline
        raise not_found(
            f"Pipeline named {request.params['name']!r} not found in namespace {namespace!r}"
        )

    def list_pipelines(self, request: KfpRequest) -> Resource:
        namespace = request.query.pop("namespace", None)
        items = [p for p in self.store.list(PIPELINES) if _in_namespace(p, namespace)]
        return listing.page(items, request.query, PIPELINE_FIELDS, "pipelines", "pipeline_id")

    def delete_pipeline(self, request: KfpRequest) -> Resource:
        pipeline = self._pipeline(request.params["pipeline_id"])
        versions = self.store.list(VERSIONS, f"pipelines/{pipeline['pipeline_id']}")
        cascade = request.query.get("cascade", "false").lower()
        if cascade not in ("true", "false"):
            raise invalid(f"cascade: {cascade!r} is not a boolean")
        if versions and cascade != "true":
            raise failed_precondition(
                f"Failed to delete pipeline {pipeline['pipeline_id']}: it has "
                f"{len(versions)} version(s); delete them first or pass cascade=true"
            )
        for version in versions:
            self.store.delete(
                f"pipelines/{pipeline['pipeline_id']}/versions/{version['pipeline_version_id']}"
            )
        self.store.delete(f"pipelines/{pipeline['pipeline_id']}")
        return {}

    def create_version(self, request: KfpRequest) -> Resource:
        body = fields.parse(request.body, fields.PIPELINE_VERSION, "pipeline_version")
        pipeline_id = request.params["pipeline_id"]
        if body.get("pipeline_id") and body["pipeline_id"] != pipeline_id:
            raise invalid(
                f"pipeline_version.pipeline_id {body['pipeline_id']!r} is not the "
                f"path's pipeline {pipeline_id!r}"
            )
        self._pipeline(pipeline_id)
        return self._new_version(pipeline_id, body, "pipeline_version")

    def _version(self, pipeline_id: str, version_id: str) -> Resource:
        return self._existing(
            f"pipelines/{pipeline_id}/versions/{version_id}",
            f"Pipeline version {version_id} of pipeline {pipeline_id}",
        )

    def get_version(self, request: KfpRequest) -> Resource:
        return self._version(request.params["pipeline_id"], request.params["version_id"])

    def list_versions(self, request: KfpRequest) -> Resource:
        pipeline = self._pipeline(request.params["pipeline_id"])
        items = self.store.list(VERSIONS, f"pipelines/{pipeline['pipeline_id']}")
        return listing.page(
            items, request.query, VERSION_FIELDS, "pipeline_versions", "pipeline_version_id"
        )

    def delete_version(self, request: KfpRequest) -> Resource:
        version = self._version(request.params["pipeline_id"], request.params["version_id"])
        self.store.delete(
            f"pipelines/{version['pipeline_id']}/versions/{version['pipeline_version_id']}"
        )
        return {}

    # -- runs ------------------------------------------------------------------------------------
    def _source(self, body: Resource, where: str) -> tuple[Resource, Resource]:
        """The run's pipeline spec and the source fields its answer repeats."""
        reference = dict(body.get("pipeline_version_reference") or {})
        if body.get("pipeline_version_id") and not reference:
            version_id = body["pipeline_version_id"]
            found = [v for v in self.store.list(VERSIONS) if v["pipeline_version_id"] == version_id]
            if not found:
                raise not_found(f"{where}.pipeline_version_id: version {version_id} not found")
            reference = {"pipeline_id": found[0]["pipeline_id"], "pipeline_version_id": version_id}
        given = [
            name
            for name, present in (
                ("pipeline_spec", body.get("pipeline_spec")),
                ("pipeline_version_reference", reference),
            )
            if present
        ]
        if len(given) != 1:
            raise invalid(
                f"{where}: exactly one of pipeline_spec and "
                "pipeline_version_reference (or pipeline_version_id) is required"
            )
        if body.get("pipeline_spec"):
            spec = packages.split_spec(body["pipeline_spec"], f"{where}.pipeline_spec")
            return spec, {"pipeline_spec": body["pipeline_spec"]}
        pipeline_id = reference.get("pipeline_id") or ""
        if not pipeline_id:
            raise invalid(f"{where}.pipeline_version_reference.pipeline_id is required")
        self._pipeline(pipeline_id)
        version_id = reference.get("pipeline_version_id") or ""
        if version_id:
            version = self._version(pipeline_id, version_id)
        else:  # the pipeline's latest version, as KFP takes it
            versions = self.store.list(VERSIONS, f"pipelines/{pipeline_id}")
            if not versions:
                raise not_found(
                    f"{where}.pipeline_version_reference: pipeline {pipeline_id} has no version"
                )
            version = versions[-1]
        spec = packages.split_spec(version["pipeline_spec"], f"{where}.pipeline_spec")
        reference = {
            "pipeline_id": pipeline_id,
            "pipeline_version_id": version["pipeline_version_id"],
        }
        return spec, {
            "pipeline_version_reference": reference,
            "pipeline_version_id": version["pipeline_version_id"],
        }

    def _runtime(self, body: Resource, spec: Resource, where: str) -> tuple[Resource, str]:
        config = body.get("runtime_config") or {}
        parameters = config.get("parameters") or {}
        if not isinstance(parameters, dict):
            raise invalid(f"{where}.runtime_config.parameters: expected an object")
        declared = (spec.get("root", {}).get("inputDefinitions", {}) or {}).get("parameters", {})
        unknown = sorted(set(parameters) - set(declared))
        if unknown:
            raise invalid(
                f"{where}.runtime_config.parameters: {', '.join(unknown)} not among "
                f"the pipeline's inputs ({', '.join(sorted(declared)) or 'none'})"
            )
        root = config.get("pipeline_root") or ""
        if root and not root.startswith("gs://"):
            raise invalid(
                f"{where}.runtime_config.pipeline_root: {root!r} is not served "
                "locally: give gs://BUCKET/PATH (the local Cloud Storage)"
            )
        default = spec.get("defaultPipelineRoot") or ""
        root = root or (default if default.startswith("gs://") else DEFAULT_PIPELINE_ROOT)
        return parameters, root

    def _experiment_for(self, experiment_id: str, namespace: str, where: str) -> Resource:
        if not experiment_id:
            return self._default_experiment(namespace)
        found = self.store.find(f"experiments/{experiment_id}")
        if found is None:
            raise not_found(f"{where}.experiment_id: experiment {experiment_id} not found")
        if found.get("storage_state") == ARCHIVED:
            raise failed_precondition(
                f"{where}.experiment_id: experiment {experiment_id} is archived; unarchive it first"
            )
        return found

    def create_run(self, request: KfpRequest) -> Resource:
        body = fields.parse(request.body, fields.RUN, "run")
        if not body.get("display_name"):
            raise invalid("run.display_name is required")
        return self._start_run(body, "run")

    def _start_run(
        self,
        body: Resource,
        where: str,
        recurring_run_id: str = "",
        scheduled_at: str = "",
        namespace: str = "",
    ) -> Resource:
        spec, source = self._source(body, where)
        parameters, root = self._runtime(body, spec, where)
        experiment = self._experiment_for(body.get("experiment_id") or "", namespace, where)
        run_id = str(uuid.uuid4())
        now = _now()
        run: Resource = {
            "experiment_id": experiment["experiment_id"],
            "run_id": run_id,
            "display_name": body["display_name"],
            "storage_state": AVAILABLE,
            "description": body.get("description", ""),
            **source,
            "runtime_config": {"parameters": parameters, "pipeline_root": root},
            "service_account": body.get("service_account", ""),
            "created_at": now,
            "scheduled_at": scheduled_at or now,
            "_namespace": experiment.get("namespace", ""),
            "_attempts": 0,
            "_job_body": {
                "displayName": body["display_name"][:128],
                "pipelineSpec": spec,
                "runtimeConfig": {"gcsOutputDirectory": root, "parameterValues": parameters},
                "labels": {
                    runs.LABEL_RUN: run_id,
                    runs.LABEL_EXPERIMENT: experiment["experiment_id"],
                },
            },
        }
        if recurring_run_id:
            run["recurring_run_id"] = recurring_run_id
        self._create_job(runs.job_id(run_id, 0), run["_job_body"], where)
        self.store.insert(RUNS, f"runs/{run_id}", run)
        self._set(f"experiments/{experiment['experiment_id']}", last_run_created_at=now)
        return self._answer(run)

    def _create_job(self, job_id: str, body: Resource, where: str) -> Resource:
        try:
            return self.jobs.create(job_id, body)
        except JobRefused as exc:
            message = exc.message
            for vertex, kfp in VERTEX_TO_KFP:
                message = message.replace(vertex, f"{where}.{kfp}" if kfp else f"{where}.")
            code = {404: NOT_FOUND, 409: ALREADY_EXISTS}.get(exc.http_status, INVALID_ARGUMENT)
            if exc.status == "FAILED_PRECONDITION":
                code = FAILED_PRECONDITION
            raise KfpError(code if exc.http_status < 500 else 13, message) from None

    def _run(self, run_id: str) -> Resource:
        return self._existing(f"runs/{run_id}", f"Run {run_id}")

    def _job(self, run: Resource) -> Resource | None:
        return self.jobs.get(runs.job_id(run["run_id"], run.get("_attempts", 0)))

    def _answer(self, run: Resource, job: Resource | None = None) -> Resource:
        job = job if job is not None else self._job(run)
        answer = _public(run)
        answer.update(runs.live_fields(run["run_id"], run["created_at"], job))
        return answer

    def get_run(self, request: KfpRequest) -> Resource:
        return self._answer(self._run(request.params["run_id"]))

    def list_runs(self, request: KfpRequest) -> Resource:
        namespace = request.query.pop("namespace", None)
        experiment_id = request.query.pop("experiment_id", None)
        items = [
            self._answer(run)
            for run in self.store.list(RUNS)
            if _in_namespace(run, namespace, "_namespace")
            and (not experiment_id or run.get("experiment_id") == experiment_id)
        ]
        if experiment_id:
            self._experiment(experiment_id)
        return listing.page(items, request.query, RUN_FIELDS, "runs", "run_id")

    def delete_run(self, request: KfpRequest) -> Resource:
        run = self._run(request.params["run_id"])
        if runs.state_of(self._job(run)) not in runs.TERMINAL:
            raise failed_precondition(
                f"Run {run['run_id']} is still running: terminate it and "
                "delete it once it has ended"
            )
        for attempt in range(run.get("_attempts", 0) + 1):
            try:
                self.jobs.delete(runs.job_id(run["run_id"], attempt))
            except JobRefused as exc:
                if exc.http_status != 404:
                    raise KfpError(FAILED_PRECONDITION, exc.message) from None
        self.store.delete(f"runs/{run['run_id']}")
        return {}

    def archive_run(self, request: KfpRequest) -> Resource:
        self._set(f"runs/{self._run(request.params['run_id'])['run_id']}", storage_state=ARCHIVED)
        return {}

    def unarchive_run(self, request: KfpRequest) -> Resource:
        run = self._run(request.params["run_id"])
        experiment = self.store.find(f"experiments/{run['experiment_id']}")
        if experiment and experiment.get("storage_state") == ARCHIVED:
            raise failed_precondition(
                f"Run {run['run_id']}'s experiment is archived: unarchive the experiment first"
            )
        self._set(f"runs/{run['run_id']}", storage_state=AVAILABLE)
        return {}

    def terminate_run(self, request: KfpRequest) -> Resource:
        run = self._run(request.params["run_id"])
        try:
            self.jobs.cancel(runs.job_id(run["run_id"], run.get("_attempts", 0)))
        except JobRefused as exc:
            raise KfpError(FAILED_PRECONDITION, f"Run {run['run_id']}: {exc.message}") from None
        return {}

    def retry_run(self, request: KfpRequest) -> Resource:
        """KFP retries a failed run in place: the same run ID runs again. Locally its next
        attempt is a new PipelineJob of the same request; the tasks that succeeded are cache
        hits where their caching allows it."""
        with self._lock:
            run = self._run(request.params["run_id"])
            state = runs.state_of(self._job(run))
            if state not in runs.RETRYABLE:
                raise failed_precondition(
                    f"Run {run['run_id']} is {state}: only a FAILED or CANCELED run can be retried"
                )
            attempt = run.get("_attempts", 0) + 1
            self._create_job(runs.job_id(run["run_id"], attempt), run["_job_body"], "run")
            self._set(f"runs/{run['run_id']}", _attempts=attempt)
        return {}

    # -- recurring runs --------------------------------------------------------------------------
    def create_recurring_run(self, request: KfpRequest) -> Resource:
        body = fields.parse(request.body, fields.RECURRING_RUN, "recurring_run")
        where = "recurring_run"
        if not body.get("display_name"):
            raise invalid("recurring_run.display_name is required")
        spec, source = self._source(body, where)
        parameters, root = self._runtime(body, spec, where)
        namespace = body.get("namespace") or ""
        experiment = self._experiment_for(body.get("experiment_id") or "", namespace, where)
        created = self.clock()
        trigger = triggers.parse(body.get("trigger") or {}, created)
        concurrency = str(body.get("max_concurrency") or "1")
        if not concurrency.isdigit() or not 1 <= int(concurrency) <= MAX_CONCURRENCY:
            raise invalid(
                f"recurring_run.max_concurrency must be within [1, {MAX_CONCURRENCY}], "
                f"got {concurrency}"
            )
        mode = body.get("mode") or "ENABLE"
        if mode not in ("ENABLE", "DISABLE", "MODE_UNSPECIFIED"):
            raise invalid(f"recurring_run.mode: {mode!r} is not ENABLE or DISABLE")
        del trigger
        recurring: Resource = {
            "recurring_run_id": str(uuid.uuid4()),
            "display_name": body["display_name"],
            "description": body.get("description", ""),
            **source,
            "runtime_config": {"parameters": parameters, "pipeline_root": root},
            "service_account": body.get("service_account", ""),
            "max_concurrency": concurrency,
            "trigger": _int64_as_text(body["trigger"]),
            "mode": "DISABLE" if mode == "DISABLE" else "ENABLE",
            "created_at": triggers.rfc3339(created),
            "updated_at": triggers.rfc3339(created),
            "status": DISABLED if mode == "DISABLE" else ENABLED,
            "no_catchup": bool(body.get("no_catchup", False)),
            "namespace": experiment.get("namespace", ""),
            "experiment_id": experiment["experiment_id"],
            "_created": created,
            "_cursor": created,
        }
        self.store.insert(RECURRING, f"recurringruns/{recurring['recurring_run_id']}", recurring)
        return _public(recurring)

    def _recurring(self, recurring_run_id: str) -> Resource:
        return self._existing(
            f"recurringruns/{recurring_run_id}", f"RecurringRun {recurring_run_id}"
        )

    def get_recurring_run(self, request: KfpRequest) -> Resource:
        return _public(self._recurring(request.params["recurring_run_id"]))

    def list_recurring_runs(self, request: KfpRequest) -> Resource:
        namespace = request.query.pop("namespace", None)
        experiment_id = request.query.pop("experiment_id", None)
        items = [
            _public(r)
            for r in self.store.list(RECURRING)
            if _in_namespace(r, namespace)
            and (not experiment_id or r.get("experiment_id") == experiment_id)
        ]
        return listing.page(
            items, request.query, RECURRING_FIELDS, "recurring_runs", "recurring_run_id"
        )

    def delete_recurring_run(self, request: KfpRequest) -> Resource:
        recurring = self._recurring(request.params["recurring_run_id"])
        self.store.delete(f"recurringruns/{recurring['recurring_run_id']}")
        return {}

    def enable_recurring_run(self, request: KfpRequest) -> Resource:
        return self._switch(request, ENABLED, "ENABLE")

    def disable_recurring_run(self, request: KfpRequest) -> Resource:
        return self._switch(request, DISABLED, "DISABLE")

    def _switch(self, request: KfpRequest, status: str, mode: str) -> Resource:
        """`:enable` / `:disable`: the recurring run's status and mode, as the API reports them."""
        recurring = self._recurring(request.params["recurring_run_id"])
        self._set(
            f"recurringruns/{recurring['recurring_run_id']}",
            status=status,
            mode=mode,
            updated_at=_now(),
        )
        return {}

    # -- firing ----------------------------------------------------------------------------------
    def tick(self) -> list[str]:
        """Starts every run due at `clock()`; returns the IDs of the runs started."""
        started: list[str] = []
        with self._tick_lock:
            now = self.clock()
            for recurring in self.store.list(RECURRING):
                if recurring.get("status") == ENABLED:
                    started.extend(self._tick_one(recurring, now))
        return started

    def _tick_one(self, recurring: Resource, now: float) -> list[str]:
        trigger = triggers.parse(recurring["trigger"], recurring["_created"])
        cursor = float(recurring["_cursor"])
        due = trigger.due_between(cursor, now)
        if recurring.get("no_catchup") and len(due) > 1:
            due = due[-1:]  # only the latest missed time
        started: list[str] = []
        limit = int(recurring.get("max_concurrency") or 1)
        for moment in due:
            if self._active_runs(recurring["recurring_run_id"]) >= limit:
                break  # waits for a slot: the time stays due
            started.extend(self._fire(recurring, moment))
            cursor = moment
        if due and cursor != float(recurring["_cursor"]):
            name = f"recurringruns/{recurring['recurring_run_id']}"
            if self.store.find(name):
                self._set(name, _cursor=cursor)
        return started

    def _active_runs(self, recurring_run_id: str) -> int:
        return sum(
            1
            for run in self.store.list(RUNS)
            if run.get("recurring_run_id") == recurring_run_id
            and runs.state_of(self._job(run)) not in runs.TERMINAL
        )

    def _fire(self, recurring: Resource, moment: float) -> list[str]:
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(moment))
        body = {
            "display_name": f"{recurring['display_name']}-{stamp}",
            "description": recurring.get("description", ""),
            "experiment_id": recurring["experiment_id"],
            "runtime_config": recurring["runtime_config"],
            "service_account": recurring.get("service_account", ""),
        }
        for key in ("pipeline_spec", "pipeline_version_reference"):
            if recurring.get(key):
                body[key] = recurring[key]
        name = f"recurringruns/{recurring['recurring_run_id']}"
        try:
            run = self._start_run(
                body,
                "recurring_run",
                recurring["recurring_run_id"],
                triggers.rfc3339(moment),
                recurring.get("namespace", ""),
            )
        except KfpError as exc:  # recorded on the recurring run, as KFP records it
            log.warning("recurring run %s could not start a run: %s", name, exc.message)
            self._set(name, error={"code": exc.code, "message": exc.message, "details": []})
            return []
        return [run["run_id"]]


NOT_SERVED = (
    (
        "PATCH",
        "/pipelines/{pipeline_id}",
        "UpdatePipeline is not served locally: upload a new version instead",
    ),
    (
        "PATCH",
        "/pipelines/{pipeline_id}/versions/{version_id}",
        "UpdatePipelineVersion is not served locally: upload a new version instead",
    ),
    ("GET", "/auth", "AuthService: the local KFP API runs single-user, with no authorization"),
    (
        "POST",
        "/visualizations/{namespace}",
        "VisualizationService needs the KFP visualization server, which the local cloud lacks",
    ),
    ("POST", "/workflows", "ReportService is the KFP persistence agent's; nothing local reports"),
    (
        "POST",
        "/scheduledworkflows",
        "ReportService is the KFP persistence agent's; nothing local reports",
    ),
)


def _refuser(reason: str) -> Handler:
    def refuse(_: KfpRequest) -> Resource:
        raise KfpError(UNIMPLEMENTED, reason)

    return refuse


def _int64_as_text(trigger: Resource) -> Resource:
    """int64 fields answer as JSON strings, as protojson writes them."""
    periodic = trigger.get("periodic_schedule")
    if periodic and periodic.get("interval_second") is not None:
        return {
            **trigger,
            "periodic_schedule": {**periodic, "interval_second": str(periodic["interval_second"])},
        }
    return trigger


def _tags(query: dict[str, str]) -> Resource:
    text = query.get("tags")
    if not text:
        return {}
    try:
        tags = json.loads(text)
    except json.JSONDecodeError:
        raise invalid("tags: expected a JSON object of strings") from None
    if not isinstance(tags, dict):
        raise invalid("tags: expected a JSON object of strings")
    return {"tags": {str(k): str(v) for k, v in tags.items()}}


def _multipart(content_type: str, raw: bytes) -> dict[str, tuple[str, bytes]]:
    parser = email.parser.BytesParser(policy=email.policy.HTTP)
    message = parser.parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    files: dict[str, tuple[str, bytes]] = {}
    if not message.is_multipart():
        raise invalid("the multipart form could not be read")
    for part in message.iter_parts():  # type: ignore[attr-defined]
        name = part.get_param("name", header="content-disposition")
        if name:
            payload = part.get_payload(decode=True) or b""
            files[str(name)] = (part.get_filename() or str(name), payload)
    return files


def _time(key: str) -> Callable[[Resource], Any]:
    return lambda item: listing.epoch(item.get(key))


def _get(key: str) -> Callable[[Resource], Any]:
    return lambda item: item.get(key)


# The keys a filter and sort_by take, as the KFP API server maps them to its columns
# (backend/src/apiserver/model/*.go APIToModelFieldMap).
EXPERIMENT_FIELDS = {
    "experiment_id": _get("experiment_id"),
    "id": _get("experiment_id"),
    "display_name": _get("display_name"),
    "name": _get("display_name"),
    "description": _get("description"),
    "created_at": _time("created_at"),
    "storage_state": _get("storage_state"),
    "namespace": _get("namespace"),
    "last_run_created_at": _time("last_run_created_at"),
}
PIPELINE_FIELDS = {
    "pipeline_id": _get("pipeline_id"),
    "id": _get("pipeline_id"),
    "display_name": _get("display_name"),
    "name": _get("name"),
    "description": _get("description"),
    "created_at": _time("created_at"),
    "namespace": _get("namespace"),
}
VERSION_FIELDS = {
    "pipeline_version_id": _get("pipeline_version_id"),
    "id": _get("pipeline_version_id"),
    "display_name": _get("display_name"),
    "name": _get("name"),
    "description": _get("description"),
    "created_at": _time("created_at"),
    "pipeline_id": _get("pipeline_id"),
}
RUN_FIELDS = {
    "run_id": _get("run_id"),
    "id": _get("run_id"),
    "display_name": _get("display_name"),
    "name": _get("display_name"),
    "created_at": _time("created_at"),
    "finished_at": _time("finished_at"),
    "scheduled_at": _time("scheduled_at"),
    "description": _get("description"),
    "storage_state": _get("storage_state"),
    "state": _get("state"),
    "experiment_id": _get("experiment_id"),
    "recurring_run_id": _get("recurring_run_id"),
    "pipeline_version_id": _get("pipeline_version_id"),
}
RECURRING_FIELDS = {
    "recurring_run_id": _get("recurring_run_id"),
    "id": _get("recurring_run_id"),
    "display_name": _get("display_name"),
    "name": _get("display_name"),
    "description": _get("description"),
    "created_at": _time("created_at"),
    "updated_at": _time("updated_at"),
    "status": _get("status"),
    "experiment_id": _get("experiment_id"),
    "namespace": _get("namespace"),
    "pipeline_version_id": _get("pipeline_version_id"),
}
