"""What BigQuery's REST API accepts in a request body, checked once per request before anything
is created: the field names of each message (an unknown one is refused by name, as BigQuery's
JSON parser does), the type of the fields the local BigQuery reads, IDs, labels and counters.

A message is a dict from field name to its kind: another message (a dict), or one of the
scalar kinds below. Fields the local BigQuery only stores or ignores are `ANY`.
"""

from __future__ import annotations

import re
from typing import Any

from vertexkit.local.errors import ApiError, bad_request
from vertexkit.specs import SpecError, validate_labels

ANY, STRING, BOOLEAN, LIST = "any", "string", "boolean", "list"
INTEGER = "integer"  # non-negative; int64 fields come as JSON strings
LABELS = "labels"

DATASET_ID = re.compile(r"^[A-Za-z0-9_]{1,1024}$")
JOB_ID = re.compile(r"^[A-Za-z0-9_\-]{1,1024}$")
# Table IDs: letters, marks, digits, connectors (_), dashes and spaces; at most 1024 bytes.
TABLE_ID = re.compile(r"^[\w\- $]+$")
MAX_ID_BYTES = 1024


def _fields(kind: str, names: str) -> dict[str, Any]:
    return dict.fromkeys(names.split(), kind)


DATASET_REFERENCE = {"projectId": STRING, "datasetId": STRING}
TABLE_REFERENCE = {"projectId": STRING, "datasetId": STRING, "tableId": STRING}
JOB_REFERENCE = {"projectId": STRING, "jobId": STRING, "location": STRING}
SCHEMA = {"fields": LIST}

QUERY_CONFIG = {
    **_fields(
        ANY,
        "tableDefinitions userDefinedFunctionResources priority preserveNulls allowLargeResults "
        "useQueryCache flattenResults maximumBillingTier maximumBytesBilled queryParameters "
        "systemVariables schemaUpdateOptions timePartitioning rangePartitioning clustering "
        "destinationEncryptionConfiguration scriptOptions connectionProperties createSession "
        "continuous writeIncrementalResults",
    ),
    **_fields(STRING, "query createDisposition writeDisposition parameterMode"),
    "useLegacySql": BOOLEAN,
    "destinationTable": TABLE_REFERENCE,
    "defaultDataset": DATASET_REFERENCE,
}
LOAD_CONFIG = {
    **_fields(
        ANY,
        "fileSetSpecType destinationTableProperties nullMarkers encoding maxBadRecords "
        "schemaInlineFormat schemaInline allowQuotedNewlines allowJaggedRows ignoreUnknownValues "
        "projectionFields autodetect schemaUpdateOptions timePartitioning rangePartitioning "
        "clustering destinationEncryptionConfiguration useAvroLogicalTypes "
        "referenceFileSchemaUri hivePartitioningOptions decimalTargetTypes jsonExtension "
        "parquetOptions preserveAsciiControlCharacters connectionProperties createSession "
        "columnNameCharacterMap copyFilesOnly timeZone dateFormat datetimeFormat timeFormat "
        "timestampFormat sourceColumnMatch skipLeadingRows",
    ),
    **_fields(
        STRING,
        "createDisposition writeDisposition nullMarker fieldDelimiter quote sourceFormat",
    ),
    "sourceUris": LIST,
    "schema": SCHEMA,
    "destinationTable": TABLE_REFERENCE,
}
COPY_CONFIG = {
    **_fields(ANY, "destinationEncryptionConfiguration operationType destinationExpirationTime"),
    **_fields(STRING, "createDisposition writeDisposition"),
    "sourceTable": TABLE_REFERENCE,
    "sourceTables": LIST,
    "destinationTable": TABLE_REFERENCE,
}
EXTRACT_CONFIG = {
    **_fields(ANY, "printHeader useAvroLogicalTypes sourceModel modelExtractOptions"),
    **_fields(STRING, "destinationUri fieldDelimiter destinationFormat compression"),
    "destinationUris": LIST,
    "sourceTable": TABLE_REFERENCE,
}
JOB_CONFIGURATION = {
    "query": QUERY_CONFIG,
    "load": LOAD_CONFIG,
    "copy": COPY_CONFIG,
    "extract": EXTRACT_CONFIG,
    **_fields(ANY, "jobType dryRun reservation maxSlots"),
    "jobTimeoutMs": INTEGER,
    "labels": LABELS,
}
JOB = {
    **_fields(ANY, "kind etag id selfLink user_email statistics status principal_subject"),
    "jobCreationReason": ANY,
    "configuration": JOB_CONFIGURATION,
    "jobReference": JOB_REFERENCE,
}
QUERY_REQUEST = {
    **_fields(
        ANY,
        "kind dryRun preserveNulls useQueryCache parameterMode queryParameters location "
        "formatOptions connectionProperties maximumBytesBilled requestId createSession "
        "writeIncrementalResults reservation maxSlots queryResultsFormat "
        "arrowSerializationOptions destinationEncryptionConfiguration jobCreationMode continuous",
    ),
    "query": STRING,
    "useLegacySql": BOOLEAN,
    "defaultDataset": DATASET_REFERENCE,
    **_fields(INTEGER, "maxResults timeoutMs jobTimeoutMs"),
    "labels": LABELS,
}
DATASET = {
    **_fields(
        ANY,
        "kind etag id selfLink friendlyName description defaultTableExpirationMs "
        "defaultPartitionExpirationMs access creationTime lastModifiedTime location "
        "defaultEncryptionConfiguration satisfiesPzs satisfiesPzi type linkedDatasetSource "
        "linkedDatasetMetadata externalDatasetReference externalCatalogDatasetOptions "
        "isCaseInsensitive defaultCollation defaultRoundingMode maxTimeTravelHours tags "
        "storageBillingModel restrictions resourceTags",
    ),
    "datasetReference": DATASET_REFERENCE,
    "labels": LABELS,
}
TABLE = {
    **_fields(
        ANY,
        "kind etag id selfLink friendlyName description timePartitioning rangePartitioning "
        "clustering requirePartitionFilter partitionDefinition numBytes numPhysicalBytes "
        "numLongTermBytes numRows creationTime expirationTime lastModifiedTime type "
        "materializedView materializedViewStatus externalDataConfiguration biglakeConfiguration "
        "managedTableType location streamingBuffer encryptionConfiguration snapshotDefinition "
        "defaultCollation defaultRoundingMode cloneDefinition numTimeTravelPhysicalBytes "
        "numTotalLogicalBytes numActiveLogicalBytes numLongTermLogicalBytes "
        "numCurrentPhysicalBytes numTotalPhysicalBytes numActivePhysicalBytes "
        "numLongTermPhysicalBytes numPartitions maxStaleness restrictions tableConstraints "
        "resourceTags tableReplicationInfo replicas externalCatalogTableOptions",
    ),
    "tableReference": TABLE_REFERENCE,
    "schema": SCHEMA,
    "view": {
        "query": STRING,
        "useLegacySql": BOOLEAN,
        **_fields(
            ANY,
            "userDefinedFunctionResources useExplicitColumnNames privacyPolicy foreignDefinitions",
        ),
    },
    "labels": LABELS,
}


# -- entry points: one per request kind ------------------------------------------------------
def validate_job(body: Any) -> None:
    _check_message(body, JOB, "job")
    job_id = (body.get("jobReference") or {}).get("jobId")
    if job_id is not None:
        check_id(job_id, "jobReference.jobId", JOB_ID, "letters, digits, '_' and '-'")
    _check_references(body.get("configuration") or {})


def validate_query_request(body: Any) -> None:
    _check_message(body, QUERY_REQUEST, "")
    _check_dataset_reference(body.get("defaultDataset"), "defaultDataset")


def validate_dataset(body: Any, *, creating: bool) -> None:
    _check_message(body, DATASET, "dataset")
    reference = body.get("datasetReference")
    if creating or reference is not None:
        _check_dataset_reference(reference or {}, "datasetReference", required=creating)


def validate_table(body: Any, *, creating: bool) -> None:
    _check_message(body, TABLE, "table")
    reference = body.get("tableReference")
    if creating or reference is not None:
        _check_table_reference(reference or {}, "tableReference", required=creating)


def check_id(value: Any, field: str, pattern: re.Pattern[str], allowed: str) -> None:
    text = value if isinstance(value, str) else ""
    if not pattern.match(text) or len(text.encode()) > MAX_ID_BYTES:
        raise bad_request(
            f"Invalid value for {field}: {value!r}; use {allowed}, at most 1024 characters"
        )


# -- the walk --------------------------------------------------------------------------------
def _check_message(value: Any, message: dict[str, Any], where: str) -> None:
    if not isinstance(value, dict):
        raise _invalid(where, f"expected an object, got {_json_kind(value)}")
    for name, item in value.items():
        if name not in message:
            at = f" at '{where}'" if where else ""
            raise bad_request(
                f'Invalid JSON payload received. Unknown name "{name}"{at}: Cannot find field.'
            )
        if item is not None:
            _check_value(item, message[name], f"{where}.{name}" if where else name)


def _check_value(value: Any, kind: Any, where: str) -> None:
    if isinstance(kind, dict):
        _check_message(value, kind, where)
    elif kind == STRING and not isinstance(value, str):
        raise _invalid(where, f"expected a string, got {_json_kind(value)}")
    elif kind == BOOLEAN and not isinstance(value, bool):
        raise _invalid(where, f"expected true or false, got {_json_kind(value)}")
    elif kind == LIST and not isinstance(value, list):
        raise _invalid(where, f"expected a list, got {_json_kind(value)}")
    elif kind == INTEGER:
        _check_counter(value, where)
    elif kind == LABELS:
        try:
            validate_labels(value, where)
        except SpecError as error:
            raise bad_request(f"Invalid value at '{error.field}': {error.reason}") from error


def _check_counter(value: Any, where: str) -> None:
    """Counters (maxResults, timeoutMs, jobTimeoutMs) are non-negative; int64s come as strings."""
    text = str(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    if not text.isdigit():
        raise _invalid(where, f"expected a non-negative integer, got {value!r}")


def _check_references(config: dict) -> None:
    for kind in ("query", "load", "copy", "extract"):
        part = config.get(kind) or {}
        for key in ("destinationTable", "sourceTable"):
            if part.get(key) is not None:
                _check_table_reference(part[key], f"configuration.{kind}.{key}")
        for index, source in enumerate(part.get("sourceTables") or []):
            where = f"configuration.{kind}.sourceTables[{index}]"
            _check_message(source, TABLE_REFERENCE, where)
            _check_table_reference(source, where)
        if part.get("defaultDataset") is not None:
            _check_dataset_reference(part["defaultDataset"], f"configuration.{kind}.defaultDataset")


def _check_dataset_reference(reference: Any, where: str, required: bool = True) -> None:
    if reference is None:
        return
    if required or "datasetId" in reference:
        allowed = "letters, digits and '_'"
        check_id(reference.get("datasetId"), f"{where}.datasetId", DATASET_ID, allowed)


def _check_table_reference(reference: Any, where: str, required: bool = True) -> None:
    _check_dataset_reference(reference, where, required)
    if required or "tableId" in reference:
        allowed = "letters, marks, digits, '_', '-' and spaces"
        check_id(reference.get("tableId"), f"{where}.tableId", TABLE_ID, allowed)


def _invalid(where: str, why: str) -> ApiError:
    return bad_request(f"Invalid value at '{where or 'request'}': {why}")


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return "a list"
    return "null" if value is None else "an object"
