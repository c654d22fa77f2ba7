"""Query, load, extract and copy jobs. Each runs in its own thread and transaction (running.py)
and is stored DONE, with `errorResult` when it failed, timed out or was cancelled (BigQuery's job
model: the insert succeeds, the job fails).
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import decimal
import fnmatch
import os
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import duckdb

from vertexkit.local.bigquery import (
    billing,
    bind_refusal,
    engine_call,
    geography,
    googlesql,
    information_schema,
    intervals,
    partitioning,
    routine_ddl,
    routines,
    script_text,
    scripting,
)
from vertexkit.local.bigquery.external import ExternalTables
from vertexkit.local.bigquery.models import (
    RESULTS_DATASET,
    Duplicate,
    NotFound,
    Warehouse,
    dataset_not_found,
    table_not_found,
)
from vertexkit.local.bigquery.recorder import (
    SMALL_BYTES,
    SMALL_ROWS,
    SmallResult,
    null_element_column,
)
from vertexkit.local.bigquery.responses import (
    LOCATION,
    duckdb_to_field,
    field_to_duckdb,
    quote,
)
from vertexkit.local.bigquery.running import (
    JobThreads,
    RunningJob,
    RunningJobs,
    cancelled_error,
)
from vertexkit.local.bigquery.sql import QueryError, TableName, quote_literal, translate
from vertexkit.local.errors import ApiError

WRITE_DISPOSITIONS = ("WRITE_TRUNCATE", "WRITE_APPEND", "WRITE_EMPTY")
CREATE_DISPOSITIONS = ("CREATE_IF_NEEDED", "CREATE_NEVER")
LOAD_FORMATS = ("CSV", "NEWLINE_DELIMITED_JSON", "PARQUET")
EXTRACT_FORMATS = {"CSV": "csv", "NEWLINE_DELIMITED_JSON": "json", "PARQUET": "parquet"}
EXTRACT_COMPRESSIONS = {
    "CSV": ("NONE", "GZIP"),
    "NEWLINE_DELIMITED_JSON": ("NONE", "GZIP"),
    "PARQUET": ("NONE", "SNAPPY", "GZIP", "ZSTD"),
}
SHARD_BYTES = 1 << 30  # BigQuery writes at most 1 GB per exported file


class JobRunner:
    def __init__(self, warehouse: Warehouse, storage: Any) -> None:
        self.warehouse = warehouse
        self.storage = storage
        self.running = RunningJobs()
        self.threads = JobThreads()
        self.external = ExternalTables(self)

    # -- entry point --------------------------------------------------------------------------
    def run(
        self,
        project: str,
        job: dict[str, Any],
        upload: Path | None = None,
        wait_s: float | None = None,
    ) -> dict:
        """Starts a job and answers its resource once DONE, or RUNNING after `wait_s` seconds.
        Bad configuration raises before anything is stored."""
        config = job.setdefault("configuration", {})
        kind = next((k for k in ("query", "load", "extract", "copy") if k in config), None)
        if kind is None:
            raise QueryError(
                "Job configuration needs one of: query, load, extract, copy", "invalid"
            )
        config["jobType"] = kind.upper()
        _validate_dispositions(config[kind])
        if config.get("dryRun"):
            return self._dry_run(project, kind, config, job)
        run = self._start(project, kind, job, upload)
        run.done.wait(wait_s)
        return run.resource()

    def _start(self, project: str, kind: str, job: dict, upload: Path | None) -> RunningJob:
        now_ms = str(int(time.time() * 1000))
        job["status"] = {"state": "RUNNING"}
        job["statistics"] = {"creationTime": now_ms, "startTime": now_ms}
        job["id"] = f"{project}:{LOCATION}.{job['jobReference']['jobId']}"
        run = RunningJob(project, job, self.warehouse.cursor(), self.warehouse.table_locks)
        self.running.add(run)
        timeout_ms = job["configuration"].get("jobTimeoutMs")
        if timeout_ms:
            run.stop_after(int(timeout_ms))
        self.threads.run(lambda: self._execute(run, kind, upload), f"bq-{run.job_id}")
        return run

    def cancel(self, project: str, job_id: str, wait_s: float) -> None:
        run = self.running.get(project, job_id)
        if run is not None:
            run.stop(cancelled_error())
            run.done.wait(wait_s)

    def _execute(self, run: RunningJob, kind: str, upload: Path | None) -> None:
        threading.current_thread().name = f"bq-{run.job_id}"  # a reused thread: this job's now
        try:
            statistics = getattr(self, f"_{kind}")(
                run.project, run.job["configuration"][kind], run, upload
            )
            if not run.recorded:
                _complete(run, {kind: statistics}, {"state": "DONE"})
                self.warehouse.put_job(run.project, run.job_id, run.job)
        except BaseException as error:  # a bug here must end the job, never leave it half-done
            self.record_failed(run, error)
        finally:
            if upload is not None:
                upload.unlink(missing_ok=True)
            run.finish()
            self.running.remove(run)

    def record_failed(self, run: RunningJob, error: BaseException) -> None:
        _complete(run, {}, _failed_status(run.stop_error or error))
        self.warehouse.put_job(run.project, run.job_id, run.job)

    def record_done(self, run: RunningJob, stats: dict) -> None:
        _complete(run, {"query": stats}, {"state": "DONE"})
        self.warehouse.put_job(run.project, run.job_id, run.job)

    def _record_in(self, cur: duckdb.DuckDBPyConnection, run: RunningJob, stats: dict) -> None:
        """Stores the DONE job in the job's own transaction: one commit per query instead of
        two. Should the commit fail, the record goes with it and _execute stores the failure."""
        _complete(run, {"query": stats}, {"state": "DONE"})
        self.warehouse.insert_job(cur, run.project, run.job_id, run.job)
        run.recorded = True

    def _column_types(self, name: TableName) -> dict[str, str]:
        """A table's columns' GoogleSQL types ({} for a table that does not exist: the query's
        own check reports that)."""
        cur = self.warehouse.cursor()
        try:
            fields = self.warehouse.bare_schema(cur, name)
        except (QueryError, duckdb.Error):
            return {}
        finally:
            cur.close()
        return {f["name"].lower(): _google_sql_type(f) for f in fields}

    # -- dry run --------------------------------------------------------------------------------
    def _dry_run(self, project: str, kind: str, config: dict, job: dict) -> dict:
        """Validates a query without running it or storing a job, as BigQuery does: a failure
        is the HTTP error itself (404 notFound, 400 invalidQuery), not a DONE job."""
        if kind != "query":
            raise ApiError(400, f"dryRun is supported for query jobs only, not {kind}")
        query = config["query"]
        try:
            default = query.get("defaultDataset") or None
            dataset = (
                (default.get("projectId") or project, default["datasetId"]) if default else None
            )
            function_ddl = routine_ddl.parse(str(query.get("query") or ""))
            if function_ddl is not None:
                return self._dry_function_ddl(project, dataset, function_ddl, job)
            translation = translate(
                str(query.get("query") or ""), project, dataset, self._column_types
            )
            params = query_parameters(query)
            with self.warehouse.transaction() as cur:
                for name in translation.read_tables:
                    self.warehouse.require_table(cur, name)
                self._check_partition_filters(cur, translation, str(query.get("query")))
                routines.require_all(cur, translation, parameters_of(query))
                for ref in translation.information_schema:
                    information_schema.register(self.warehouse, cur, ref)
                fields = None
                if translation.statement_type == "SELECT":
                    fields = _result_fields(cur, translation.sql, params)
                processed = billing.estimate(
                    self.warehouse, cur, translation.read_tables, translation.columns_read
                )
        except QueryError as error:
            raise ApiError(
                404 if error.reason == "notFound" else 400, error.message, reason=error.reason
            ) from None
        except duckdb.Error as error:
            raise ApiError(400, _duckdb_message(error), reason=_duckdb_reason(error)) from None
        job["status"] = {"state": "DONE"}
        # Reference JobStatistics2: statementType, totalBytesProcessed (int64 string),
        # referencedTables, and `schema`: "Present only for successful dry run"
        stats: dict[str, Any] = {
            "statementType": translation.statement_type,
            "totalBytesProcessed": str(processed),
            "cacheHit": False,
            "referencedTables": [_table_reference(name) for name in translation.read_tables],
        }
        if fields is not None:
            stats["schema"] = {"fields": fields}
        job["statistics"] = {"query": stats, "totalBytesProcessed": str(processed)}
        return job

    def _dry_function_ddl(
        self, project: str, default: tuple[str, str] | None, statement: Any, job: dict
    ) -> dict:
        """CREATE/DROP FUNCTION checked in full (names, types, the body bound) in a
        transaction that is rolled back: nothing is made."""
        with self.warehouse.lock:
            cur = self.warehouse.cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                stats = routine_ddl.run(self.warehouse, cur, statement, project, default)
            finally:
                cur.execute("ROLLBACK")
                cur.close()
        job["status"] = {"state": "DONE"}
        job["statistics"] = {"query": stats, "totalBytesProcessed": "0"}
        return job

    # -- query ----------------------------------------------------------------------------------
    def _query(self, project: str, config: dict, run: RunningJob, _: Path | None) -> dict:
        if config.get("useLegacySql") is True:
            raise QueryError(
                "Legacy SQL is not supported by the local BigQuery; set useLegacySql to false",
                "invalid",
            )
        if not str(config.get("query") or "").strip():
            raise QueryError("Missing query text (configuration.query.query)", "invalid")
        if run.scope is None and script_text.is_script(config["query"]):
            return scripting.Script(self, project, config, run).run(config["query"])
        default = config.get("defaultDataset") or None
        default_dataset = (
            (default.get("projectId") or project, default["datasetId"]) if default else None
        )
        function_ddl = routine_ddl.parse(config["query"])
        if function_ddl is not None:
            return self._function_ddl(project, default_dataset, function_ddl, run)
        translation = translate(
            config["query"], project, default_dataset, self._column_types, run.scope
        )
        params = query_parameters(config)
        parameters = routines.Parameters(params, query_parameter_types(config))
        stats: dict[str, Any] = {
            "statementType": translation.statement_type,
            "totalBytesProcessed": "0",
            "totalBytesBilled": "0",
            "cacheHit": False,
        }
        selecting = translation.statement_type == "SELECT"
        anonymous = selecting and not config.get("destinationTable")
        if anonymous:
            self._check_before_results_dataset(project, translation, parameters)
        destination = self._destination(project, config, run.job) if selecting else None
        self.external.refresh(translation.read_tables)  # files read as they are now
        if destination is not None and anonymous:
            small = self._small_query(run, translation, config["query"], parameters)
            if small is not None:
                stats["schema"] = {"fields": small[1]}
                stats["totalRows"] = str(small[0].table.num_rows)
                _complete(run, {"query": stats}, {"state": "DONE"})
                run.recorded = True
                self.warehouse.record_later(run.project, run.job_id, run.job, destination, small[0])
                return stats
        with run.transaction(destination or translation.target) as cur:
            self._check_reads(cur, translation, config["query"], parameters)
            if translation.statement_type in ("INSERT", "UPDATE", "DELETE", "MERGE"):
                self.external.check_writable(cur, translation.target)
            if destination is not None and anonymous:
                rows = self._write_result(cur, destination, translation.sql, params)
                stats["schema"] = {"fields": self.warehouse.bare_schema(cur, destination)}
                _refuse_null_elements(cur, destination, stats["schema"]["fields"])
                stats["totalRows"] = str(rows)
            elif destination is not None:
                self._write_select(cur, destination, translation.sql, params, config)
                stats["schema"] = {"fields": self.warehouse.table_schema(cur, destination)}
                _refuse_null_elements(cur, destination, stats["schema"]["fields"])
                stats["totalRows"] = str(self.warehouse.count_rows(cur, destination))
            elif translation.statement_type.startswith(("CREATE", "DROP")):
                stats.update(self._ddl(cur, translation, params))
            else:
                target = translation.target  # None: a script's temporary table
                if target is not None:
                    self.warehouse.require_table(cur, target)
                affected = cur.execute(translation.sql, params).fetchone()
                if target is not None:
                    self.warehouse.touch_table(cur, target)
                stats["numDmlAffectedRows"] = str(affected[0] if affected else 0)
                stats["dmlStats"] = {
                    _dml_stat(translation.statement_type): stats["numDmlAffectedRows"]
                }
            self._record_in(cur, run, stats)
        return stats

    def _check_reads(
        self,
        cur: duckdb.DuckDBPyConnection,
        translation: Any,
        sql: str,
        parameters: routines.Parameters,
    ) -> None:
        """What a statement reads exists (tables, routines) and may be read as written
        (partition filters); the INFORMATION_SCHEMA views it names are registered."""
        for name in translation.read_tables:
            self.warehouse.require_table(cur, name)
        self._check_partition_filters(cur, translation, sql)
        routines.require_all(cur, translation, parameters)
        for ref in translation.information_schema:
            information_schema.register(self.warehouse, cur, ref)

    def _small_query(
        self, run: RunningJob, translation: Any, sql: str, parameters: routines.Parameters
    ) -> tuple[SmallResult, list[dict]] | None:
        """An anonymous SELECT outside a transaction: it writes nothing, so none is needed
        (a BEGIN and COMMIT were 0.5 ms of a `SELECT 1`). None for a result too large to
        keep in memory: the caller runs it into its table."""
        run.raise_if_stopped()
        self._check_reads(run.cursor, translation, sql, parameters)
        small = self._small_result(run.cursor, translation.sql, parameters.values)
        run.raise_if_stopped()
        return small

    def _small_result(
        self, cur: duckdb.DuckDBPyConnection, sql: str, params: Any
    ) -> tuple[SmallResult, list[dict]] | None:
        """A result of at most SMALL_ROWS rows (and SMALL_BYTES), with its schema, kept in
        memory (recorder.py); None for a larger one, which is run again into its table (a
        SELECT has no effects, so a second run is only time)."""
        cur.complete()  # a catalog check's fetchone() may have left its result unread
        limited = f"SELECT * FROM ({sql}) AS result LIMIT {SMALL_ROWS + 1}"
        table, names, kinds = engine_call.arrow_rows(cur, limited, params)
        if any(intervals.holds_interval(kind) for kind in kinds):
            # Arrow's INTERVAL wraps past 106,751 days: run again to BigQuery's text (a SELECT
            # has no effects; the rows above are dropped unread)
            table = intervals.exportable(cur.sql(limited, params=params)).to_arrow_table()
        table = geography.text_columns(table)
        if table.num_rows > SMALL_ROWS or table.nbytes > SMALL_BYTES:
            return None
        column = null_element_column(table)
        if column is not None:
            raise QueryError(f"Array cannot have a null element; error in writing field {column}")
        fields = [
            duckdb_to_field(name, kind, True) for name, kind in zip(names, kinds, strict=True)
        ]
        small = SmallResult(table, [str(kind) for kind in kinds], self.warehouse.clock())
        return small, fields

    def _function_ddl(
        self, project: str, default: tuple[str, str] | None, statement: Any, run: RunningJob
    ) -> dict:
        """CREATE FUNCTION / DROP FUNCTION: a routine made or dropped in the job's transaction."""
        with run.transaction() as cur:
            stats = routine_ddl.run(self.warehouse, cur, statement, project, default)
            self._record_in(cur, run, stats)
        return stats

    def _check_partition_filters(
        self, cur: duckdb.DuckDBPyConnection, translation: Any, sql: str
    ) -> None:
        """Tables made with requirePartitionFilter refuse a query without one (BigQuery)."""
        required = {}
        for name in translation.read_tables:
            options = self.warehouse.table_extras(cur, name)
            column = partitioning.partition_column(options)
            if options.get("requirePartitionFilter") and column:
                required[f"{name.project}.{name.dataset}.{name.table}"] = column
        partitioning.check_partition_filters(sql, required)

    def _check_before_results_dataset(
        self, project: str, translation: Any, parameters: routines.Parameters
    ) -> None:
        """The anonymous dataset is made by the project's first valid query only: a failing
        first query must leave no trace in the catalog. So that query is planned (LIMIT 0, no
        rows read) in a transaction that is rolled back before the dataset is made; later
        queries find the dataset known and skip this."""
        if project in self.warehouse.results_ready:
            return
        cur = self.warehouse.cursor()
        cur.execute("BEGIN TRANSACTION")
        try:
            for name in translation.read_tables:
                self.warehouse.require_table(cur, name)
            routines.require_all(cur, translation, parameters)
            for ref in translation.information_schema:
                information_schema.register(self.warehouse, cur, ref)
            cur.execute(
                f"SELECT * FROM ({translation.sql}) AS first_query LIMIT 0", parameters.values
            )
        finally:
            with contextlib.suppress(duckdb.Error):
                cur.execute("ROLLBACK")
            cur.close()

    def _destination(self, project: str, config: dict, job: dict) -> TableName:
        table = config.get("destinationTable")
        if table:
            return _table_name(table, project)
        self.warehouse.ensure_results_dataset(project)
        job_id = job["jobReference"]["jobId"]
        name = TableName(project, RESULTS_DATASET, f"anon_{job_id}")
        config["destinationTable"] = _table_reference(name)
        return name

    def _write_result(
        self, cur: duckdb.DuckDBPyConnection, destination: TableName, sql: str, params: Any
    ) -> int:
        """Writes a query's anonymous result table. It is new (its name holds the job id, which
        jobs.insert checked is unused) in a dataset known to exist, so none of the catalog
        checks of a named destination apply; answers the row count CREATE TABLE AS reports."""
        created = cur.execute(f"CREATE TABLE {destination.sql} AS ({sql})", params).fetchone()
        self.warehouse.record_new_table(cur, destination)
        return int(created[0]) if created else 0

    def _write_select(
        self,
        cur: duckdb.DuckDBPyConnection,
        destination: TableName,
        sql: str,
        params: Any,
        config: dict,
    ) -> None:
        write = config.get("writeDisposition") or "WRITE_EMPTY"
        create = config.get("createDisposition") or "CREATE_IF_NEEDED"
        if not self.warehouse.dataset_exists(cur, destination.project, destination.dataset):
            raise dataset_not_found(destination.project, destination.dataset)
        exists = self.warehouse.table_kind(cur, destination) is not None
        if not exists and create == "CREATE_NEVER":
            raise table_not_found(destination)
        if exists and write == "WRITE_APPEND":
            cur.execute(f"INSERT INTO {destination.sql} BY NAME ({sql})", params)
        else:
            if exists and write == "WRITE_EMPTY" and self.warehouse.count_rows(cur, destination):
                raise Duplicate(f"Already Exists: Table {destination.bigquery_id}")
            cur.execute(f"CREATE OR REPLACE TABLE {destination.sql} AS ({sql})", params)
        self.warehouse.touch_table(cur, destination)

    def _ddl(self, cur: duckdb.DuckDBPyConnection, translation: Any, params: Any) -> dict:
        target: TableName = translation.target
        kind = self.warehouse.table_kind(cur, target)
        if translation.statement_type.startswith("DROP"):
            if kind is None:
                if translation.if_exists:
                    return {
                        "ddlOperationPerformed": "SKIP",
                        "ddlTargetTable": _table_reference(target),
                    }
                raise table_not_found(target)
            self.warehouse.drop_table(cur, target)
            return {"ddlOperationPerformed": "DROP", "ddlTargetTable": _table_reference(target)}
        if not self.warehouse.dataset_exists(cur, target.project, target.dataset):
            raise dataset_not_found(target.project, target.dataset)
        operation = "CREATE"
        if kind is not None:
            if translation.if_not_exists:
                return {"ddlOperationPerformed": "SKIP", "ddlTargetTable": _table_reference(target)}
            if not translation.replace:
                raise Duplicate(f"Already Exists: Table {target.bigquery_id}")
            operation = "REPLACE"
            if kind == "VIEW" and translation.create_kind == "TABLE":
                cur.execute(f"DROP VIEW {target.sql}")
            if kind == "TABLE" and translation.create_kind == "VIEW":
                cur.execute(f"DROP TABLE {target.sql}")
        cur.execute(translation.sql, params)
        self.warehouse.drop_table_extras(cur, target)
        extras = {"view": {"query": ""}} if translation.create_kind == "VIEW" else {}
        if translation.table_options:  # checked on the schema the statement made
            partitioning.check_options(
                translation.table_options, self.warehouse.bare_schema(cur, target)
            )
            extras.update(translation.table_options)
        self.warehouse.touch_table(cur, target, extras)
        return {"ddlOperationPerformed": operation, "ddlTargetTable": _table_reference(target)}

    # -- load ------------------------------------------------------------------------------------
    def _load(self, project: str, config: dict, run: RunningJob, upload: Path | None) -> dict:
        source_format = (config.get("sourceFormat") or "CSV").upper()
        if source_format not in LOAD_FORMATS:
            raise QueryError(
                f"sourceFormat {source_format!r} is unsupported locally; allowed: "
                + ", ".join(LOAD_FORMATS),
                "invalid",
            )
        if "destinationTable" not in config:
            raise QueryError("Load job needs configuration.load.destinationTable", "invalid")
        destination = _table_name(config["destinationTable"], project)
        staged = [upload] if upload else self._stage_uris(config.get("sourceUris") or [])
        try:
            with run.transaction(destination) as cur:
                rows = self._load_files(cur, destination, staged, source_format, config)
        finally:
            if not upload:
                for path in staged:
                    path.unlink(missing_ok=True)
        return {
            "inputFiles": str(len(staged)),
            "inputFileBytes": "0",
            "outputRows": str(rows),
            "badRecords": "0",
        }

    def _stage_uris(self, uris: list[str]) -> list[Path]:
        """gs:// URIs (with `*` wildcards) -> hard links in the staging area DuckDB may read."""
        if not uris:
            raise QueryError("Load job needs sourceUris or an uploaded file", "invalid")
        staged: list[Path] = []
        try:
            for uri in uris:
                for path in self._resolve_uri(uri):
                    link = self.warehouse.staging_path(path.suffix)
                    try:
                        os.link(path, link)
                    except OSError:
                        shutil.copyfile(path, link)
                    staged.append(link)
        except BaseException:
            for link in staged:
                link.unlink(missing_ok=True)
            raise
        return staged

    def _resolve_uri(self, uri: str) -> list[Path]:
        bucket, name = _split_gs_uri(uri)
        if "*" not in name:
            path = self.storage.object_path(bucket, name)
            if not path.is_file():
                raise NotFound(f"Not found: URI {uri}")
            return [path]
        prefix = name.split("*", 1)[0]
        matches = [
            self.storage.object_path(bucket, found)
            for found in self.storage.list_objects(bucket, prefix)
            if fnmatch.fnmatchcase(found, name)
        ]
        if not matches:
            raise NotFound(f"Not found: URI {uri}")
        return matches

    def _load_files(
        self,
        cur: duckdb.DuckDBPyConnection,
        destination: TableName,
        files: list[Path],
        source_format: str,
        config: dict,
    ) -> int:
        if not self.warehouse.dataset_exists(cur, destination.project, destination.dataset):
            raise dataset_not_found(destination.project, destination.dataset)
        exists = self.warehouse.table_kind(cur, destination) is not None
        write = config.get("writeDisposition") or "WRITE_APPEND"
        create = config.get("createDisposition") or "CREATE_IF_NEEDED"
        if not exists and create == "CREATE_NEVER":
            raise table_not_found(destination)
        fields = (config.get("schema") or {}).get("fields") or None
        if fields is None and exists and not config.get("autodetect"):
            fields = self.warehouse.table_schema(cur, destination)
        if fields is None and source_format != "PARQUET" and not config.get("autodetect"):
            raise QueryError(
                "No schema specified on job or table (set schema or autodetect)", "invalid"
            )
        intervals.refuse_interval_columns(fields or [], "a load job")  # DuckDB would read its text
        source = _reader_sql(files, source_format, config, fields)
        if exists and write == "WRITE_EMPTY" and self.warehouse.count_rows(cur, destination):
            raise Duplicate(f"Already Exists: Table {destination.bigquery_id}")
        before = 0
        if exists and write == "WRITE_APPEND":
            before = self.warehouse.count_rows(cur, destination)
            cur.execute(f"INSERT INTO {destination.sql} BY NAME {source}")
        elif fields is not None:
            self.warehouse.create_table(cur, destination, fields, replace=True)
            cur.execute(f"INSERT INTO {destination.sql} BY NAME {source}")
        else:
            cur.execute(f"CREATE OR REPLACE TABLE {destination.sql} AS {source}")
            self.warehouse.drop_table_extras(cur, destination)
        self.warehouse.touch_table(cur, destination)
        return self.warehouse.count_rows(cur, destination) - before

    # -- extract -------------------------------------------------------------------------------
    def _extract(self, project: str, config: dict, run: RunningJob, _: Path | None) -> dict:
        source = _table_name(config.get("sourceTable") or {}, project)
        uris = config.get("destinationUris") or (
            [config["destinationUri"]] if config.get("destinationUri") else []
        )
        if not uris:
            raise QueryError("Extract job needs destinationUris", "invalid")
        if len(uris) > 1:
            raise QueryError("Only one destination URI per extract job is supported", "invalid")
        file_format = (config.get("destinationFormat") or "CSV").upper()
        if file_format not in EXTRACT_FORMATS:
            raise QueryError(
                f"destinationFormat {file_format!r} is unsupported locally; allowed: "
                + ", ".join(EXTRACT_FORMATS),
                "invalid",
            )
        compression = (config.get("compression") or "NONE").upper()
        if compression not in EXTRACT_COMPRESSIONS[file_format]:
            allowed = ", ".join(EXTRACT_COMPRESSIONS[file_format])
            raise QueryError(
                f"compression {compression!r} is not valid for {file_format}; allowed: {allowed}",
                "invalid",
            )
        bucket, name = _split_gs_uri(uris[0])
        if not self.storage.object_path(bucket, "probe").parent.is_dir():
            raise NotFound(f"Not found: Bucket {bucket}")
        cur = run.cursor
        self.warehouse.require_table(cur, source)
        intervals.refuse_interval_columns(
            self.warehouse.table_schema(cur, source), "an extract job"
        )
        options = _copy_options(file_format, compression, config)
        relation = source.sql
        if file_format == "NEWLINE_DELIMITED_JSON":
            relation = _json_export_select(source, self.warehouse.table_schema(cur, source))
        written = self._copy_out(cur, relation, name, options)
        run.raise_if_stopped()
        for index, path in enumerate(written):
            target = name.replace("*", f"{index:012d}") if "*" in name else name
            object_path = self.storage.object_path(bucket, target)
            object_path.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, object_path)
        return {"destinationUriFileCounts": [str(len(written))]}

    def _copy_out(
        self, cur: duckdb.DuckDBPyConnection, relation: str, name: str, options: str
    ) -> list[Path]:
        """COPY `relation` (a table or a parenthesised SELECT) into the staging area (DuckDB's
        parallel writers); several files only for `*`."""
        if "*" not in name:
            path = self.warehouse.staging_path()
            cur.execute(f"COPY {relation} TO {quote_literal(str(path))} ({options})")
            return [path]
        directory = self.warehouse.staging_path()
        cur.execute(
            f"COPY {relation} TO {quote_literal(str(directory))} "
            f"({options}, FILE_SIZE_BYTES {SHARD_BYTES}, FILENAME_PATTERN 'part_{{i}}')"
        )
        files = sorted(directory.iterdir(), key=lambda p: int(p.name.split("_")[1].split(".")[0]))
        staged = []
        for path in files:
            moved = self.warehouse.staging_path()
            os.replace(path, moved)
            staged.append(moved)
        directory.rmdir()
        return staged

    # -- copy ------------------------------------------------------------------------------------
    def _copy(self, project: str, config: dict, run: RunningJob, _: Path | None) -> dict:
        sources = config.get("sourceTables") or (
            [config["sourceTable"]] if config.get("sourceTable") else []
        )
        if not sources or "destinationTable" not in config:
            raise QueryError("Copy job needs sourceTables and destinationTable", "invalid")
        names = [_table_name(source, project) for source in sources]
        destination = _table_name(config["destinationTable"], project)
        union = " UNION ALL BY NAME ".join(f"SELECT * FROM {name.sql}" for name in names)
        with run.transaction(destination) as cur:
            for name in names:
                self.warehouse.require_table(cur, name)
            copy_config = {"writeDisposition": "WRITE_EMPTY", **config}
            self._write_select(cur, destination, union, None, copy_config)
            extras = self.warehouse.table_extras(cur, names[0]).get("schema")
            if extras:
                self.warehouse.touch_table(cur, destination, {"schema": extras})
        return {}


# -- helpers ---------------------------------------------------------------------------------------
def _validate_dispositions(config: dict) -> None:
    for key, allowed in (
        ("writeDisposition", WRITE_DISPOSITIONS),
        ("createDisposition", CREATE_DISPOSITIONS),
    ):
        value = config.get(key)
        if value and value not in allowed:
            raise QueryError(f"Invalid {key} {value!r}; allowed: {', '.join(allowed)}", "invalid")


def _complete(run: RunningJob, statistics: dict, status: dict) -> None:
    """Ends the job's resource: its status and its statistics (times and the kind's own)."""
    now_ms = str(int(time.time() * 1000))
    run.job["status"] = status
    run.job["statistics"] = {
        "creationTime": str(int(run.started * 1000)),
        "startTime": str(int(run.started * 1000)),
        "endTime": now_ms,
        **run.extra_statistics,
        **statistics,
    }


def _failed_status(error: BaseException) -> dict[str, Any]:
    if isinstance(error, QueryError):
        result = {"reason": error.reason, "message": error.message}
    elif isinstance(error, duckdb.TransactionException):
        message = f"Could not serialize access to a table due to concurrent update: {error}"
        result = {"reason": "invalidQuery", "message": message}
    elif isinstance(error, duckdb.Error):
        result = {"reason": _duckdb_reason(error), "message": _duckdb_message(error)}
    else:
        message = f"Internal error in the local BigQuery: {type(error).__name__}: {error}"
        result = {"reason": "invalid", "message": message}
    return {"state": "DONE", "errorResult": result, "errors": [result]}


def _result_fields(cur: duckdb.DuckDBPyConnection, sql: str, params: Any) -> list[dict]:
    """The result schema of a SELECT, planned with LIMIT 0 (names, types, functions checked,
    no rows read) into a temporary table of this connection only."""
    shape = "_vertexkit_dry_run_shape"
    cur.execute(f"CREATE OR REPLACE TEMP TABLE {shape} AS SELECT * FROM ({sql}) LIMIT 0", params)
    try:
        relation = cur.sql(f"SELECT * FROM {shape}")
        return [
            duckdb_to_field(column, kind)
            for column, kind in zip(relation.columns, relation.types, strict=True)
        ]
    finally:
        cur.execute(f"DROP TABLE IF EXISTS {shape}")


def _google_sql_type(field: dict) -> str:
    kind = {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL", "RECORD": "STRUCT"}.get(
        field["type"], field["type"]
    )
    return "ARRAY" if field.get("mode") == "REPEATED" else kind


def _json_export_select(source: TableName, fields: list[dict]) -> str:
    """BigQuery's JSON export writes INT64 as strings (JSON numbers lose precision past 2^53);
    DuckDB would write numbers."""
    columns = []
    for field in fields:
        column = quote(field["name"])
        if field["type"] in ("INTEGER", "INT64") and field.get("mode") == "REPEATED":
            columns.append(f"[CAST(e AS VARCHAR) FOR e IN {column}] AS {column}")
        elif field["type"] in ("INTEGER", "INT64"):
            columns.append(f"CAST({column} AS VARCHAR) AS {column}")
        else:
            columns.append(column)
    return f"(SELECT {', '.join(columns)} FROM {source.sql})"


def _refuse_null_elements(
    cur: duckdb.DuckDBPyConnection, table: TableName, fields: list[dict]
) -> None:
    """BigQuery cannot write an array with a NULL element (DuckDB can): the job fails and,
    being one transaction, leaves nothing behind."""
    for field in fields:
        if field.get("mode") != "REPEATED":
            continue
        column = quote(field["name"])
        found = cur.execute(
            f"SELECT 1 FROM {table.sql} WHERE list_count({column}) < len({column}) LIMIT 1"
        ).fetchone()
        if found:
            raise QueryError(
                f"Array cannot have a null element; error in writing field {field['name']}"
            )


def _dml_stat(statement_type: str) -> str:
    return {"INSERT": "insertedRowCount", "DELETE": "deletedRowCount"}.get(
        statement_type, "updatedRowCount"
    )


def _table_name(reference: dict, project: str) -> TableName:
    try:
        return TableName(
            reference.get("projectId") or project, reference["datasetId"], reference["tableId"]
        )
    except KeyError as error:
        raise QueryError(f"Table reference is missing {error.args[0]}", "invalid") from error


def _table_reference(name: TableName) -> dict:
    return {"projectId": name.project, "datasetId": name.dataset, "tableId": name.table}


def _split_gs_uri(uri: str) -> tuple[str, str]:
    if not uri.startswith("gs://") or "/" not in uri[5:]:
        raise QueryError(f"Invalid URI {uri!r}: expected gs://bucket/object", "invalid")
    bucket, _, name = uri[5:].partition("/")
    if not bucket or not name:
        raise QueryError(f"Invalid URI {uri!r}: expected gs://bucket/object", "invalid")
    return bucket, name


def _reader_sql(
    files: list[Path], source_format: str, config: dict, fields: list[dict] | None
) -> str:
    """The files' rows in the load's schema; GEOGRAPHY columns are read as text and parsed
    (WKT or GeoJSON, normalized as ST_GEOGFROMTEXT normalizes) by geography.py."""
    places = [f["name"] for f in fields or [] if str(f.get("type", "")).upper() == "GEOGRAPHY"]
    if not places:
        return _typed_reader_sql(files, source_format, config, fields)
    texts = [{**f, "type": "STRING"} if f["name"] in places else f for f in fields or []]
    inner = _typed_reader_sql(files, source_format, config, texts)
    parsed = ", ".join(f"bq_geography_from_load({quote(name)}) AS {quote(name)}" for name in places)
    return f"SELECT * REPLACE ({parsed}) FROM ({inner})"


def _typed_reader_sql(
    files: list[Path], source_format: str, config: dict, fields: list[dict] | None
) -> str:
    paths = "[" + ", ".join(quote_literal(str(path)) for path in files) + "]"
    columns = (
        "{"
        + ", ".join(
            f"{quote_literal(f['name'])}: {quote_literal(field_to_duckdb(f))}" for f in fields
        )
        + "}"
        if fields
        else None
    )
    if source_format == "PARQUET":
        if not fields:
            return f"SELECT * FROM read_parquet({paths})"
        casts = ", ".join(
            f"CAST({quote(f['name'])} AS {field_to_duckdb(f)}) AS {quote(f['name'])}"
            for f in fields
        )
        return f"SELECT {casts} FROM read_parquet({paths})"
    if source_format == "NEWLINE_DELIMITED_JSON":
        schema = f", columns = {columns}" if columns else ""
        return f"SELECT * FROM read_json({paths}, format = 'newline_delimited'{schema})"
    options = [f"delim = {quote_literal(config.get('fieldDelimiter') or ',')}"]
    if config.get("quote") is not None:
        options.append(f"quote = {quote_literal(config['quote'])}")
    if config.get("nullMarker") is not None:
        options.append(f"nullstr = {quote_literal(config['nullMarker'])}")
    skip = int(config.get("skipLeadingRows") or 0)
    if columns:
        options += [f"columns = {columns}", "header = false", f"skip = {skip}"]
    elif skip:
        options += ["header = true", f"skip = {skip - 1}"]
    return f"SELECT * FROM read_csv({paths}, {', '.join(options)})"


def _copy_options(file_format: str, compression: str, config: dict) -> str:
    options = [f"FORMAT {EXTRACT_FORMATS[file_format]}"]
    if file_format == "PARQUET":
        options.append(f"COMPRESSION {'uncompressed' if compression == 'NONE' else compression}")
    elif compression == "GZIP":
        options.append("COMPRESSION gzip")
    if file_format == "CSV":
        options.append(f"HEADER {'false' if config.get('printHeader') is False else 'true'}")
        delimiter = config.get("fieldDelimiter")
        if delimiter:
            options.append(f"DELIMITER {quote_literal(delimiter)}")
    return ", ".join(options)


NO_SIGNATURE = re.compile(r"No function matches the given name and argument types '(\w+)\((.*)\)'")
MISSING_FUNCTION = re.compile(r"Scalar Function with name (\w+) does not exist")
# A udfs.py function's ValueError, as DuckDB wraps it: the message is BigQuery's, the rest noise.
UDF_ERROR = re.compile(r"Python exception occurred while executing the UDF: \w+: ")
INT64_OVERFLOW = re.compile(r"Overflow in \w+ of INT(?:64|128) \((.*)\)!?$")
# The error() in the macros that raise BigQuery's errors is volatile, which DuckDB refuses in a
# window's PARTITION BY / ORDER BY.
# DuckDB's decimal cast of text: DECIMAL(38,9) is NUMERIC, DECIMAL(38,18) the local BIGNUMERIC.
DECIMAL_CAST = re.compile(r'Could not convert string "(.*)" to DECIMAL\(38,(9|18)\)')
VOLATILE_WINDOW = re.compile(r"(PARTITION BY|ORDER BY) window expressions cannot be volatile")


def _duckdb_message(error: duckdb.Error) -> str:
    text = str(error).strip()
    refused = bind_refusal.refusal(text)
    if refused:  # a refusal at bind: a GEOGRAPHY where it is not groupable, an INTERVAL...
        return refused
    for prefix in (
        "Binder Error: ",
        "Parser Error: ",
        "Catalog Error: ",
        "Conversion Error: ",
        "Invalid Input Error: ",
        "Out of Range Error: ",
    ):
        text = text.replace(prefix, "")
    text = UDF_ERROR.sub("", text)
    first = text.splitlines()[0] if text else type(error).__name__
    signature = NO_SIGNATURE.match(first)
    if signature:  # BigQuery: "No matching signature for function F for argument types: ..."
        name, types = signature.groups()
        return (
            f"No matching signature for function {name.upper()} for argument types: {types} "
            f"(not supported by the local BigQuery: {name.upper()}({types}))"
        )
    missing = MISSING_FUNCTION.match(first)
    if missing:  # a GoogleSQL function the translation leaves to DuckDB, which lacks it
        return f"not supported by the local BigQuery: {missing.group(1).upper()}"
    decimal_cast = DECIMAL_CAST.match(first)
    if decimal_cast:
        text, scale = decimal_cast.groups()
        refusal = googlesql.bignumeric_refusal(text) if scale == "18" else None
        if refusal:
            return f"not supported by the local BigQuery: {refusal}"
        return f"Invalid {'BIGNUMERIC' if scale == '18' else 'NUMERIC'} value: {text}"
    volatile = VOLATILE_WINDOW.match(first)
    if volatile:
        return (
            f"not supported by the local BigQuery: a function that can fail (such as MOD, DIV or"
            f" / by a value that is not a literal) in a window's {volatile.group(1)}; compute it"
            " in a subquery first"
        )
    overflow = INT64_OVERFLOW.match(first)
    if overflow:  # BigQuery: "int64 overflow: 9223372036854775807 + 1"
        return f"int64 overflow: {overflow.group(1)}"
    if "Referenced column" in first and "not found" in first:
        column = first.split('"')[1] if '"' in first else first
        return f"Unrecognized name: {column}; {first}"
    return first


def _duckdb_reason(error: duckdb.Error) -> str:
    if isinstance(error, duckdb.CatalogException) and "does not exist" in str(error):
        return "notFound" if "Table" in str(error) else "invalidQuery"
    return "invalidQuery"


# -- query parameters ------------------------------------------------------------------------------
def query_parameters(config: dict) -> Any:
    """BigQuery queryParameters -> DuckDB bind values (dict for named, list for positional)."""
    parameters = config.get("queryParameters") or []
    if not parameters:
        return None
    mode = (config.get("parameterMode") or "").upper()
    named = mode == "NAMED" or (not mode and all(p.get("name") for p in parameters))
    if named:
        values = {}
        for parameter in parameters:
            if not parameter.get("name"):
                raise QueryError("Named parameter mode needs a name on every parameter", "invalid")
            values[parameter["name"]] = _parameter_value(
                parameter.get("parameterType") or {}, parameter.get("parameterValue") or {}
            )
        return values
    return [
        _parameter_value(p.get("parameterType") or {}, p.get("parameterValue") or {})
        for p in parameters
    ]


def query_parameter_types(config: dict) -> dict[str, str]:
    """Each query parameter's GoogleSQL type, by `@name` (lower case) and by `?n` (position),
    for the signature check of a table function's call (routines.Parameters)."""
    types = {}
    for position, parameter in enumerate(config.get("queryParameters") or []):
        kind = _parameter_type_sql(parameter.get("parameterType") or {})
        types[f"?{position}"] = kind
        if parameter.get("name"):
            types[f"@{parameter['name'].lower()}"] = kind
    return types


LEGACY_PARAMETER_TYPES = {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL"}


def _parameter_type_sql(kind: dict) -> str:
    name = str(kind.get("type", "")).upper()
    if name == "ARRAY":
        return f"ARRAY<{_parameter_type_sql(kind.get('arrayType') or {})}>"
    if name == "STRUCT":
        members = ", ".join(
            f"{m.get('name')} {_parameter_type_sql(m.get('type') or {})}"
            for m in kind.get("structTypes") or []
        )
        return f"STRUCT<{members}>"
    return LEGACY_PARAMETER_TYPES.get(name, name)


def parameters_of(config: dict) -> routines.Parameters:
    return routines.Parameters(query_parameters(config), query_parameter_types(config))


def _parameter_value(kind: dict, value: dict) -> Any:
    type_name = str(kind.get("type", "")).upper()
    if type_name == "ARRAY":
        return [
            _parameter_value(kind.get("arrayType") or {}, item)
            for item in value.get("arrayValues") or []
        ]
    if type_name == "STRUCT":
        struct_values = value.get("structValues") or {}
        return {
            member["name"]: _parameter_value(member["type"], struct_values.get(member["name"], {}))
            for member in kind.get("structTypes") or []
        }
    raw = value.get("value")
    if raw is None:
        return None
    converters = {
        "INT64": int,
        "INTEGER": int,
        "FLOAT64": float,
        "FLOAT": float,
        "NUMERIC": decimal.Decimal,
        "BIGNUMERIC": decimal.Decimal,
        "BOOL": lambda text: str(text).lower() == "true",
        "BOOLEAN": lambda text: str(text).lower() == "true",
        "STRING": str,
        "BYTES": base64.b64decode,
        "DATE": datetime.date.fromisoformat,
        "DATETIME": lambda text: datetime.datetime.fromisoformat(text.replace(" ", "T")),
        "TIME": datetime.time.fromisoformat,
        "TIMESTAMP": _parse_timestamp,
        "JSON": str,
        "INTERVAL": intervals.parameter,
    }
    if type_name not in converters:
        raise QueryError(
            f"Unsupported query parameter type {type_name!r}; allowed: "
            + ", ".join(sorted({*converters, "ARRAY", "STRUCT"})),
            "invalid",
        )
    try:
        return converters[type_name](raw)
    except (ValueError, decimal.InvalidOperation) as error:
        raise QueryError(f"Invalid {type_name} parameter value {raw!r}", "invalid") from error


def _parse_timestamp(text: str) -> datetime.datetime:
    cleaned = text.replace(" UTC", "+00:00").replace("Z", "+00:00").replace(" ", "T", 1)
    moment = datetime.datetime.fromisoformat(cleaned)
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)
