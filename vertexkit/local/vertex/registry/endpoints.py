"""Endpoint state: deployed models, traffic split, and routing a prediction.

Traffic split semantics follow the Vertex REST API:

* deployModel: a non-empty `trafficSplit` replaces the endpoint's split; key "0" means the model
  being deployed; the percentages must sum to 100. An empty split leaves the endpoint's split
  unchanged (so the new model receives no traffic). The SDK computes the split itself
  (`traffic_percentage`), and always sends one.
* undeployModel: a model that still receives traffic can only be undeployed with a new
  `trafficSplit` over the remaining models; the last model can always be undeployed.
"""

from __future__ import annotations

import contextlib
import random
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from vertexkit import specs
from vertexkit.local.errors import ApiError, bad_request, conflict, failed_precondition, not_found
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.core.fields import check_etag
from vertexkit.local.vertex.protos import parse, to_dict
from vertexkit.local.vertex.registry import dispositions as fields
from vertexkit.local.vertex.registry.filters import compile_filter
from vertexkit.local.vertex.registry.models import ModelRegistry
from vertexkit.local.vertex.registry.serving import (
    ContainerServer,
    Predictor,
    ReplicaSet,
    ServingError,
    ServingPool,
    load_prebuilt,
    prebuilt_framework,
    runnable_command,
)
from vertexkit.local.vertex.store import Resource, apply_update_mask, now_rfc3339
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.specs.requests import validate_metadata, validate_update
from vertexkit.specs.serving import container_notes, deployed_model_notes, validate_container_spec

MAX_PREDICT_BYTES = 1_572_864  # 1.5 MB, Vertex's online prediction request limit
ENDPOINT_ID = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
DEPLOYED_MODEL_ID = re.compile(r"^[0-9]{1,19}$")
RESOURCE_KINDS = {
    "dedicatedResources": "DEDICATED_RESOURCES",
    "automaticResources": "AUTOMATIC_RESOURCES",
    "sharedResources": "SHARED_RESOURCES",
}
UPDATABLE_FIELDS = {
    "displayName": "display_name",
    "description": "description",
    "labels": "labels",
    "trafficSplit": "traffic_split",
}


def check_split(split: dict[str, int], allowed: list[str], endpoint: str) -> None:
    """Keys must be deployed models (or "0"), values 0..100, and the sum exactly 100."""
    for key, percent in split.items():
        if key not in allowed:
            raise bad_request(
                f"traffic_split key {key!r} is not a deployed model of {endpoint}; allowed keys: "
                f'{allowed} ("0" means the model being deployed).'
            )
        if not 0 <= percent <= 100:
            raise bad_request(f"traffic_split[{key!r}] = {percent}; a percentage is 0..100.")
    total = sum(split.values())
    if split and total != 100:
        raise bad_request(f"traffic_split percentages must sum to 100; they sum to {total}.")


def replica_count(deployed: Resource) -> int:
    """The custom-container replicas a deploy starts: minReplicaCount (DedicatedResources: "The
    minimum number of machine replicas that will be always deployed on"), at least one."""
    dedicated = deployed.get("dedicatedResources") or {}
    return max(1, int(dedicated.get("minReplicaCount") or 1))


def check_inference_timeout(endpoint: Resource, seconds: float) -> None:
    """`clientConnectionConfig.inferenceTimeout`: a prediction that took longer fails with
    DEADLINE_EXCEEDED, as on Vertex (which gives up at the deadline; locally the in-process
    model cannot be interrupted, so the answer is refused once it arrives late)."""
    timeout = (endpoint.get("clientConnectionConfig") or {}).get("inferenceTimeout")
    if timeout and seconds > float(timeout.rstrip("s")):
        raise ApiError(
            504,
            f"The prediction took {seconds:.3f} s, longer than the endpoint's "
            f"client_connection_config.inference_timeout {timeout}.",
            status="DEADLINE_EXCEEDED",
        )


class EndpointRegistry:
    """Endpoints over the resource store, with their model servers in a `ServingPool`."""

    def __init__(
        self, backend: VertexBackend, models: ModelRegistry, lock: threading.RLock
    ) -> None:
        self.backend = backend
        self.store = backend.store
        self.models = models
        self.lock = lock
        self.pool = ServingPool()
        self._deploy_locks: dict[str, threading.Lock] = {}
        self._random = random.Random()

    def get(self, name: str) -> Resource:
        found = self.store.find(name)
        if found is None:
            raise not_found(f"Endpoint {name} does not exist.")
        return found

    # -- create / list / delete / update -------------------------------------------------------
    def create(self, location: str, endpoint_id: str | None, body: dict[str, Any]) -> Resource:
        endpoint = to_dict(parse(aiplatform_v1.Endpoint, body))
        validate_metadata(endpoint, "endpoint")
        fields.check_refused(endpoint, fields.ENDPOINT_REFUSED, "endpoint")
        if endpoint.get("trafficSplit") or endpoint.get("deployedModels"):
            raise bad_request("A new endpoint has no deployed models: omit traffic_split.")
        if endpoint_id and not ENDPOINT_ID.match(endpoint_id):
            raise bad_request(
                f"endpoint_id {endpoint_id!r} is invalid: use up to 63 characters [a-z0-9-]."
            )
        name = f"{location}/endpoints/{endpoint_id or self.store.new_id()}"
        now = now_rfc3339()
        endpoint.update(name=name, createTime=now, updateTime=now, etag=now)
        with self.lock:
            if self.store.find(name) is not None:
                raise conflict(f"Endpoint {name} already exists.")
            self.store.insert("endpoints", name, endpoint)
        operation = self.backend.operations.run_now(
            name, "CreateEndpointOperationMetadata", "Endpoint", endpoint
        )
        return fields.with_notes(self.store, operation, fields.endpoint_notes(endpoint))

    def list(self, location: str, expression: str | None) -> list[Resource]:
        matches = compile_filter(expression)
        return [e for e in self.store.list("endpoints", location) if matches(e)]

    def delete(self, name: str) -> Resource:
        with self.lock:
            endpoint = self.get(name)
            if endpoint.get("deployedModels"):
                ids = [deployed["id"] for deployed in endpoint["deployedModels"]]
                raise failed_precondition(
                    f"Endpoint {name} has deployed models {ids}; undeploy them first."
                )
            self.store.delete(name)
        return self.backend.operations.run_now(name, "DeleteOperationMetadata", "", {})

    def update(self, name: str, body: dict[str, Any], mask: str) -> Resource:
        patch = to_dict(parse(aiplatform_v1.Endpoint, body))
        paths = [path.strip() for path in (mask or "").split(",") if path.strip()]
        camel = {**{v: k for k, v in UPDATABLE_FIELDS.items()}, **{k: k for k in UPDATABLE_FIELDS}}
        for path in paths or ["<empty>"]:
            if path not in camel:
                raise bad_request(
                    f"update_mask path {path!r} cannot be updated; allowed: "
                    f"{sorted(UPDATABLE_FIELDS.values())}."
                )
        validate_update(patch, {camel[p] for p in paths}, "endpoint")
        fields.check_refused(patch, fields.ENDPOINT_REFUSED, "endpoint")
        with self.lock:
            endpoint = self.get(name)
            check_etag(endpoint, body, "Endpoint")
            if "traffic_split" in paths or "trafficSplit" in paths:
                ids = [deployed["id"] for deployed in endpoint.get("deployedModels") or []]
                check_split(patch.get("trafficSplit") or {}, ids, name)

            def change(doc: Resource) -> None:
                apply_update_mask(doc, paths, camel, patch)
                doc["updateTime"] = doc["etag"] = now_rfc3339()

            return self.store.mutate(name, change, "Endpoint")

    # -- deploy --------------------------------------------------------------------------------
    def _endpoint_lock(self, name: str) -> threading.Lock:
        with self.lock:
            return self._deploy_locks.setdefault(name, threading.Lock())

    def deploy(self, name: str, body: dict[str, Any]) -> Resource:
        """deployModel: validates everything, starts the model server, then records it."""
        request = parse(aiplatform_v1.DeployModelRequest, body)
        deployed = to_dict(request.deployed_model)
        validate_metadata(deployed, "deployedModel", display_name_required=False)
        fields.check_refused(deployed, fields.DEPLOYED_REFUSED, "deployedModel")
        split = dict(request.traffic_split)
        with self._endpoint_lock(name):
            endpoint = self.get(name)
            model, version = self._deployable_version(deployed)
            self._check_resources(deployed, version)
            deployed_id = self._new_deployed_model_id(endpoint, deployed.get("id"))
            existing = [item["id"] for item in endpoint.get("deployedModels") or []]
            check_split(split, [*existing, "0"], name)
            new_split = {deployed_id if k == "0" else k: v for k, v in split.items()}
            deployed.update(
                id=deployed_id,
                model=model["name"],
                modelVersionId=version["versionId"],
                displayName=deployed.get("displayName") or version["displayName"],
                createTime=now_rfc3339(),
            )
            operation = self.backend.operations.start(
                name, "DeployModelOperationMetadata", "DeployModelResponse"
            )
            self._note(operation["name"], deployed, version)
            try:
                server = self._build_server(name, deployed, version)
            except ServingError as exc:
                # gRPC code 9 (FAILED_PRECONDITION): nothing was recorded, nothing keeps running.
                return self.backend.operations.fail(operation["name"], 9, exc.message)
            with self.lock:
                self._record_deployment(name, deployed, new_split if split else None)
                self.models.add_deployment(version["_name"], name, deployed_id)
            self.pool.put(deployed_id, server)
            return self.backend.operations.finish(operation["name"], {"deployedModel": deployed})

    def _note(self, operation_name: str, deployed: Resource, version: Resource) -> None:
        """The serving fields accepted with no local effect, said in the deploy operation's
        `metadata.genericMetadata.partialFailures` (code 0: the deploy itself goes on)."""
        spec = version.get("containerSpec") or {}
        prebuilt = prebuilt_framework(spec.get("imageUri", "")) is not None
        notes = container_notes(spec, prebuilt) + deployed_model_notes(deployed, prebuilt)
        notes += fields.deployed_notes(deployed)
        if not notes:
            return

        def change(operation: Resource) -> None:
            generic = operation["metadata"]["genericMetadata"]
            generic["partialFailures"] = [{"code": 0, "message": note} for note in notes]

        self.store.mutate(operation_name, change, "Operation")

    def _deployable_version(self, deployed: Resource) -> tuple[Resource, Resource]:
        if not deployed.get("model"):
            raise bad_request("deployed_model.model is required.")
        model, version = self.models.resolve_name(deployed["model"])
        spec = version.get("containerSpec") or {}
        validate_container_spec(spec)  # a model stored before a field was refused
        if prebuilt_framework(spec.get("imageUri", "")) is None:
            try:
                runnable_command(spec)
            except ServingError as exc:
                raise bad_request(exc.message) from exc
        return model, version

    def _check_resources(self, deployed: Resource, version: Resource) -> None:
        given = [field for field in RESOURCE_KINDS if field in deployed]
        if len(given) != 1:
            raise bad_request(
                "deployed_model: set exactly one of dedicated_resources, automatic_resources, "
                f"shared_resources; got {given or 'none'}."
            )
        kind = RESOURCE_KINDS[given[0]]
        supported = version.get("supportedDeploymentResourcesTypes") or []
        if kind not in supported:
            raise bad_request(
                f"Model {version['_name']} does not support {kind}; its "
                f"supported_deployment_resources_types are {supported}."
            )
        if kind == "DEDICATED_RESOURCES":
            self._check_dedicated(deployed["dedicatedResources"])

    @staticmethod
    def _check_dedicated(resources: Resource) -> None:
        field = "deployed_model.dedicated_resources"
        if not (resources.get("machineSpec") or {}).get("machineType"):
            raise bad_request(f"{field}.machine_spec.machine_type is required.")
        minimum = int(resources.get("minReplicaCount") or 0)
        maximum = int(resources.get("maxReplicaCount") or 0)
        if minimum < 1:
            raise bad_request(f"{field}.min_replica_count must be >= 1; got {minimum}.")
        if maximum and maximum < minimum:
            raise bad_request(
                f"{field}.max_replica_count ({maximum}) must be >= min_replica_count ({minimum})."
            )
        # Machine types and accelerators are validated like training machine specs.
        specs.validate_dedicated_resources(resources, "deployedModel.dedicatedResources")

    def _new_deployed_model_id(self, endpoint: Resource, requested: str | None) -> str:
        taken = {deployed["id"] for deployed in endpoint.get("deployedModels") or []}
        if requested:
            if not DEPLOYED_MODEL_ID.match(requested):
                raise bad_request(f"deployed_model.id {requested!r} must be digits only.")
            if requested in taken:
                raise conflict(f"Deployed model {requested} already exists in the endpoint.")
            return requested
        return self.store.new_id()

    def _record_deployment(
        self, name: str, deployed: Resource, new_split: dict[str, int] | None
    ) -> None:
        def change(doc: Resource) -> None:
            doc.setdefault("deployedModels", []).append(deployed)
            if new_split is not None:
                doc["trafficSplit"] = new_split
            doc["updateTime"] = doc["etag"] = now_rfc3339()

        self.store.mutate(name, change, "Endpoint")

    # -- undeploy ------------------------------------------------------------------------------
    def undeploy(self, name: str, body: dict[str, Any]) -> Resource:
        request = parse(aiplatform_v1.UndeployModelRequest, body)
        deployed_id = request.deployed_model_id
        if not deployed_id:
            raise bad_request("deployed_model_id is required.")
        with self._endpoint_lock(name), self.lock:
            endpoint = self.get(name)
            deployed = self._deployed(endpoint, deployed_id)
            new_split = self._split_after_undeploy(endpoint, deployed_id, request.traffic_split)

            def change(doc: Resource) -> None:
                doc["deployedModels"] = [d for d in doc["deployedModels"] if d["id"] != deployed_id]
                doc["trafficSplit"] = new_split
                doc["updateTime"] = doc["etag"] = now_rfc3339()

            self.store.mutate(name, change, "Endpoint")
            versioned = f"{deployed['model']}@{deployed['modelVersionId']}"
            self.models.remove_deployment(versioned, deployed_id)
        self.pool.stop(deployed_id)
        return self.backend.operations.run_now(
            name, "UndeployModelOperationMetadata", "UndeployModelResponse", {}
        )

    @staticmethod
    def _deployed(endpoint: Resource, deployed_id: str) -> Resource:
        for deployed in endpoint.get("deployedModels") or []:
            if deployed["id"] == deployed_id:
                return deployed
        raise not_found(f"Deployed model {deployed_id} not found in {endpoint['name']}.")

    @staticmethod
    def _split_after_undeploy(
        endpoint: Resource, deployed_id: str, requested: Any
    ) -> dict[str, int]:
        remaining = [d["id"] for d in endpoint["deployedModels"] if d["id"] != deployed_id]
        current = dict(endpoint.get("trafficSplit") or {})
        if requested:
            split = dict(requested)
            if split.pop(deployed_id, 0):
                raise bad_request(
                    f"traffic_split gives traffic to deployed model {deployed_id}, which is "
                    "being undeployed."
                )
            check_split(split, remaining, endpoint["name"])
            if remaining and not split:
                raise bad_request("traffic_split percentages must sum to 100; they sum to 0.")
            return split
        if current.get(deployed_id, 0) and remaining:
            raise bad_request(
                f"Deployed model {deployed_id} receives {current[deployed_id]}% of the traffic of "
                f"{endpoint['name']}; undeploying it requires a traffic_split over the "
                f"remaining deployed models {remaining}."
            )
        current.pop(deployed_id, None)
        return current

    # -- predict -------------------------------------------------------------------------------
    def predict(
        self, name: str, body: dict[str, Any], content_length: int
    ) -> tuple[Resource, list[Any]]:
        """Routes a predict request by the traffic split; returns (deployed model, predictions)."""
        if content_length > MAX_PREDICT_BYTES:
            raise bad_request(
                f"Request payload size exceeds the limit: {MAX_PREDICT_BYTES} bytes "
                f"(got {content_length})."
            )
        unknown = sorted(set(body) - {"instances", "parameters"})
        if unknown:
            raise bad_request(f'Invalid JSON payload received. Unknown name "{unknown[0]}".')
        instances = body.get("instances")
        if not isinstance(instances, list) or not instances:
            raise bad_request("instances must be a non-empty JSON list.")
        endpoint = self.get(name)
        deployed = self._route(endpoint)
        started = time.monotonic()
        try:  # a model that no longer loads after a restart (its artifact gone) says why
            server = self.pool.get(deployed["id"], self._builder(name, deployed))
            predictions = server.predict(instances, body.get("parameters"))
        except ServingError as exc:
            self.pool.drop_if_stopped(deployed["id"])  # a dead model process: started again next
            if exc.status == 503:  # no ready replica: Vertex's UNAVAILABLE, to retry later
                raise ApiError(503, exc.message, status="UNAVAILABLE") from exc
            raise (
                bad_request(exc.message) if exc.status == 400 else failed_precondition(exc.message)
            ) from exc
        check_inference_timeout(endpoint, time.monotonic() - started)
        return deployed, predictions

    def serving(self, name: str, deployed: Resource) -> Predictor:
        """The running server of a deployed model of endpoint `name` (started if need be)."""
        return self.pool.get(deployed["id"], self._builder(name, deployed))

    def _route(self, endpoint: Resource) -> Resource:
        split = {k: v for k, v in (endpoint.get("trafficSplit") or {}).items() if v > 0}
        if not split:
            raise failed_precondition(
                f"Endpoint {endpoint['name']} has no deployed model receiving traffic "
                "(its traffic_split is empty)."
            )
        chosen = self._random.choices(list(split), weights=list(split.values()))[0]
        return self._deployed(endpoint, chosen)

    # -- model servers -------------------------------------------------------------------------
    def warm_deployed(self) -> None:
        """Puts every prebuilt-image model deployed before this start in the serving pool, in a
        background thread, as Vertex keeps a deployed model serving: their processes started with
        Vertex's state (`VertexState`), and the first prediction after a restart (the one a
        cached `vertexkit run` sends at its end) finds them ready. A model that fails to load
        fails its first prediction instead, with the reason, as before. Custom containers start
        on their first prediction, as before."""
        deployed = [(name, model) for name, model, _ in self.backend.state.deployed_at_start]
        if deployed:
            threading.Thread(
                target=self._load_all, args=(deployed,), daemon=True, name="warm-deployed"
            ).start()

    def _load_all(self, deployed: list[tuple[str, Resource]]) -> None:
        for endpoint_name, model in deployed:
            with contextlib.suppress(Exception):  # raised again by its first prediction
                self.pool.get(model["id"], self._builder(endpoint_name, model))

    def _builder(self, endpoint_name: str, deployed: Resource) -> Callable[[], Predictor]:
        def build() -> Predictor:
            version = self.store.get(f"{deployed['model']}@{deployed['modelVersionId']}", "Model")
            return self._build_server(endpoint_name, deployed, version)

        return build

    def _build_server(self, endpoint_name: str, deployed: Resource, version: Resource) -> Predictor:
        spec = version.get("containerSpec") or {}
        artifact_uri = version.get("artifactUri", "")
        if prebuilt_framework(spec.get("imageUri", "")):
            started = self.backend.model_processes.take(deployed["id"])  # deployed before
            if started is not None:
                return started
            from vertexkit.local.vertex.registry.warmup import WARMUP

            WARMUP.wait(spec["imageUri"])  # its modules: imported by one thread at a time
            model_dir = self.backend.storage.gs_uri_to_path(artifact_uri)
            return load_prebuilt(spec["imageUri"], model_dir, artifact_uri)
        replicas: list[ContainerServer] = []
        try:
            for index in range(replica_count(deployed)):
                log = f"{deployed['id']}.log" if not index else f"{deployed['id']}-{index}.log"
                server = ContainerServer(
                    spec,
                    self._container_env(endpoint_name, deployed, version),
                    self.backend.home / "serving" / log,
                    groups=self.backend.processes,
                    use_declared_port=not index,  # ports[0] is the first replica's
                )
                server.start()
                replicas.append(server)
        except ServingError:
            for started in replicas:
                started.stop()
            raise
        return replicas[0] if len(replicas) == 1 else ReplicaSet(replicas)

    def _container_env(
        self, endpoint_name: str, deployed: Resource, version: Resource
    ) -> dict[str, str]:
        """The environment Vertex gives a serving container, plus the local cloud's."""
        spec = version.get("containerSpec") or {}
        endpoint_id = endpoint_name.rsplit("/", 1)[1]
        default_health = f"/v1/endpoints/{endpoint_id}/deployedModels/{deployed['id']}"
        machine = (deployed.get("dedicatedResources") or {}).get("machineSpec") or {}
        env = {
            **self.backend.cloud.env(),
            **{item["name"]: item.get("value", "") for item in spec.get("env") or []},
            "SERVING_BIND_HOST": "127.0.0.1",  # not Vertex's: keeps the server off the LAN
            "AIP_MODE": "PREDICTION",
            "AIP_MODE_VERSION": "1.0.0",
            "AIP_FRAMEWORK": "CUSTOM_CONTAINER",
            "AIP_PROJECT_NUMBER": endpoint_name.split("/")[1],
            "AIP_ENDPOINT_ID": endpoint_id,
            "AIP_DEPLOYED_MODEL_ID": deployed["id"],
            "AIP_MACHINE_TYPE": machine.get("machineType", ""),
            "AIP_ACCELERATOR_TYPE": machine.get("acceleratorType", ""),
            "AIP_PREDICT_ROUTE": spec.get("predictRoute") or default_health + ":predict",
            "AIP_HEALTH_ROUTE": spec.get("healthRoute") or default_health,
        }
        if version.get("artifactUri"):
            # On Vertex these point at a managed copy of the artifacts; here, at the original.
            env["AIP_STORAGE_URI"] = env["AIP_MODEL_DIR"] = version["artifactUri"]
        return env

    def close(self) -> None:
        self.pool.close()
