"""datasets.import and datasets.export for the tabular datasets the local cloud holds.

- import: a tabular dataset is made from its source (`metadata.inputConfig`), never imported
  into; Vertex answers FAILED_PRECONDITION, and so does the local cloud, after the request is
  checked as Vertex checks it (`importConfigs[]` with `gcsSource.uris` and `importSchemaUri`).
- export: the rows are split (`exportConfig.fractionSplit`, 80/10/10 when none) and written as
  CSV with a header under `<outputUriPrefix>/export-data-<display name>-<timestamp>/`, the
  folder the reference names for `gcsDestination`. `exportUse=CUSTOM_CODE_TRAINING` answers
  the three `.../training-*` wildcards in `exportedFiles` (the reference's wording); otherwise
  the files written. `filterSplit`, `annotationsFilter`, `annotationSchemaUri` and
  `savedQueryId` select annotations, which a tabular dataset has none of: each is a 400.
"""

from __future__ import annotations

import zlib
from datetime import datetime, timezone

from vertexkit.local.errors import bad_request, failed_precondition
from vertexkit.local.vertex import protos
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.datasets.export import SPLITS, split_rows, write_csv
from vertexkit.local.vertex.datasets.sources import read_frame
from vertexkit.local.vertex.router import VertexRequest
from vertexkit.local.vertex.store import Resource
from vertexkit.runtime.gapic import aiplatform_v1

ANNOTATION_FIELDS = ("filterSplit", "annotationsFilter", "annotationSchemaUri", "savedQueryId")
FRACTIONS = ("trainingFraction", "validationFraction", "testFraction")


def dataset_of(backend: VertexBackend, request: VertexRequest) -> Resource:
    return backend.store.get(request.path.rsplit(":", 1)[0], kind="Dataset")


# -- import ---------------------------------------------------------------------------------------
def import_data(backend: VertexBackend, request: VertexRequest) -> Resource:
    body = protos.to_dict(protos.parse(aiplatform_v1.ImportDataRequest, request.body))
    dataset = dataset_of(backend, request)
    check_import_configs(body.get("importConfigs") or [])
    raise failed_precondition(
        f"Dataset {dataset['name']} is a tabular dataset: its data is read from its "
        "metadata.inputConfig source, and ImportData is not supported for tabular datasets."
    )


def check_import_configs(configs: list[Resource]) -> None:
    if not configs:
        raise bad_request("importConfigs: required; at least one ImportDataConfig.")
    for index, config in enumerate(configs):
        if not (config.get("gcsSource") or {}).get("uris"):
            raise bad_request(f"importConfigs[{index}].gcsSource.uris: required.")
        if not config.get("importSchemaUri"):
            raise bad_request(f"importConfigs[{index}].importSchemaUri: required.")


# -- export ---------------------------------------------------------------------------------------
def export_data(backend: VertexBackend, request: VertexRequest) -> Resource:
    body = protos.to_dict(protos.parse(aiplatform_v1.ExportDataRequest, request.body))
    dataset = dataset_of(backend, request)
    config = checked_export_config(body.get("exportConfig") or {})
    folder = export_folder(config["gcsDestination"]["outputUriPrefix"], dataset)
    parts = split_rows(read_frame(backend, dataset), {"fractionSplit": config.get("fractionSplit")},
                       seed=zlib.crc32(dataset["name"].encode()))  # fmt: skip
    write_csv(backend, parts, folder)
    operation = backend.operations.start(
        dataset["name"], "ExportDataOperationMetadata", "ExportDataResponse"
    )
    backend.store.mutate(
        operation["name"], lambda op: op["metadata"].update(gcsOutputDirectory=f"{folder}/")
    )
    return backend.operations.finish(operation["name"], {"exportedFiles": exported(config, folder)})


def checked_export_config(config: Resource) -> Resource:
    for field in ANNOTATION_FIELDS:
        if config.get(field):
            raise bad_request(
                f"exportConfig.{field}: selects annotations, and a tabular dataset has none; "
                "split the rows with exportConfig.fractionSplit."
            )
    if not (config.get("gcsDestination") or {}).get("outputUriPrefix", "").startswith("gs://"):
        raise bad_request("exportConfig.gcsDestination.outputUriPrefix: required, a gs:// URI.")
    check_fractions(config.get("fractionSplit"))
    return config


def check_fractions(split: Resource | None) -> None:
    """Vertex's rule: each fraction in [0, 1] and their sum at most 1."""
    values = [float((split or {}).get(name) or 0.0) for name in FRACTIONS]
    if any(v < 0 or v > 1 for v in values) or sum(values) > 1 + 1e-9:
        raise bad_request(
            "exportConfig.fractionSplit: trainingFraction, validationFraction and testFraction "
            f"must each be in [0, 1] and sum to at most 1; got {values}."
        )


def export_folder(prefix: str, dataset: Resource) -> str:
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return f"{prefix.rstrip('/')}/export-data-{dataset.get('displayName', '')}-{now}"


def exported(config: Resource, folder: str) -> list[str]:
    if config.get("exportUse") == "CUSTOM_CODE_TRAINING":
        return [f"{folder}/{split}-*" for split in SPLITS]
    return [f"{folder}/{split}-00000-of-00001.csv" for split in SPLITS]
