"""Model Registry state: models, their versions and aliases, and model evaluations.

Storage layout in the resource store:

* `models`: one document per model (`.../models/ID`) holding the alias map
  `{alias: versionId}`. Aliases live here, on the model, so an alias is unique per model and
  `default` is on exactly one version by construction.
* `modelVersions`: one document per version (`.../models/ID@V`), the Model JSON Vertex answers
  with (its `name` is the unversioned model name, as on Vertex), minus `versionAliases`.
* `modelEvaluations`: `.../models/ID/evaluations/E`, with the version it belongs to.

Version IDs come from `store.next_counter`, so parallel uploads never share or skip one.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from vertexkit.local.errors import bad_request, conflict, failed_precondition, not_found
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.protos import parse, to_dict
from vertexkit.local.vertex.registry import dispositions as fields
from vertexkit.local.vertex.registry.filters import compile_filter
from vertexkit.local.vertex.store import Resource, apply_update_mask, now_rfc3339
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.runtime.prebuilt import ServingError, model_file, prebuilt_framework
from vertexkit.specs.requests import validate_metadata, validate_update
from vertexkit.specs.serving import validate_container_spec

DEFAULT_ALIAS = "default"
ALIAS = re.compile(r"^[a-z][a-zA-Z0-9-]{0,126}[a-z0-9-]$")
MODEL_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
UPDATABLE_FIELDS = {
    "displayName": "display_name",
    "description": "description",
    "labels": "labels",
    "versionDescription": "version_description",
}
# What Vertex sets on a custom-trained Model (prebuilt or custom serving container).
CUSTOM_MODEL_DEFAULTS: Resource = {
    "supportedDeploymentResourcesTypes": ["DEDICATED_RESOURCES"],
    "supportedInputStorageFormats": [
        "jsonl",
        "bigquery",
        "csv",
        "tf-record",
        "tf-record-gzip",
        "file-list",
    ],
    "supportedOutputStorageFormats": ["jsonl", "bigquery"],
}


def export_formats(model_json: Resource) -> list[Resource]:
    """What Vertex lists for a custom-trained Model: the `custom-trained` format, its artifact
    exportable when it has an artifact_uri, its serving image always."""
    contents = (["ARTIFACT"] if model_json.get("artifactUri") else []) + ["IMAGE"]
    return [{"id": "custom-trained", "exportableContents": contents}]




def split_ref(model_param: str) -> tuple[str, str | None]:
    """'ID@2' -> ('ID', '2'); 'ID@golden' -> ('ID', 'golden'); 'ID' -> ('ID', None)."""
    model_id, _, ref = model_param.partition("@")
    return model_id, ref or None


def validate_aliases(aliases: list[str], field: str, allow_removal: bool = False) -> None:
    seen: set[str] = set()
    for alias in aliases:
        bare = alias[1:] if allow_removal and alias.startswith("-") else alias
        if not ALIAS.match(bare) or bare.isdigit():
            raise bad_request(
                f"{field}: invalid alias {alias!r}; an alias has at most 128 characters, matches "
                "[a-z][a-zA-Z0-9-]{0,126}[a-z0-9-] and is not a number."
            )
        if alias in seen:
            raise bad_request(f"{field}: alias {alias!r} is listed twice.")
        seen.add(alias)


class ModelRegistry:
    """Models, versions, aliases and evaluations over the shared resource store."""

    def __init__(self, backend: VertexBackend, lock: threading.RLock) -> None:
        self.backend = backend
        self.store = backend.store
        self.lock = lock

    # -- lookups -------------------------------------------------------------------------------
    def model_doc(self, model_name: str) -> Resource:
        found = self.store.find(model_name)
        if found is None:
            raise not_found(f"Model {model_name} does not exist.")
        return found

    def resolve(self, location: str, model_param: str) -> tuple[Resource, Resource]:
        """The (model, version) a `models/ID`, `models/ID@V` or `models/ID@ALIAS` names."""
        model_id, ref = split_ref(model_param)
        model = self.model_doc(f"{location}/models/{model_id}")
        version_id = ref if ref and ref.isdigit() else model["aliases"].get(ref or DEFAULT_ALIAS)
        version = self.store.find(f"{model['name']}@{version_id}") if version_id else None
        if version is None:
            raise not_found(f"Model {model['name']}@{ref} does not exist.")
        return model, version

    def resolve_name(self, name: str) -> tuple[Resource, Resource]:
        """Like `resolve`, from a full (optionally versioned) model resource name."""
        location, _, model_param = name.rpartition("/models/")
        if not location.startswith("projects/") or not model_param:
            raise bad_request(f"Invalid model resource name {name!r}.")
        return self.resolve(location, model_param)

    def versions(self, model_name: str) -> list[Resource]:
        location = model_name.rsplit("/models/", 1)[0]
        prefix = model_name + "@"
        found = [
            version
            for version in self.store.list("modelVersions", location)
            if version["_name"] == prefix + version["versionId"]
        ]
        return sorted(found, key=lambda version: int(version["versionId"]))

    def render(self, version: Resource, model: Resource | None = None) -> Resource:
        """A version as Vertex answers it: Model JSON with its aliases in the order they were
        given (the model's alias map keeps assignment order; see `_place_alias`)."""
        model = model or self.model_doc(version["name"])
        aliases = [a for a, v in model["aliases"].items() if v == version["versionId"]]
        body = {k: v for k, v in version.items() if not k.startswith("_")}
        if aliases:
            body["versionAliases"] = aliases
        return body

    # -- upload --------------------------------------------------------------------------------
    def upload(self, location: str, body: dict[str, Any]) -> Resource:
        """models.upload: a new model, or a new version of `parentModel`. Returns the LRO."""
        request = parse(aiplatform_v1.UploadModelRequest, body)
        model_json = to_dict(request.model)
        aliases = list(model_json.pop("versionAliases", []))
        validate_aliases(aliases, "model.version_aliases")
        self._validate_new_model(model_json)
        fields.check_refused(model_json, fields.MODEL_REFUSED, "model")
        model, version_id = self.add_version(
            location, request.parent_model, request.model_id, model_json, aliases
        )
        from vertexkit.local.vertex.registry.warmup import WARMUP

        WARMUP.start(model_json["containerSpec"]["imageUri"])  # for its deploy, soon after
        operation = self.backend.operations.run_now(
            model["name"],
            "UploadModelOperationMetadata",
            "UploadModelResponse",
            {"model": model["name"], "modelVersionId": version_id},
        )
        return fields.with_notes(self.store, operation, fields.model_notes(model_json))

    def add_version(
        self,
        location: str,
        parent_model: str,
        model_id: str,
        model_json: Resource,
        aliases: list[str],
    ) -> tuple[Resource, str]:
        """Stores `model_json` as a new model, or as the next version of `parent_model`."""
        with self.lock:
            model = self._target_model(location, parent_model, model_id)
            version_id = str(self.store.next_counter(model["name"] + "/versions"))
            self._insert_version(model, model_json, version_id)
            self._assign_aliases(model, version_id, aliases, first=version_id == "1")
        return model, version_id

    def _validate_new_model(self, model_json: Resource) -> None:
        validate_metadata(model_json, "model")
        image = (model_json.get("containerSpec") or {}).get("imageUri")
        if not image:
            raise bad_request(
                "model.container_spec.image_uri is required: a prebuilt prediction image or a "
                "custom serving container."
            )
        validate_container_spec(model_json["containerSpec"])  # a refused serving field: a 400
        artifact_uri = model_json.get("artifactUri")
        if artifact_uri:
            self._check_artifact(artifact_uri, image)
        elif prebuilt_framework(image):
            raise bad_request(f"model.artifact_uri is required with the prebuilt image {image}.")

    def _check_artifact(self, artifact_uri: str, image: str) -> None:
        if not artifact_uri.startswith("gs://"):
            raise bad_request(
                f"model.artifact_uri must be a gs:// URI on Cloud Storage; got {artifact_uri!r}."
            )
        path = self.backend.storage.gs_uri_to_path(artifact_uri)
        if not path.exists():
            raise bad_request(f"model.artifact_uri {artifact_uri} does not exist.")
        framework = prebuilt_framework(image)
        if framework in ("sklearn", "xgboost"):
            try:
                model_file(framework, path, artifact_uri)
            except ServingError as exc:
                raise bad_request(exc.message) from exc

    def _target_model(self, location: str, parent_model: str, model_id: str) -> Resource:
        if parent_model:
            if model_id:
                raise bad_request("model_id cannot be set together with parent_model.")
            parent_name = split_ref(parent_model)[0]
            if not parent_name.startswith(location + "/models/"):
                raise bad_request(f"parent_model {parent_model!r} is not a model in {location}.")
            return self.model_doc(parent_name)
        if model_id and not MODEL_ID.match(model_id):
            raise bad_request(
                f"model_id {model_id!r} is invalid: use 1-63 characters [a-z0-9_-], starting "
                "with a letter or digit."
            )
        name = f"{location}/models/{model_id or self.store.new_id()}"
        if self.store.find(name) is not None:
            raise conflict(f"Model {name} already exists.")
        model = {"name": name, "aliases": {}, "createTime": now_rfc3339()}
        return self.store.insert("models", name, model)

    def _insert_version(self, model: Resource, model_json: Resource, version_id: str) -> None:
        now = now_rfc3339()
        version = {
            **model_json,
            **CUSTOM_MODEL_DEFAULTS,
            "supportedExportFormats": export_formats(model_json),
            "name": model["name"],
            "versionId": version_id,
            "createTime": model["createTime"],
            "updateTime": now,
            "versionCreateTime": now,
            "versionUpdateTime": now,
            "_name": f"{model['name']}@{version_id}",
        }
        self.store.insert("modelVersions", version["_name"], version)

    def _assign_aliases(
        self, model: Resource, version_id: str, aliases: list[str], first: bool
    ) -> None:
        if first and DEFAULT_ALIAS not in aliases:
            aliases = [*aliases, DEFAULT_ALIAS]  # the first version is always the default

        def change(doc: Resource) -> None:
            for alias in aliases:  # an alias held by another version moves here
                _place_alias(doc, alias, version_id)

        model.update(self.store.mutate(model["name"], change, "Model"))

    # -- queries -------------------------------------------------------------------------------
    def list_models(self, location: str, expression: str | None) -> list[Resource]:
        matches = compile_filter(expression)
        rendered = []
        for model in self.store.list("models", location):
            default = self.store.find(f"{model['name']}@{model['aliases'].get(DEFAULT_ALIAS)}")
            if default is not None:
                body = self.render(default, model)
                if matches(body):
                    rendered.append(body)
        return rendered

    def list_versions(self, location: str, model_param: str, expression: str | None) -> list:
        model = self.model_doc(f"{location}/models/{split_ref(model_param)[0]}")
        matches = compile_filter(expression)
        bodies = [self.render(version, model) for version in self.versions(model["name"])]
        return [body for body in bodies if matches(body)]

    # -- changes -------------------------------------------------------------------------------
    def merge_aliases(self, location: str, model_param: str, body: dict[str, Any]) -> Resource:
        request = parse(aiplatform_v1.MergeVersionAliasesRequest, body)
        changes = list(request.version_aliases)
        if not changes:
            raise bad_request("version_aliases is required.")
        validate_aliases(changes, "version_aliases", allow_removal=True)
        added = [alias for alias in changes if not alias.startswith("-")]
        removes = {alias[1:] for alias in changes if alias.startswith("-")}
        # Adding and removing cancel out; the added ones keep the order given.
        adds = [alias for alias in dict.fromkeys(added) if alias not in removes]
        removes -= set(added)
        if DEFAULT_ALIAS in removes:
            raise bad_request(
                "version_aliases: the default alias cannot be removed; add it to another "
                "version to move it there."
            )
        with self.lock:
            model, version = self.resolve(location, model_param)
            version_id = version["versionId"]

            def change(doc: Resource) -> None:
                for alias in removes:
                    if doc["aliases"].get(alias) == version_id:
                        del doc["aliases"][alias]
                for alias in adds:
                    _place_alias(doc, alias, version_id)

            model = self.store.mutate(model["name"], change, "Model")
            version = self._touch(version)
        return self.render(version, model)

    def update(self, location: str, model_param: str, body: dict[str, Any], mask: str) -> Resource:
        """PATCH a version (the default one when unversioned): the fields in `updateMask`."""
        patch = to_dict(parse(aiplatform_v1.Model, body))
        paths = [path.strip() for path in (mask or "").split(",") if path.strip()]
        if not paths:
            raise bad_request("update_mask is required.")
        camel_by_path = {snake: camel for camel, snake in UPDATABLE_FIELDS.items()}
        camel_by_path.update({camel: camel for camel in UPDATABLE_FIELDS})
        for path in paths:
            if path not in camel_by_path:
                raise bad_request(
                    f"update_mask path {path!r} cannot be updated here; allowed: "
                    f"{sorted(UPDATABLE_FIELDS.values())}."
                )
        validate_update(patch, {camel_by_path[p] for p in paths}, "model")
        with self.lock:
            model, version = self.resolve(location, model_param)

            def change(doc: Resource) -> None:
                apply_update_mask(doc, paths, camel_by_path, patch)
                doc["updateTime"] = doc["versionUpdateTime"] = now_rfc3339()

            version = self.store.mutate(version["_name"], change, "Model")
        return self.render(version, model)

    def _touch(self, version: Resource) -> Resource:
        def change(doc: Resource) -> None:
            doc["versionUpdateTime"] = doc["updateTime"] = now_rfc3339()

        return self.store.mutate(version["_name"], change, "Model")

    def delete_version(self, location: str, model_param: str) -> Resource:
        with self.lock:
            model, version = self.resolve(location, model_param)
            versioned = version["_name"]
            if version.get("deployedModels"):
                endpoints = sorted({ref["endpoint"] for ref in version["deployedModels"]})
                raise failed_precondition(
                    f"Model version {versioned} is deployed to {endpoints}; undeploy it first."
                )
            if model["aliases"].get(DEFAULT_ALIAS) == version["versionId"]:
                raise failed_precondition(
                    f"Model version {versioned} holds the default alias and cannot be deleted; "
                    "move `default` to another version first (or delete the whole model)."
                )

            def change(doc: Resource) -> None:
                doc["aliases"] = {
                    a: v for a, v in doc["aliases"].items() if v != version["versionId"]
                }

            self.store.mutate(model["name"], change, "Model")
            self._delete_evaluations(model["name"], version["versionId"])
            self.store.delete(versioned)
        return self.backend.operations.run_now(model["name"], "DeleteOperationMetadata", "", {})

    def delete_model(self, location: str, model_param: str) -> Resource:
        model_id, ref = split_ref(model_param)
        if ref:
            return self.delete_version(location, model_param)
        with self.lock:
            model = self.model_doc(f"{location}/models/{model_id}")
            versions = self.versions(model["name"])
            deployed = sorted(
                {ref["endpoint"] for v in versions for ref in v.get("deployedModels") or []}
            )
            if deployed:
                raise failed_precondition(
                    f"Model {model['name']} is deployed to {deployed}; undeploy it first."
                )
            self._delete_evaluations(model["name"], None)
            for version in versions:
                self.store.delete(version["_name"])
            self.store.delete(model["name"])
        return self.backend.operations.run_now(model["name"], "DeleteOperationMetadata", "", {})

    # -- deployments (kept on the version, as Model.deployedModels) -----------------------------
    def add_deployment(self, versioned_name: str, endpoint: str, deployed_model_id: str) -> None:
        def change(doc: Resource) -> None:
            refs = doc.setdefault("deployedModels", [])
            refs.append({"endpoint": endpoint, "deployedModelId": deployed_model_id})

        self.store.mutate(versioned_name, change, "Model")

    def remove_deployment(self, versioned_name: str, deployed_model_id: str) -> None:
        if self.store.find(versioned_name) is None:
            return

        def change(doc: Resource) -> None:
            refs = [
                ref
                for ref in doc.get("deployedModels") or []
                if ref["deployedModelId"] != deployed_model_id
            ]
            if refs:
                doc["deployedModels"] = refs
            else:
                doc.pop("deployedModels", None)

        self.store.mutate(versioned_name, change, "Model")

    # -- evaluations ---------------------------------------------------------------------------
    def import_evaluation(self, location: str, model_param: str, body: dict[str, Any]) -> Resource:
        request = parse(aiplatform_v1.ImportModelEvaluationRequest, body)
        evaluation = to_dict(request.model_evaluation)
        if not evaluation.get("metricsSchemaUri"):
            raise bad_request(
                "model_evaluation.metrics_schema_uri is required (e.g. gs://google-cloud-"
                "aiplatform/schema/modelevaluation/classification_metrics_1.0.0.yaml)."
            )
        if not isinstance(evaluation.get("metrics"), dict):
            raise bad_request("model_evaluation.metrics is required: a JSON object of metrics.")
        model, version = self.resolve(location, model_param)
        name = f"{model['name']}/evaluations/{self.store.new_id()}"
        evaluation.update(name=name, createTime=now_rfc3339(), _versionId=version["versionId"])
        self.store.insert("modelEvaluations", name, evaluation)
        return self._public(evaluation)

    def get_evaluation(self, location: str, model_param: str, evaluation_id: str) -> Resource:
        model_id = split_ref(model_param)[0]
        name = f"{location}/models/{model_id}/evaluations/{evaluation_id}"
        found = self.store.find(name)
        if found is None:
            raise not_found(f"ModelEvaluation {name} does not exist.")
        return self._public(found)

    def list_evaluations(self, location: str, model_param: str) -> list[Resource]:
        model, version = self.resolve(location, model_param)
        return [
            self._public(evaluation)
            for evaluation in self.store.list("modelEvaluations", model["name"])
            if evaluation["_versionId"] == version["versionId"]
        ]

    def _delete_evaluations(self, model_name: str, version_id: str | None) -> None:
        for evaluation in self.store.list("modelEvaluations", model_name):
            if version_id is None or evaluation["_versionId"] == version_id:
                self.store.delete(evaluation["name"])

    @staticmethod
    def _public(resource: Resource) -> Resource:
        return {k: v for k, v in resource.items() if not k.startswith("_")}


def _place_alias(doc: Resource, alias: str, version_id: str) -> None:
    """Assigns an alias at the end of the model's map, so a version lists its aliases in the
    order they were given (a moved alias is given anew)."""
    if doc["aliases"].get(alias) != version_id:
        doc["aliases"].pop(alias, None)
        doc["aliases"][alias] = version_id
