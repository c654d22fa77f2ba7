"""A BatchPredictionJob create request (`batchPredictionJobs.create`), checked as Vertex checks it.

The job's own fields: display name and labels, the model, where instances come from
(`inputConfig`), where predictions go (`outputConfig`), the serving machines
(`dedicatedResources`, with the serving machine rules) and how rows become instances
(`instanceConfig`). Whether the model exists and takes the input format is the registry's to
say; this module needs no state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from vertexkit.specs.base import spec_errors
from vertexkit.specs.errors import SpecError, allowed, join_path
from vertexkit.specs.machines import MachineSpec
from vertexkit.specs.requests import validate_metadata

INPUT_FORMATS = ("jsonl", "csv", "bigquery")
OUTPUT_FORMATS = ("jsonl", "bigquery")
INSTANCE_TYPES = ("object", "array")
MAX_REPLICAS = 1000
GCS_URI = re.compile(r"^gs://[a-z0-9][a-z0-9._-]{1,221}[a-z0-9](/.*)?$")
BQ_PART = r"(?:[A-Za-z0-9.-]+:)?[A-Za-z0-9_-]+"  # a domain-scoped project has `domain:`
BQ_PROJECT = re.compile(rf"^bq://(?P<project>{BQ_PART})$")
BQ_DATASET = re.compile(rf"^bq://(?P<project>{BQ_PART})\.(?P<dataset>\w+)$")
BQ_TABLE = re.compile(rf"^bq://(?P<project>{BQ_PART})\.(?P<dataset>\w+)\.(?P<table>[\w$-]+)$")


def validate_batch_prediction_job(job: Mapping[str, Any]) -> None:
    """Raises SpecError naming the first field Vertex would refuse."""
    validate_metadata(job, "")
    if not job.get("model"):
        raise SpecError("model", "required: the Model (projects/P/locations/L/models/ID[@V])")
    input_format = _check_input(job.get("inputConfig") or {})
    _check_output(job.get("outputConfig") or {})
    _check_resources(job.get("dedicatedResources"))
    _check_batch_size(job.get("manualBatchTuningParameters") or {})
    check_instance_config(job.get("instanceConfig") or {}, input_format)


# -- input -------------------------------------------------------------------------------------
def _check_input(config: Mapping[str, Any]) -> str:
    fmt = config.get("instancesFormat")
    if not fmt:
        raise SpecError(
            "inputConfig.instancesFormat", f"required; allowed: {allowed(INPUT_FORMATS)}"
        )
    gcs, bq = config.get("gcsSource"), config.get("bigquerySource")
    if bool(gcs) == bool(bq):
        raise SpecError("inputConfig", "set exactly one of gcsSource and bigquerySource")
    if bq:
        if fmt != "bigquery":
            raise SpecError(
                "inputConfig.instancesFormat", f"must be bigquery with bigquerySource; got {fmt!r}"
            )
        check_bq_table(bq.get("inputUri"), "inputConfig.bigquerySource.inputUri")
        return fmt
    if fmt == "bigquery":
        raise SpecError(
            "inputConfig.instancesFormat", "bigquery needs bigquerySource, not gcsSource"
        )
    _check_gcs_uris(list(gcs.get("uris") or []))
    return fmt


def _check_gcs_uris(uris: list[str]) -> None:
    if not uris:
        raise SpecError("inputConfig.gcsSource.uris", "at least one gs:// URI is required")
    for index, uri in enumerate(uris):
        check_gcs_uri(uri, f"inputConfig.gcsSource.uris[{index}]")


def check_gcs_uri(uri: Any, field: str) -> None:
    if not isinstance(uri, str) or not GCS_URI.match(uri):
        raise SpecError(field, f"must be a gs://bucket/path URI; got {uri!r}")


def check_bq_table(uri: Any, field: str) -> re.Match[str]:
    found = BQ_TABLE.match(uri) if isinstance(uri, str) else None
    if not found:
        raise SpecError(field, f"must be bq://project.dataset.table; got {uri!r}")
    return found


# -- output ------------------------------------------------------------------------------------
def _check_output(config: Mapping[str, Any]) -> None:
    fmt = config.get("predictionsFormat")
    if fmt not in OUTPUT_FORMATS:
        raise SpecError(
            "outputConfig.predictionsFormat", f"allowed: {allowed(OUTPUT_FORMATS)}; got {fmt!r}"
        )
    gcs, bq = config.get("gcsDestination"), config.get("bigqueryDestination")
    if bool(gcs) == bool(bq):
        raise SpecError("outputConfig", "set exactly one of gcsDestination and bigqueryDestination")
    if bq:
        if fmt != "bigquery":
            raise SpecError(
                "outputConfig.predictionsFormat",
                f"must be bigquery with bigqueryDestination; got {fmt!r}",
            )
        check_bq_destination(bq.get("outputUri"), "outputConfig.bigqueryDestination.outputUri")
        return
    if fmt == "bigquery":
        raise SpecError("outputConfig.predictionsFormat", "bigquery needs bigqueryDestination")
    check_gcs_uri(gcs.get("outputUriPrefix"), "outputConfig.gcsDestination.outputUriPrefix")


def check_bq_destination(uri: Any, field: str) -> None:
    if isinstance(uri, str) and any(form.match(uri) for form in (BQ_PROJECT, BQ_DATASET, BQ_TABLE)):
        return
    raise SpecError(
        field,
        f"must be bq://project, bq://project.dataset or bq://project.dataset.table; got {uri!r}",
    )


# -- machines ----------------------------------------------------------------------------------
def _check_resources(resources: Mapping[str, Any] | None) -> None:
    field = "dedicatedResources"
    if not resources:
        raise SpecError(field, "required for a custom-trained model: give machineSpec.machineType")
    machine = resources.get("machineSpec") or {}
    if not machine.get("machineType"):
        raise SpecError(f"{field}.machineSpec.machineType", "required; e.g. n1-standard-4")
    with spec_errors(f"{field}.machineSpec"):
        spec = MachineSpec.model_validate(dict(machine))
    spec.check(f"{field}.machineSpec", for_prediction=True)  # the serving machine rules
    starting = int(resources.get("startingReplicaCount") or 0)
    maximum = int(resources.get("maxReplicaCount") or 0)
    for name, count in (("startingReplicaCount", starting), ("maxReplicaCount", maximum)):
        if not 0 <= count <= MAX_REPLICAS:
            raise SpecError(f"{field}.{name}", f"must be 0..{MAX_REPLICAS}; got {count}")
    if maximum and starting > maximum:
        raise SpecError(
            f"{field}.startingReplicaCount",
            f"must be at most maxReplicaCount ({maximum}); got {starting}",
        )


def _check_batch_size(tuning: Mapping[str, Any]) -> None:
    size = int(tuning.get("batchSize") or 0)
    if size < 0:
        raise SpecError("manualBatchTuningParameters.batchSize", f"must be >= 0; got {size}")


# -- instances ---------------------------------------------------------------------------------
def check_instance_config(config: Mapping[str, Any], input_format: str) -> None:
    """`instanceConfig` as Vertex reads it: a known instance type, not both field lists, the
    field lists only where rows have field names, array-of-objects needs an order."""
    field = "instanceConfig"
    kind = config.get("instanceType") or ""
    if kind and kind not in INSTANCE_TYPES:
        raise SpecError(
            f"{field}.instanceType", f"allowed: {allowed(INSTANCE_TYPES)}; got {kind!r}"
        )
    included, excluded = config.get("includedFields") or [], config.get("excludedFields") or []
    if included and excluded:
        raise SpecError(f"{field}.excludedFields", "cannot be set together with includedFields")
    if (included or excluded) and input_format == "csv":
        name = "includedFields" if included else "excludedFields"
        raise SpecError(f"{field}.{name}", "applies to jsonl objects and bigquery rows, not csv")
    if kind == "object" and input_format == "csv":
        raise SpecError(f"{field}.instanceType", "object does not apply to csv input")
    _check_names(config, field)
    key = config.get("keyField")
    if key and key in excluded:
        raise SpecError(f"{field}.keyField", f"{key!r} is also in excludedFields")


def _check_names(config: Mapping[str, Any], field: str) -> None:
    for name in ("includedFields", "excludedFields"):
        values = list(config.get(name) or [])
        for index, value in enumerate(values):
            if not value:
                raise SpecError(join_path(join_path(field, name), index), "must not be empty")
        if len(set(values)) != len(values):
            raise SpecError(join_path(field, name), "lists a field twice")
