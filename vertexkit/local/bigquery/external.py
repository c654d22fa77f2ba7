"""External tables: `externalDataConfiguration` over CSV, JSON, Parquet or Avro files in the
local Cloud Storage, queryable as BigQuery queries them.

BigQuery reads an external table's files at query time. Here DuckDB may read no file outside
its staging area, so the table is filled from the files (staged as a load job stages them) when
it is created and again before a query whenever a source file changed (size or time): a query
always sees the files as they are. Its schema is the request's, else autodetected as a load
job's (CSV and JSON: DuckDB's sniffer; Parquet and Avro: the files' own schema). Avro is read
with fastavro (DuckDB's Avro reader is an extension fetched from the network).

As BigQuery answers it (recorded traffic, GoogleCloudPlatform/k8s-config-connector
`bigquerytable-externaldata-csv/_http.log`): `type: EXTERNAL`, the configuration echoed as
sent, the autodetected schema, and every `num*Bytes`/`numRows` "0".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vertexkit.local.bigquery.models import NotFound
from vertexkit.local.bigquery.sql import QueryError, TableName
from vertexkit.local.errors import ApiError, bad_request

KEY = "externalDataConfiguration"
SOURCES_KEY = "_externalSources"  # the files' (path, size, mtime) when last read
FIELDS_KEY = "_externalFields"  # the schema the request declared (None: autodetected)
FORMATS = ("CSV", "NEWLINE_DELIMITED_JSON", "PARQUET", "AVRO")
SELF_DESCRIBING = ("PARQUET", "AVRO")


def check_config(body: dict[str, Any]) -> dict[str, Any]:
    """The request's externalDataConfiguration, refused (400 naming the field) where the local
    BigQuery cannot read it."""
    config = body[KEY]
    source = str(config.get("sourceFormat") or "CSV").upper()
    if source not in FORMATS:
        raise bad_request(
            f"{KEY}.sourceFormat: {source} external tables are not served by the local BigQuery; "
            f"it reads {', '.join(FORMATS)} files from Cloud Storage"
        )
    uris = config.get("sourceUris") or []
    if not uris or not all(str(uri).startswith("gs://") for uri in uris):
        raise bad_request(f"{KEY}.sourceUris: one or more gs:// URIs are required")
    encoding = (config.get("csvOptions") or {}).get("encoding")
    if encoding and encoding.upper() not in ("UTF-8", "UTF8"):
        raise bad_request(
            f"{KEY}.csvOptions.encoding: the local BigQuery reads UTF-8 files only; got {encoding}"
        )
    if config.get("hivePartitioningOptions"):
        raise bad_request(f"{KEY}.hivePartitioningOptions: not served by the local BigQuery")
    if source not in SELF_DESCRIBING and not schema_of(body) and not config.get("autodetect"):
        raise bad_request(
            f"{KEY}: a {source} external table needs a schema or autodetect: true"
        )
    return config


def schema_of(body: dict[str, Any]) -> list[dict] | None:
    fields = (body.get("schema") or {}).get("fields") or (body[KEY].get("schema") or {}).get(
        "fields"
    )
    return fields or None


def load_config(config: dict[str, Any], fields: list[dict] | None) -> dict[str, Any]:
    """The load job's configuration that reads the same files the same way."""
    csv = config.get("csvOptions") or {}
    load: dict[str, Any] = {"autodetect": not fields, "writeDisposition": "WRITE_TRUNCATE"}
    if fields:
        load["schema"] = {"fields": fields}
    for option in ("fieldDelimiter", "quote", "skipLeadingRows", "nullMarker"):
        if csv.get(option) is not None:
            load[option] = csv[option]
    return load


class ExternalTables:
    """Fills external tables from their files; `jobs` is the JobRunner (its staging and load)."""

    def __init__(self, jobs: Any) -> None:
        self.jobs = jobs
        self.warehouse = jobs.warehouse

    def create(self, cur: Any, name: TableName, body: dict[str, Any], extras: dict) -> None:
        config = check_config(body)
        fields = schema_of(body)
        if self._signature(config) is None and fields:
            # As BigQuery: a declared schema needs no files yet; a query then fails on them.
            self.warehouse.create_table(cur, name, fields, replace=False)
        else:
            self._fill(cur, name, config, fields)
        self.warehouse.touch_table(cur, name, {**extras, KEY: config, FIELDS_KEY: fields})

    def refresh(self, names: list[TableName]) -> None:
        """Re-reads each external table among `names` whose files changed since last read."""
        for name in names:
            cur = self.warehouse.cursor()
            try:
                extras = self.warehouse.table_extras(cur, name) if self._exists(cur, name) else {}
            finally:
                cur.close()
            if KEY not in extras:
                continue
            signature = self._signature(extras[KEY])
            if signature is None:
                uris = ", ".join(extras[KEY]["sourceUris"])
                raise NotFound(f"Not found: Files {uris} (external table {name.bigquery_id})")
            if signature != extras.get(SOURCES_KEY):
                kept = {k: v for k, v in extras.items() if k != SOURCES_KEY}
                with self.warehouse.transaction(name) as cur:
                    self._fill(cur, name, extras[KEY], extras.get(FIELDS_KEY))
                    self.warehouse.touch_table(cur, name, kept)  # the fill dropped them

    def check_writable(self, cur: Any, name: TableName | None) -> None:
        """BigQuery's external tables are read-only: DML names the table and is refused."""
        external = name is not None and self._exists(cur, name)
        if external and KEY in self.warehouse.table_extras(cur, name):
            raise QueryError(
                f"{name.bigquery_id} is an external table: its data lives in Cloud Storage "
                "and cannot be changed by DML",
                "invalid",
            )

    # -- filling ---------------------------------------------------------------------------------
    def _fill(self, cur: Any, name: TableName, config: dict, fields: list[dict] | None) -> None:
        source = str(config.get("sourceFormat") or "CSV").upper()
        try:
            staged = self.jobs._stage_uris(config["sourceUris"])
        except QueryError as exc:  # a missing file: the create names the field
            raise bad_request(f"{KEY}.sourceUris: {exc}") from None
        try:
            if source == "AVRO":
                self._fill_avro(cur, name, staged)
            else:
                self.jobs._load_files(cur, name, staged, source, load_config(config, fields))
        except QueryError as exc:
            raise ApiError(400, f"{KEY}: {exc}") from None
        finally:
            for path in staged:
                path.unlink(missing_ok=True)
        self.warehouse.touch_table(cur, name, {SOURCES_KEY: self._signature(config)})

    def _fill_avro(self, cur: Any, name: TableName, files: list[Path]) -> None:
        import fastavro
        import pyarrow as pa

        records: list[dict] = []
        for path in files:
            with path.open("rb") as stream:
                records.extend(fastavro.reader(stream))
        table = pa.Table.from_pylist(records)
        cur.register("_vertexkit_avro_rows", table)
        try:
            cur.execute(f"CREATE OR REPLACE TABLE {name.sql} AS SELECT * FROM _vertexkit_avro_rows")
        finally:
            cur.unregister("_vertexkit_avro_rows")

    def _signature(self, config: dict) -> str | None:
        """The source files as they are now (what a refresh compares); None when a URI
        matches no file."""
        found = []
        for uri in config["sourceUris"]:
            try:
                paths = self.jobs._resolve_uri(uri)
            except QueryError:
                return None
            for path in paths:
                stat = path.stat()
                found.append((str(path), stat.st_size, stat.st_mtime_ns))
        return json.dumps(sorted(found))

    def _exists(self, cur: Any, name: TableName) -> bool:
        return self.warehouse.table_kind(cur, name) is not None
