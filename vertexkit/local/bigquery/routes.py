"""The BigQuery v2 REST API (`/bigquery/v2`, `/upload/bigquery/v2`) as google-cloud-bigquery 3.x
calls it: datasets, tables, tabledata.list, jobs (insert/get/list/cancel/delete, query,
getQueryResults) and the multipart and resumable uploads of load jobs; routines, models, row
access policies, table IAM and projects are modules of their own, registered here."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import duckdb
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from vertexkit.local import partial_response
from vertexkit.local.bigquery.dataset_resource import (
    OUTPUT_ONLY,
    creation_defaults,
    dataset_resource,
    list_entry,
)
from vertexkit.local.bigquery.external import check_config
from vertexkit.local.bigquery.jobs import JobRunner
from vertexkit.local.bigquery.ml_models import Models
from vertexkit.local.bigquery.models import RESULTS_DATASET, Warehouse, _descriptions
from vertexkit.local.bigquery.partitioning import check_options, options_of
from vertexkit.local.bigquery.projects_api import Projects
from vertexkit.local.bigquery.responses import (
    LOCATION,
    encode_rows,
    field_to_duckdb,
    quote,
)
from vertexkit.local.bigquery.routines_api import Routines
from vertexkit.local.bigquery.row_access import RowAccessPolicies
from vertexkit.local.bigquery.seed import seed_public_data
from vertexkit.local.bigquery.sql import QueryError, TableName, translate
from vertexkit.local.bigquery.streaming import (
    RowError,
    StreamingInserts,
    check_request,
    convert_row,
    row_error,
)
from vertexkit.local.bigquery.table_iam import TableIam
from vertexkit.local.bigquery.table_resource import table_resource
from vertexkit.local.bigquery.validation import (
    validate_dataset,
    validate_job,
    validate_query_request,
    validate_table,
)
from vertexkit.local.bigquery.view_update import redefine, view_descriptions
from vertexkit.local.errors import ApiError, bad_request, not_found
from vertexkit.local.lifecycle import Lifecycle

API = "/bigquery/v2/projects/{project}"
UPLOAD = "/upload/bigquery/v2/projects/{project}/jobs"
DEFAULT_PAGE_CELLS = 1_000_000  # rows per page = this / columns, like BigQuery's ~10 MB pages
STATUS_BY_REASON = {"notFound": 404, "duplicate": 409}
READ_ONLY_PROJECTS = ("bigquery-public-data",)
DEFAULT_WAIT_MS = 10_000  # jobs.query / getQueryResults wait this long unless timeoutMs says
STOP_WAIT_S = 10.0  # how long cancel and shutdown wait for an interrupted job to end

Handler = Callable[..., Any]


def _json(body: Any, selection: partial_response.Selection | None = None) -> Response:
    """A JSON answer holding what `selection` (the request's `fields`) selects of `body`."""
    return Response(
        json.dumps(partial_response.select(body, selection), separators=(",", ":")),
        media_type="application/json",
    )


def api_error(error: QueryError) -> ApiError:
    return ApiError(STATUS_BY_REASON.get(error.reason, 400), error.message, reason=error.reason)


class BigQueryService(Lifecycle):
    def __init__(
        self,
        home: Path,
        storage: Any,
        project: str = "local-project",
        clock: Callable[[], float] = time.time,
        warm_pandas: bool = True,
    ) -> None:
        """`warm_pandas`: import pandas in `warm` (see there), for a cloud whose run's tasks
        are about to run; without them, no request may need it."""
        self.home = home
        self._warm_pandas = warm_pandas
        self.project = project
        home.mkdir(parents=True, exist_ok=True)
        self.storage = storage
        self.warehouse = Warehouse(home, clock)
        self.jobs = JobRunner(self.warehouse, storage)
        self.streaming = StreamingInserts(clock)
        self.uploads: dict[str, dict[str, Any]] = {}
        self.uploads_lock = threading.Lock()
        seed_public_data(self.warehouse)

    def warm(self) -> None:
        """pandas, which pyarrow imports at its first `pa.array` (its pandas shim probes for
        it): the first export's FARM_FINGERPRINT split and the first job record make one. Its
        0.2 s of CPU are better spent here, while the cloud waits for the run's first task, than
        in that request."""
        if self._warm_pandas:
            import pandas  # noqa: F401

    def close(self) -> None:
        self.jobs.running.stop_all(STOP_WAIT_S)
        self.jobs.threads.close()
        self.warehouse.close()

    def routes(self) -> list[BaseRoute]:
        table = API + "/datasets/{dataset}/tables/{table}"
        return [
            # jobs.query first: the call every query makes, matched before 40-odd others
            self._route(API + "/queries", self.query, "POST"),
            self._route(API + "/queries/{job_id}", self.get_query_results, "GET"),
            self._route(API + "/datasets", self.list_datasets, "GET"),
            self._route(API + "/datasets", self.insert_dataset, "POST"),
            self._route(API + "/datasets/{dataset}", self.get_dataset, "GET"),
            self._route(API + "/datasets/{dataset}", self.patch_dataset, "PATCH", "PUT"),
            self._route(API + "/datasets/{dataset}", self.delete_dataset, "DELETE"),
            self._route(API + "/datasets/{dataset}/tables", self.list_tables, "GET"),
            self._route(API + "/datasets/{dataset}/tables", self.insert_table, "POST"),
            self._route(table, self.get_table, "GET"),
            self._route(table, self.patch_table, "PATCH", "PUT"),
            self._route(table, self.delete_table, "DELETE"),
            self._route(table + "/data", self.list_table_data, "GET"),
            self._route(table + "/insertAll", self.insert_all, "POST"),
            self._route(API + "/jobs", self.insert_job, "POST"),
            self._route(API + "/jobs", self.list_jobs, "GET"),
            self._route(API + "/jobs/{job_id}", self.get_job, "GET"),
            self._route(API + "/jobs/{job_id}/cancel", self.cancel_job, "POST"),
            self._route(API + "/jobs/{job_id}/delete", self.delete_job, "DELETE"),
            Route(UPLOAD, self.upload_start, methods=["POST"]),
            Route(UPLOAD, self.upload_chunk, methods=["PUT"]),
            *self._resource_routes(),
        ]

    def _resource_routes(self) -> list[BaseRoute]:
        """The resources served by modules of their own: routines, models, row access
        policies, table IAM, projects and datasets.undelete."""
        services = (Routines, Models, RowAccessPolicies, TableIam, Projects)
        return [route for service in services for route in service(self).routes()]

    def _route(self, path: str, handler: Handler, *methods: str) -> Route:
        """Reads the JSON body, runs the handler in a worker thread, answers JSON: only what
        `fields` selects (`vertexkit.local.partial_response`), read before the handler runs
        (a selector that does not parse is a 400 and nothing is done) and never passed to it."""

        async def endpoint(request: Request) -> Response:
            selection = partial_response.requested(request.query_params)
            query = partial_response.without_fields(request.query_params)
            raw = await request.body()
            try:
                body = json.loads(raw) if raw else {}
            except json.JSONDecodeError as error:
                raise bad_request(f"Invalid JSON payload: {error}") from error
            try:
                result = await run_in_threadpool(handler, request.path_params, query, body)
            except QueryError as error:
                raise api_error(error) from error
            except duckdb.TransactionException as error:  # met a concurrent writer: retryable
                raise ApiError(
                    503, f"Concurrent change, retry the request: {error}", reason="backendError"
                ) from error
            return result if isinstance(result, Response) else _json(result, selection)

        endpoint_typed: Callable[[Request], Awaitable[Response]] = endpoint
        return Route(path, endpoint_typed, methods=list(methods))

    # -- datasets --------------------------------------------------------------------------------
    def list_datasets(self, params: dict, query: dict, _: dict) -> dict:
        project = params["project"]
        # `all` is a boolean query parameter: the client sends "True"
        hidden = str(query.get("all", "")).lower() == "true"
        names = self.warehouse.list_datasets(project, hidden)
        page, token = _page_of(names, query)
        cur = self.warehouse.cursor()
        try:
            items = [
                list_entry(project, name, self.warehouse.dataset_body(cur, project, name))
                for name in page
            ]
        finally:
            cur.close()
        return _with_token({"kind": "bigquery#datasetList", "datasets": items}, token)

    def insert_dataset(self, params: dict, _: dict, body: dict) -> dict:
        project = params["project"]
        validate_dataset(body, creating=True)
        reference = body["datasetReference"]
        dataset = reference["datasetId"]
        if reference.get("projectId") not in (None, project):
            raise bad_request("datasetReference.projectId does not match the URL's project")
        self._check_writable(project)
        stored = self.warehouse.create_dataset(project, dataset, creation_defaults(body))
        return dataset_resource(project, dataset, stored)

    def get_dataset(self, params: dict, _: dict, __: dict) -> dict:
        project, dataset = params["project"], params["dataset"]
        body = self.warehouse.dataset_body(self.warehouse.cursor(), project, dataset)
        return dataset_resource(project, dataset, body)

    def patch_dataset(self, params: dict, _: dict, body: dict) -> dict:
        project, dataset = params["project"], params["dataset"]
        validate_dataset(body, creating=False)
        self._check_writable(project)
        changes = {k: v for k, v in body.items() if k not in OUTPUT_ONLY}
        stored = self.warehouse.patch_dataset(project, dataset, changes)
        return dataset_resource(project, dataset, stored)

    def delete_dataset(self, params: dict, query: dict, _: dict) -> Response:
        self._check_writable(params["project"])
        self.warehouse.delete_dataset(
            params["project"], params["dataset"], query.get("deleteContents") == "true"
        )
        return Response(status_code=204)

    # -- tables ----------------------------------------------------------------------------------
    def _table_resource(self, name: TableName) -> dict:
        return table_resource(self.warehouse, name)

    def list_tables(self, params: dict, query: dict, _: dict) -> dict:
        project, dataset = params["project"], params["dataset"]
        tables = self.warehouse.list_tables(project, dataset)
        page, token = _page_of(tables, query)
        items = [
            {
                "kind": "bigquery#table",
                "id": f"{project}:{dataset}.{table}",
                "tableReference": {"projectId": project, "datasetId": dataset, "tableId": table},
                "type": kind,
            }
            for table, kind in page
        ]
        body = {"kind": "bigquery#tableList", "tables": items, "totalItems": len(tables)}
        return _with_token(body, token)

    def insert_table(self, params: dict, _: dict, body: dict) -> dict:
        project, dataset = params["project"], params["dataset"]
        validate_table(body, creating=True)
        reference = body["tableReference"]
        self._check_writable(project)
        name = TableName(project, dataset, reference["tableId"])
        fields = (body.get("schema") or {}).get("fields") or []
        view = body.get("view")
        if body.get("externalDataConfiguration"):
            return self._insert_external(name, body)
        if not fields and not view:
            raise bad_request(
                "schema.fields: the local BigQuery needs a schema (or a view query) to create "
                "a table"
            )
        extras = {k: body[k] for k in ("description", "labels", "friendlyName") if k in body}
        options = options_of(body)
        if options and view:
            raise bad_request("A view cannot be partitioned or clustered")
        check_options(options, fields)
        extras.update(options)
        with self.warehouse.transaction(name) as cur:
            if not self.warehouse.dataset_exists(cur, project, dataset):
                raise not_found(f"Not found: Dataset {project}:{dataset}")
            if self.warehouse.table_kind(cur, name):
                raise ApiError(409, f"Already Exists: Table {name.bigquery_id}")
            if view:
                if view.get("useLegacySql") is True:
                    raise bad_request("view.useLegacySql: only GoogleSQL views are supported")
                translation = translate(view.get("query") or "", project)
                cur.execute(f"CREATE VIEW {name.sql} AS {translation.sql}")
                extras["view"] = {"query": view.get("query"), "useLegacySql": False}
                if fields:  # descriptions of the view's columns (types must match)
                    current = self.warehouse.table_schema(cur, name)
                    extras["schema"] = view_descriptions(name, current, fields)
                self.warehouse.touch_table(cur, name, extras)
            else:
                self.warehouse.create_table(cur, name, fields, replace=False)
                self.warehouse.touch_table(cur, name, extras)
        return self._table_resource(name)

    def _insert_external(self, name: TableName, body: dict) -> dict:
        """A table over gs:// files (external.py): filled from them, read again when they change."""
        check_config(body)  # before anything is created
        extras = {k: body[k] for k in ("description", "labels", "friendlyName") if k in body}
        with self.warehouse.transaction(name) as cur:
            if not self.warehouse.dataset_exists(cur, name.project, name.dataset):
                raise not_found(f"Not found: Dataset {name.project}:{name.dataset}")
            if self.warehouse.table_kind(cur, name):
                raise ApiError(409, f"Already Exists: Table {name.bigquery_id}")
            self.jobs.external.create(cur, name, body, extras)
        return self._table_resource(name)

    def get_table(self, params: dict, _: dict, __: dict) -> dict:
        return self._table_resource(_table(params))

    def patch_table(self, params: dict, _: dict, body: dict) -> dict:
        name = _table(params)
        validate_table(body, creating=False)
        self._check_writable(name.project)
        with self.warehouse.transaction(name) as cur:
            kind = self.warehouse.require_table(cur, name)
            fields = (body.get("schema") or {}).get("fields")
            extras: dict[str, Any] = {
                k: body[k]
                for k in ("description", "labels", "friendlyName", "expirationTime")
                if k in body
            }
            if kind == "VIEW":
                extras.update(self._view_changes(cur, name, body, fields))
            elif fields is not None:
                self._add_columns(cur, name, fields)
                extras["schema"] = _descriptions(fields)
            self.warehouse.touch_table(cur, name, extras)
        return self._table_resource(name)

    def _view_changes(
        self, cur: Any, name: TableName, body: dict, fields: list[dict] | None
    ) -> dict[str, Any]:
        changes: dict[str, Any] = {}
        view = body.get("view") or {}
        stored = self.warehouse.table_extras(cur, name).get("view") or {}
        if view.get("query") and view.get("query") != stored.get("query"):
            changes["view"] = redefine(cur, name, view)
        if fields is not None:
            current = self.warehouse.table_schema(cur, name)
            changes["schema"] = view_descriptions(name, current, fields)
        return changes

    def _add_columns(self, cur: Any, name: TableName, fields: list[dict]) -> None:
        """Schema patches may only add NULLABLE/REPEATED columns, as on BigQuery."""
        current = {f["name"].lower() for f in self.warehouse.table_schema(cur, name)}
        given = {f.get("name", "").lower() for f in fields}
        missing = current - given
        if missing:
            raise bad_request(
                f"Provided Schema does not match Table {name.bigquery_id}. Field "
                f"{sorted(missing)[0]} is missing in new schema"
            )
        for field in fields:
            if field["name"].lower() in current:
                continue
            if str(field.get("mode", "")).upper() == "REQUIRED":
                raise bad_request(f"Field {field['name']}: a new column cannot be REQUIRED")
            cur.execute(
                f"ALTER TABLE {name.sql} ADD COLUMN {quote(field['name'])} {field_to_duckdb(field)}"
            )

    def delete_table(self, params: dict, _: dict, __: dict) -> Response:
        name = _table(params)
        self._check_writable(name.project)
        with self.warehouse.transaction(name) as cur:
            self.warehouse.drop_table(cur, name)
        return Response(status_code=204)

    def list_table_data(self, params: dict, query: dict, _: dict) -> dict:
        name = _table(params)
        cur = self.warehouse.cursor()
        try:
            kind = self.warehouse.require_table(cur, name)
            if kind == "VIEW":
                raise bad_request(f"Cannot list a table of type VIEW: {name.bigquery_id}")
            fields = self.warehouse.table_schema(cur, name)
            total = self.warehouse.count_rows(cur, name)
        finally:
            cur.close()
        selected = [s for s in (query.get("selectedFields") or "").split(",") if s]
        if selected:
            by_name = {f["name"].lower(): f for f in fields}
            unknown = [s for s in selected if s.lower() not in by_name]
            if unknown:
                raise bad_request(f"selectedFields: no such field: {unknown[0]}")
            fields = [by_name[s.lower()] for s in selected]
        body = self._rows_page(name, fields, total, query, selected or None)
        return {"kind": "bigquery#tableDataList", "etag": "", **body}

    def insert_all(self, params: dict, _: dict, body: dict) -> dict:
        """tabledata.insertAll: streaming rows, checked one by one (see streaming.py)."""
        name = _table(params)
        self._check_writable(name.project)
        rows = check_request(body)
        answer: dict[str, Any] = {"kind": "bigquery#tableDataInsertAllResponse"}
        with self.warehouse.transaction(name) as cur:
            if self.warehouse.require_table(cur, name) == "VIEW":
                raise bad_request(f"Cannot insert rows into a view: {name.bigquery_id}")
            fields = self.warehouse.table_schema(cur, name)
            good, errors = _convert_rows(rows, fields, bool(body.get("ignoreUnknownValues")))
            if errors:
                answer["insertErrors"] = errors
                if not body.get("skipInvalidRows"):
                    bad = {error["index"] for error in errors}
                    stopped = [row_error(i, "stopped") for i in range(len(rows)) if i not in bad]
                    answer["insertErrors"] = sorted(errors + stopped, key=lambda e: e["index"])
                    return answer
            ids = [rows[index].get("insertId") for index, _ in good]
            new = self.streaming.unseen(name, ids)
            values = [row for (_, row), fresh in zip(good, new, strict=True) if fresh]
            if values:
                columns = [field["name"] for field in fields]
                holes = ", ".join("?" for _ in columns)
                names = ", ".join(quote(column) for column in columns)
                cur.executemany(
                    f"INSERT INTO {name.sql} ({names}) VALUES ({holes})",
                    [[row[column] for column in columns] for row in values],
                )
                self.warehouse.touch_table(cur, name)
            self.streaming.remember(name, ids)
        return answer

    def _rows_page(
        self,
        name: TableName,
        fields: list[dict],
        total: int,
        query: dict,
        columns: list[str] | None = None,
    ) -> dict:
        offset = _offset(query)
        default = max(100, DEFAULT_PAGE_CELLS // max(1, len(fields)))
        limit = _int_param(query, "maxResults", default)
        body: dict[str, Any] = {"totalRows": str(total)}
        if limit > 0 and offset < total:
            page = self.warehouse.read_page(name, offset, limit, columns)
            if page.num_rows:
                body["rows"] = encode_rows(page, fields)  # an empty page omits "rows"
        if offset + limit < total and limit > 0:
            body["pageToken"] = str(offset + limit)
        return body

    # -- jobs ------------------------------------------------------------------------------------
    def insert_job(self, params: dict, _: dict, body: dict) -> dict:
        return self._run_job(params["project"], body, None)

    def _run_job(
        self,
        project: str,
        body: dict,
        upload: Path | None,
        wait_s: float | None = None,
        fresh: bool = False,
    ) -> dict:
        validate_job(body)
        self.warehouse.expire_if_due()
        reference = body.setdefault("jobReference", {})
        reference.setdefault("projectId", project)
        # An id made here is a fresh uuid4: no stored job can have it (a lookup per query).
        fresh = fresh or "jobId" not in reference
        if "jobId" not in reference:
            reference["jobId"] = f"job_{uuid.uuid4().hex}"
        reference["location"] = LOCATION
        if not fresh and self._job_exists(project, reference["jobId"]):
            raise ApiError(409, f"Already Exists: Job {project}:{LOCATION}.{reference['jobId']}")
        self._check_job_targets(project, body.get("configuration") or {})
        body["kind"] = "bigquery#job"
        # BigQuery's own link (GCPC's BigqueryQueryJobOp polls it; the client hook maps it here).
        body["selfLink"] = (
            f"https://bigquery.googleapis.com/bigquery/v2/projects/{project}/jobs/"
            f"{reference['jobId']}?location={LOCATION}"
        )
        return self.jobs.run(project, body, upload, wait_s)

    def _job_exists(self, project: str, job_id: str) -> bool:
        running = self.jobs.running.get(project, job_id) is not None
        return running or self.warehouse.job_exists(project, job_id)

    def _check_job_targets(self, project: str, config: dict) -> None:
        for kind in ("query", "load", "copy"):
            destination = (config.get(kind) or {}).get("destinationTable") or {}
            self._check_writable(destination.get("projectId") or project)

    def _check_writable(self, project: str) -> None:
        if project in READ_ONLY_PROJECTS:
            raise ApiError(
                403,
                f"Access Denied: Project {project}: the public datasets are read-only",
                reason="accessDenied",
            )

    def _job(self, params: dict) -> dict:
        run = self.jobs.running.get(params["project"], params["job_id"])
        job = run.resource() if run else self.warehouse.get_job(params["project"], params["job_id"])
        if job is None:
            raise not_found(f"Not found: Job {params['project']}:{LOCATION}.{params['job_id']}")
        return job

    def get_job(self, params: dict, _: dict, __: dict) -> dict:
        return self._job(params)

    def cancel_job(self, params: dict, _: dict, __: dict) -> dict:
        """Interrupts a running job (it ends DONE, reason "stopped"); a finished one is
        answered as it is, as BigQuery does."""
        self._job(params)
        self.jobs.cancel(params["project"], params["job_id"], STOP_WAIT_S)
        return {"kind": "bigquery#jobCancelResponse", "job": self._job(params)}

    def delete_job(self, params: dict, _: dict, __: dict) -> Response:
        if self._job(params)["status"]["state"] != "DONE":
            raise bad_request(f"Job {params['job_id']} is still running; cancel it first")
        self.warehouse.delete_job(params["project"], params["job_id"])
        return Response(status_code=204)

    def list_jobs(self, params: dict, query: dict, _: dict) -> dict:
        self.warehouse.expire_if_due()
        running = [run.resource() for run in self.jobs.running.of_project(params["project"])]
        jobs = running + self.warehouse.list_jobs(params["project"])
        # BigQuery lists top-level jobs, or only the children of `parentJobId`
        parent = query.get("parentJobId")
        jobs = [job for job in jobs if job["statistics"].get("parentJobId") == parent]
        states = {s.upper() for s in _list_param(query, "stateFilter")}
        if states:
            jobs = [job for job in jobs if job["status"]["state"] in states]
        page, token = _page_of(jobs, query)
        items = [
            {
                "id": job["id"],
                "kind": "bigquery#job",
                "jobReference": job["jobReference"],
                "state": job["status"]["state"],
                "status": job["status"],
                "configuration": job["configuration"],
                "statistics": job["statistics"],
                **(
                    {"errorResult": job["status"]["errorResult"]}
                    if "errorResult" in job["status"]
                    else {}
                ),
            }
            for job in page
        ]
        return _with_token({"kind": "bigquery#jobList", "jobs": items}, token)

    def query(self, params: dict, query: dict, body: dict) -> dict:
        """jobs.query: runs the query as a job and answers its first page of results, or
        `jobComplete: false` once `timeoutMs` has passed (the job runs on)."""
        validate_query_request(body)
        project = params["project"]
        config = {
            key: body[key]
            for key in (
                "query",
                "useLegacySql",
                "defaultDataset",
                "queryParameters",
                "parameterMode",
                "maximumBytesBilled",
                "connectionProperties",
            )
            if key in body
        }
        wait_ms = int(body.get("timeoutMs", DEFAULT_WAIT_MS))
        if "useLegacySql" not in config:
            config["useLegacySql"] = True  # jobs.query's documented default
        job_body = {
            "jobReference": {"jobId": f"job_{uuid.uuid4().hex}"},
            "configuration": {"query": config},
        }
        if body.get("jobTimeoutMs"):
            job_body["configuration"]["jobTimeoutMs"] = body["jobTimeoutMs"]
        if body.get("labels"):  # QueryRequest.labels: the job's, JobConfiguration.labels
            job_body["configuration"]["labels"] = body["labels"]
        if body.get("requestId"):
            job_body["jobReference"]["jobId"] = f"job_{_safe_id(body['requestId'])}"
        fresh = not body.get("requestId")
        job = self._run_job(project, job_body, None, wait_ms / 1000, fresh)
        page_query = {"maxResults": body["maxResults"]} if "maxResults" in body else {}
        response = self._query_results(job, page_query)
        response["kind"] = "bigquery#queryResponse"
        response["queryId"] = job["jobReference"]["jobId"]
        return response

    def get_query_results(self, params: dict, query: dict, _: dict) -> dict:
        self.warehouse.expire_if_due()
        run = self.jobs.running.get(params["project"], params["job_id"])
        if run is not None:
            run.done.wait(_int_param(query, "timeoutMs", DEFAULT_WAIT_MS) / 1000)
        job = self._job(params)
        if job["configuration"].get("jobType") != "QUERY":
            raise bad_request(f"Job {params['job_id']} is not a query job")
        response = self._query_results(job, query)
        response["kind"] = "bigquery#getQueryResultsResponse"
        return response

    def _query_results(self, job: dict, query: dict) -> dict:
        if job["status"]["state"] != "DONE":  # the client polls getQueryResults, as on BigQuery
            return {"jobReference": job["jobReference"], "jobComplete": False}
        error = job["status"].get("errorResult")
        if error:
            reason = error.get("reason", "invalidQuery")
            raise ApiError(STATUS_BY_REASON.get(reason, 400), error["message"], reason=reason)
        stats = job["statistics"].get("query", {})
        body: dict[str, Any] = {
            "jobReference": job["jobReference"],
            "jobComplete": True,
            "totalBytesProcessed": "0",
            "cacheHit": False,
        }
        if "numDmlAffectedRows" in stats:
            body["numDmlAffectedRows"] = stats["numDmlAffectedRows"]
        if stats.get("statementType") != "SELECT" and "schema" not in stats:
            body["totalRows"] = "0"  # DML, DDL, a script whose last statement is not a query
            return body
        destination = job["configuration"]["query"]["destinationTable"]
        name = TableName(destination["projectId"], destination["datasetId"], destination["tableId"])
        recorded = name.dataset == RESULTS_DATASET and "schema" in stats
        if recorded:  # an anonymous result table never changes: the job recorded its shape
            fields, total = stats["schema"]["fields"], int(stats["totalRows"])
        else:
            fields, total = self._result_table(name)
        body["schema"] = {"fields": fields}
        try:
            body.update(self._rows_page(name, fields, total, query))
        except duckdb.CatalogException:
            raise _results_expired(name) from None
        if recorded and "rows" not in body and self.warehouse.small_result(name) is None:
            self._result_table(name)  # no page was read to notice an expired table
        return body

    def _result_table(self, name: TableName) -> tuple[list[dict], int]:
        cur = self.warehouse.cursor()
        try:
            if self.warehouse.table_kind(cur, name) is None:
                raise _results_expired(name)
            return self.warehouse.table_schema(cur, name), self.warehouse.count_rows(cur, name)
        finally:
            cur.close()

    # -- uploads (load jobs with data in the request) ----------------------------------------------
    async def upload_start(self, request: Request) -> Response:
        selection = partial_response.requested(request.query_params)  # before the upload
        project = request.path_params["project"]
        upload_type = request.query_params.get("uploadType")
        raw = await request.body()
        if upload_type == "multipart":
            metadata, data = _split_multipart(request.headers.get("content-type", ""), raw)
            path = self.warehouse.staging_path()
            path.write_bytes(data)
            return await self._run_upload_job(project, metadata, path, selection)
        if upload_type == "resumable":
            metadata = json.loads(raw) if raw else {}
            upload_id = uuid.uuid4().hex
            path = self.warehouse.staging_path()
            path.write_bytes(b"")
            with self.uploads_lock:
                self.uploads[upload_id] = {"project": project, "job": metadata, "path": path}
            location = f"{request.url.replace(query='')}?uploadType=resumable&upload_id={upload_id}"
            return Response(status_code=200, headers={"Location": location})
        raise bad_request("uploadType must be multipart or resumable")

    async def upload_chunk(self, request: Request) -> Response:
        selection = partial_response.requested(request.query_params)  # before the chunk
        upload_id = request.query_params.get("upload_id", "")
        with self.uploads_lock:
            session = self.uploads.get(upload_id)
        if session is None:
            raise not_found(f"No resumable upload session {upload_id!r}")
        data = await request.body()
        path: Path = session["path"]
        start, total = _content_range(request.headers.get("content-range", ""), len(data))
        size = path.stat().st_size
        if start is not None and start != size:
            return Response(status_code=308, headers=_range_header(size))
        with path.open("ab") as handle:
            handle.write(data)
        size += len(data)
        if total is None or size < total:
            return Response(status_code=308, headers=_range_header(size))
        with self.uploads_lock:
            self.uploads.pop(upload_id, None)
        return await self._run_upload_job(session["project"], session["job"], path, selection)

    async def _run_upload_job(
        self,
        project: str,
        metadata: dict,
        path: Path,
        selection: partial_response.Selection | None,
    ) -> Response:
        if not isinstance(metadata, dict) or "load" not in (metadata.get("configuration") or {}):
            path.unlink(missing_ok=True)
            raise bad_request("An upload must carry a load job (configuration.load)")
        try:
            job = await run_in_threadpool(self._run_job, project, metadata, path)
        except QueryError as error:
            path.unlink(missing_ok=True)
            raise api_error(error) from error
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return _json(job, selection)


# -- helpers ---------------------------------------------------------------------------------
def _convert_rows(
    rows: list[dict], fields: list[dict], ignore_unknown: bool
) -> tuple[list[tuple[int, dict]], list[dict]]:
    good, errors = [], []
    for index, row in enumerate(rows):
        try:
            good.append((index, convert_row(row["json"], fields, ignore_unknown)))
        except RowError as error:
            errors.append(row_error(index, "invalid", error.location, error.message))
    return good, errors


def _results_expired(name: TableName) -> ApiError:
    return not_found(f"Not found: Table {name.bigquery_id} (query results expired)")


def _table(params: dict) -> TableName:
    return TableName(params["project"], params["dataset"], params["table"])


def _reference(name: TableName) -> dict:
    return {"projectId": name.project, "datasetId": name.dataset, "tableId": name.table}


def _safe_id(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9_\-]", "_", value)[:200]


def _int_param(query: dict, key: str, default: int) -> int:
    raw = query.get(key)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError) as error:
        raise bad_request(f"{key} must be a non-negative integer, got {raw!r}") from error
    if value < 0:
        raise bad_request(f"{key} must be a non-negative integer, got {raw!r}")
    return value


def _list_param(query: dict, key: str) -> list[str]:
    value = query.get(key)
    return [value] if isinstance(value, str) and value else []


def _offset(query: dict) -> int:
    if query.get("pageToken"):
        return _int_param({"pageToken": query["pageToken"]}, "pageToken", 0)
    return _int_param(query, "startIndex", 0)


def _page_of(items: list[Any], query: dict) -> tuple[list[Any], str | None]:
    offset = _offset(query)
    limit = _int_param(query, "maxResults", 1000) or 1000
    page = items[offset : offset + limit]
    return page, str(offset + limit) if offset + limit < len(items) else None


def _with_token(body: dict, token: str | None) -> dict:
    if token:
        body["nextPageToken"] = token
    return body


def _split_multipart(content_type: str, raw: bytes) -> tuple[dict, bytes]:
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    if not match:
        raise bad_request("multipart upload without a boundary")
    delimiter = b"--" + match.group(1).encode()
    parts = [p for p in raw.split(delimiter) if p.strip() not in (b"", b"--")]
    if len(parts) < 2:
        raise bad_request("multipart upload needs a metadata part and a media part")

    def content(part: bytes) -> bytes:
        _, _, payload = part.partition(b"\r\n\r\n")
        return payload[:-2] if payload.endswith(b"\r\n") else payload

    try:
        metadata = json.loads(content(parts[0]))
    except json.JSONDecodeError as error:
        raise bad_request(f"multipart metadata is not JSON: {error}") from error
    return metadata, content(parts[1])


def _content_range(header: str, length: int) -> tuple[int | None, int | None]:
    """`bytes 0-99/200`, `bytes */200`, `bytes 0-99/*` -> (start, total)."""
    match = re.match(r"bytes (\*|(\d+)-(\d+))/(\*|\d+)", header.strip())
    if not match:
        return None, length if not header else None
    start = int(match.group(2)) if match.group(2) else None
    total = None if match.group(4) == "*" else int(match.group(4))
    return start, total


def _range_header(size: int) -> dict[str, str]:
    return {"Range": f"bytes=0-{size - 1}"} if size else {}


__all__ = ["RESULTS_DATASET", "BigQueryService"]
