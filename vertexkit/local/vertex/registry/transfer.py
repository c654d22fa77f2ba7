"""models.copy, models.export and models.listCheckpoints: a model version leaving its entry.

* copy: the source version's Model JSON becomes version 1 of a new model (or the next version of
  `parentModel`) in the request's location, with `modelSourceInfo.copy` and `originalModelInfo`
  set as Vertex sets them. On Google the artifacts are copied into the destination region's
  managed storage; locally the copy's `artifactUri` points at the same files (one machine, one
  Cloud Storage). `encryptionSpec` is recorded on the copy (nothing is encrypted locally);
  `customServiceAccount` is refused.
* export: the `custom-trained` format's ARTIFACT content is copied, file by file through the
  local Cloud Storage, into `<outputUriPrefix>/model-export-<display name>-<timestamp>/`, and
  the operation's metadata names that folder (`outputInfo.artifactOutputUri`). IMAGE export is
  refused: there is no container registry locally.
* listCheckpoints: checkpoints are kept only for Model Garden tuned models; a local model has
  none, so the list is empty.
"""

from __future__ import annotations

import datetime
from typing import Any, NoReturn

from vertexkit.local.errors import bad_request, refused
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.protos import parse, to_dict
from vertexkit.local.vertex.registry.models import ModelRegistry, export_formats
from vertexkit.local.vertex.store import Resource
from vertexkit.runtime.gapic import aiplatform_v1

# Written by Vertex, never carried from the source version to its copy.
NOT_COPIED = (
    "versionId", "versionAliases", "deployedModels", "createTime", "updateTime",
    "versionCreateTime", "versionUpdateTime", "_name", "name",
)  # fmt: skip


def copy_model(models: ModelRegistry, location: str, body: dict[str, Any]) -> Resource:
    """models.copy: the LRO, done, answering CopyModelResponse{model, modelVersionId}."""
    request = parse(aiplatform_v1.CopyModelRequest, body)
    if not request.source_model:
        raise bad_request("source_model is required: projects/P/locations/L/models/M[@version].")
    if request.custom_service_account:
        raise refused(
            "custom_service_account is not honoured locally: the copy runs as the local "
            "cloud, with no service account to impersonate; omit it."
        )
    _, source = models.resolve_name(request.source_model)
    copied = _copied_json(source, request)
    model, version_id = models.add_version(
        location, request.parent_model, request.model_id, copied, []
    )
    return models.backend.operations.run_now(
        model["name"],
        "CopyModelOperationMetadata",
        "CopyModelResponse",
        {"model": model["name"], "modelVersionId": version_id},
    )


def _copied_json(source: Resource, request: aiplatform_v1.CopyModelRequest) -> Resource:
    copied = {key: value for key, value in source.items() if key not in NOT_COPIED}
    source_info = dict(copied.get("modelSourceInfo") or {"sourceType": "CUSTOM"})
    copied["modelSourceInfo"] = {**source_info, "copy": True}
    copied["originalModelInfo"] = {"model": source["_name"]}
    if request.encryption_spec.kms_key_name:
        copied["encryptionSpec"] = to_dict(request.encryption_spec)
    return copied


def export_model(backend: VertexBackend, version: Resource, body: dict[str, Any]) -> Resource:
    """models.export: copies the artifact; the LRO's metadata carries `outputInfo`."""
    config = to_dict(parse(aiplatform_v1.ExportModelRequest, body).output_config)
    format_id = _export_format(version, config.get("exportFormatId", ""))
    if config.get("imageDestination"):
        raise refused(
            "output_config.image_destination: exporting the serving image needs a container "
            "registry, and the local cloud has none; export the artifact "
            "(output_config.artifact_destination) instead."
        )
    prefix = (config.get("artifactDestination") or {}).get("outputUriPrefix", "")
    if not prefix.startswith("gs://"):
        raise bad_request(
            "output_config.artifact_destination.output_uri_prefix is required: a gs:// folder."
        )
    if "ARTIFACT" not in _contents(version, format_id):
        raise bad_request(f"Model {version['_name']} has no artifact_uri: no ARTIFACT to export.")
    output_uri = _export_folder(prefix, version)
    _copy_tree(backend, version["artifactUri"], output_uri)
    return _finished_export(backend, version["name"], output_uri)


def _export_format(version: Resource, requested: str) -> str:
    """The format asked for; the model's first supported one when empty, as Vertex defaults."""
    formats = [item["id"] for item in _formats(version)]
    if not requested:
        return formats[0]
    if requested not in formats:
        raise bad_request(
            f"output_config.export_format_id {requested!r} is not supported by model "
            f"{version['_name']}; its supported_export_formats are {formats}."
        )
    return requested


def _formats(version: Resource) -> list[Resource]:
    # Versions stored before export formats were recorded get them computed the same way.
    return version.get("supportedExportFormats") or export_formats(version)


def _contents(version: Resource, format_id: str) -> list[str]:
    return next(f["exportableContents"] for f in _formats(version) if f["id"] == format_id)


def _export_folder(prefix: str, version: Resource) -> str:
    """`model-export-<display name>-<YYYY-MM-DDThh:mm:ss.sssZ>`, as the reference names it."""
    now = datetime.datetime.now(datetime.UTC)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
    return f"{prefix.rstrip('/')}/model-export-{version.get('displayName', '')}-{stamp}"


def _copy_tree(backend: VertexBackend, source_uri: str, target_uri: str) -> None:
    """Every object under `source_uri`, written under `target_uri` through Cloud Storage."""
    source_bucket, _, source_prefix = source_uri.removeprefix("gs://").partition("/")
    target_bucket, _, target_prefix = target_uri.removeprefix("gs://").partition("/")
    folder = source_prefix.rstrip("/") + "/" if source_prefix.strip("/") else ""
    for name in backend.storage.list_objects(source_bucket, folder):
        relative = name[len(folder) :]
        path = backend.storage.object_path(source_bucket, name)
        backend.storage.write_object(target_bucket, f"{target_prefix}/{relative}", path)


def _finished_export(backend: VertexBackend, parent: str, output_uri: str) -> Resource:
    operation = backend.operations.start(
        parent, "ExportModelOperationMetadata", "ExportModelResponse"
    )

    def record_output(doc: Resource) -> None:
        doc["metadata"]["outputInfo"] = {"artifactOutputUri": output_uri}

    backend.store.mutate(operation["name"], record_output, "Operation")
    return backend.operations.finish(operation["name"], {})


def list_checkpoints(models: ModelRegistry, location: str, model_param: str) -> Resource:
    """A local model version has no checkpoints (Vertex keeps them for tuned models only)."""
    models.resolve(location, model_param)  # a missing model or version is a 404
    return {}


def refuse_explanation_dataset(
    models: ModelRegistry, location: str, model_param: str, body: dict[str, Any]
) -> NoReturn:
    parse(aiplatform_v1.UpdateExplanationDatasetRequest, body)
    models.resolve(location, model_param)
    raise refused(
        "updateExplanationDataset feeds example-based explanations (a nearest-neighbour index "
        "built by Vertex over the examples' embeddings), which the local cloud does not build; "
        "it explains with sampled Shapley only."
    )
