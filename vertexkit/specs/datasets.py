"""Managed datasets (`datasets.create`) and a training pipeline's `inputDataConfig`, checked as
Vertex checks them.

A tabular dataset is a pointer to its data: `metadata.inputConfig` names one BigQuery table
(`bigquerySource.uri`, `bq://project.dataset.table`) or CSV files (`gcsSource.uri`, a list of
`gs://` URIs). A training pipeline's `inputDataConfig` names the dataset, at most one way to
split it, and where the splits are exported for the trainer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from vertexkit.specs.errors import NotServedLocally, SpecError
from vertexkit.specs.naming import shorten
from vertexkit.specs.requests import validate_metadata

SCHEMA_PREFIX = "gs://google-cloud-aiplatform/schema/dataset/metadata/"
TABULAR_SCHEMA = SCHEMA_PREFIX + "tabular_1.0.0.yaml"
KNOWN_SCHEMAS = ("tabular", "time_series", "image", "text", "video")
BQ_TABLE_URI = re.compile(r"^bq://[a-z][a-z0-9-]{4,28}[a-z0-9](\.[A-Za-z0-9_]{1,1024}){2}$")
BQ_DESTINATION_URI = re.compile(r"^bq://[a-z][a-z0-9-]{4,28}[a-z0-9]$")
INPUT = "metadata.inputConfig"
SPLITS = ("fractionSplit", "filterSplit", "predefinedSplit", "timestampSplit", "stratifiedSplit")
DESTINATIONS = ("gcsDestination", "bigqueryDestination")
PREDEFINED_VALUES = ("training", "validation", "test")


class NotServedSchema(NotServedLocally):
    """A dataset kind Vertex has and the local cloud does not serve (answered 501)."""


def schema_kind(uri: Any) -> str:
    """`tabular` for `.../tabular_1.0.0.yaml`: the kind a metadataSchemaUri names."""
    if not isinstance(uri, str) or not uri:
        raise SpecError("metadataSchemaUri", f"required; e.g. {TABULAR_SCHEMA}")
    match = re.fullmatch(re.escape(SCHEMA_PREFIX) + r"([a-z_]+)_1\.0\.0\.yaml", uri)
    if not match or match.group(1) not in KNOWN_SCHEMAS:
        raise SpecError(
            "metadataSchemaUri",
            f"{shorten(uri)} is not a dataset metadata schema: use {SCHEMA_PREFIX}"
            f"<kind>_1.0.0.yaml with kind one of {', '.join(KNOWN_SCHEMAS)}",
        )
    return match.group(1)


def validate_dataset(dataset: Mapping[str, Any]) -> None:
    """Raises SpecError naming the first field Vertex would refuse in a Dataset to create."""
    validate_metadata(dataset, "")
    kind = schema_kind(dataset.get("metadataSchemaUri"))
    if kind != "tabular":
        raise NotServedSchema(
            "metadataSchemaUri",
            f"{kind} datasets are not served by the local cloud; it serves tabular ones "
            f"({TABULAR_SCHEMA})",
        )
    validate_tabular_input(dataset.get("metadata"))


def validate_tabular_input(metadata: Any) -> None:
    config = metadata.get("inputConfig") if isinstance(metadata, Mapping) else None
    if not isinstance(config, Mapping) or not config:
        raise SpecError(INPUT, "required: gcsSource.uri (CSV files) or bigquerySource.uri")
    gcs, bigquery = config.get("gcsSource"), config.get("bigquerySource")
    if gcs and bigquery:
        raise SpecError(INPUT, "set one of gcsSource and bigquerySource, not both")
    if bigquery:
        _check_bq_table(bigquery.get("uri") if isinstance(bigquery, Mapping) else None)
    elif gcs:
        _check_gcs_uris(gcs.get("uri") if isinstance(gcs, Mapping) else None)
    else:
        raise SpecError(INPUT, "required: gcsSource.uri (CSV files) or bigquerySource.uri")


def _check_bq_table(uri: Any) -> None:
    field = f"{INPUT}.bigquerySource.uri"
    if not isinstance(uri, str) or not BQ_TABLE_URI.match(uri):
        raise SpecError(field, f"must be bq://project.dataset.table; got {shorten(uri)}")


def _check_gcs_uris(uris: Any) -> None:
    field = f"{INPUT}.gcsSource.uri"
    if not isinstance(uris, list) or not uris:
        raise SpecError(field, "required: a list of gs://bucket/path.csv URIs")
    for index, uri in enumerate(uris):
        if not isinstance(uri, str) or not uri.startswith("gs://") or len(uri) <= len("gs://"):
            raise SpecError(f"{field}[{index}]", f"must be a gs:// URI; got {shorten(uri)}")


# -- a training pipeline's inputDataConfig ----------------------------------------------------
def validate_input_data_config(config: Mapping[str, Any], prefix: str = "inputDataConfig") -> None:
    """The dataset, at most one split and one destination, each well formed."""
    dataset_id = config.get("datasetId")
    if not isinstance(dataset_id, str) or not dataset_id.isdigit():
        raise SpecError(
            f"{prefix}.datasetId", f"required: a dataset's ID; got {shorten(dataset_id)}"
        )
    splits = [key for key in SPLITS if config.get(key)]
    if len(splits) > 1:
        raise SpecError(prefix, f"set at most one split; got {', '.join(splits)}")
    if splits:
        _check_split(splits[0], config[splits[0]], f"{prefix}.{splits[0]}")
    _check_destination(config, prefix)


def _check_split(kind: str, split: Mapping[str, Any], field: str) -> None:
    if kind == "fractionSplit":
        _check_fractions(split, field)
    elif kind == "predefinedSplit" and not split.get("key"):
        raise SpecError(f"{field}.key", "required: the column whose values are training, "
                        "validation or test")  # fmt: skip
    elif kind == "filterSplit":
        raise SpecError(field, "is supported only for unstructured datasets; a tabular dataset "
                        "takes fractionSplit, predefinedSplit or timestampSplit")  # fmt: skip
    elif kind == "timestampSplit":
        if not split.get("key"):
            raise SpecError(f"{field}.key", "required: the timestamp column to order rows by")
        _check_fractions(split, field)
    elif kind == "stratifiedSplit":
        raise SpecError(field, "is not served by the local cloud; use fractionSplit")


def _check_fractions(split: Mapping[str, Any], field: str) -> None:
    fractions = {
        key: split.get(key) or 0.0
        for key in ("trainingFraction", "validationFraction", "testFraction")
    }
    for key, value in fractions.items():
        if not isinstance(value, int | float) or not 0 <= value <= 1:
            raise SpecError(f"{field}.{key}", f"must be between 0 and 1; got {shorten(value)}")
    if sum(fractions.values()) > 1 + 1e-9:
        raise SpecError(field, f"the fractions add up to {sum(fractions.values()):g}; at most 1")


def _check_destination(config: Mapping[str, Any], prefix: str) -> None:
    gcs, bigquery = config.get("gcsDestination"), config.get("bigqueryDestination")
    if gcs and bigquery:
        raise SpecError(prefix, "set one of gcsDestination and bigqueryDestination, not both")
    if not gcs and not bigquery:
        raise SpecError(
            f"{prefix}.gcsDestination",
            "required: where the splits are exported (gcsDestination.outputUriPrefix or "
            "bigqueryDestination.outputUri)",
        )
    if gcs:
        uri = gcs.get("outputUriPrefix")
        if not isinstance(uri, str) or not uri.startswith("gs://") or len(uri) <= len("gs://"):
            raise SpecError(
                f"{prefix}.gcsDestination.outputUriPrefix",
                f"must be a gs:// URI; got {shorten(uri)}",
            )
    else:
        uri = bigquery.get("outputUri")
        if not isinstance(uri, str) or not BQ_DESTINATION_URI.match(uri):
            raise SpecError(
                f"{prefix}.bigqueryDestination.outputUri",
                f"must be bq://project (a new dataset is made there); got {shorten(uri)}",
            )


def fractions_of(config: Mapping[str, Any]) -> tuple[float, float, float]:
    """The training, validation and test fractions a config asks for (Vertex's 80/10/10
    when it names no split)."""
    split = config.get("fractionSplit") or config.get("timestampSplit")
    if not split:
        return (0.8, 0.1, 0.1)
    return (
        float(split.get("trainingFraction") or 0.0),
        float(split.get("validationFraction") or 0.0),
        float(split.get("testFraction") or 0.0),
    )
