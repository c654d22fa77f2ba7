"""endpoints.update (the long-running `:update`) and endpoints.mutateDeployedModel.

* `:update` replaces only `client_connection_config` ("Currently we only support updating the
  `client_connection_config` field, all the other fields' update will be blocked", the
  UpdateEndpointLongRunningRequest reference): any other field that differs from the stored
  endpoint is a 400 naming it. Its `inferenceTimeout` is honoured by `EndpointRegistry.predict`.
* mutateDeployedModel changes the fields the MutateDeployedModelRequest reference lists for v1:
  min/max replica counts (dedicated or automatic resources), `required_replica_count`,
  `autoscaling_metric_specs` and `disable_container_logging`. Locally one in-process server
  answers whatever the counts say; they are recorded and answered back as Vertex does.
"""

from __future__ import annotations

import re
from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.vertex.core.recipe import camel_to_snake as snake
from vertexkit.local.vertex.protos import parse, to_dict
from vertexkit.local.vertex.registry.endpoints import EndpointRegistry
from vertexkit.local.vertex.store import Resource, now_rfc3339
from vertexkit.runtime.gapic import aiplatform_v1

UPDATABLE_BY_UPDATE = {"name", "clientConnectionConfig"}
MUTABLE_PATHS = (
    "dedicated_resources.min_replica_count",
    "dedicated_resources.max_replica_count",
    "dedicated_resources.required_replica_count",
    "dedicated_resources.autoscaling_metric_specs",
    "automatic_resources.min_replica_count",
    "automatic_resources.max_replica_count",
    "disable_container_logging",
)


def camel(path: str) -> str:
    return re.sub(r"_([a-z0-9])", lambda m: m[1].upper(), path)


# -- :update -----------------------------------------------------------------------------------
def update_long_running(endpoints: EndpointRegistry, name: str, body: dict[str, Any]) -> Resource:
    given = to_dict(parse(aiplatform_v1.UpdateEndpointLongRunningRequest, body).endpoint)
    with endpoints.lock:
        stored = endpoints.get(name)
        _refuse_other_changes(given, stored)

        def change(doc: Resource) -> None:
            doc.pop("clientConnectionConfig", None)
            if given.get("clientConnectionConfig"):
                doc["clientConnectionConfig"] = given["clientConnectionConfig"]
            doc["updateTime"] = doc["etag"] = now_rfc3339()

        updated = endpoints.store.mutate(name, change, "Endpoint")
    return endpoints.backend.operations.run_now(
        name, "UpdateEndpointOperationMetadata", "Endpoint", updated
    )


def _refuse_other_changes(given: Resource, stored: Resource) -> None:
    if given.get("name") and given["name"] != stored["name"]:
        raise bad_request(f"endpoint.name {given['name']!r} is not {stored['name']}.")
    for field in sorted(set(given) - UPDATABLE_BY_UPDATE):
        if given[field] != stored.get(field):
            raise bad_request(
                f"endpoint.{snake(field)} cannot be changed by endpoints.update, which updates "
                "client_connection_config only; use PATCH (endpoints.patch) for display_name, "
                "description, labels and traffic_split."
            )


# -- mutateDeployedModel -----------------------------------------------------------------------
def mutate_deployed_model(endpoints: EndpointRegistry, name: str, body: dict[str, Any]) -> Resource:
    request = parse(aiplatform_v1.MutateDeployedModelRequest, body)
    patch = to_dict(request.deployed_model)
    paths = _mutable_paths(list(request.update_mask.paths))
    if not patch.get("id"):
        raise bad_request("deployed_model.id is required: the deployed model to mutate.")
    with endpoints.lock:
        endpoint = endpoints.get(name)
        current = endpoints._deployed(endpoint, patch["id"])
        mutated = _mutated(current, patch, paths)
        _check_counts(mutated)

        def change(doc: Resource) -> None:
            doc["deployedModels"] = [
                mutated if item["id"] == mutated["id"] else item for item in doc["deployedModels"]
            ]
            doc["updateTime"] = doc["etag"] = now_rfc3339()

        endpoints.store.mutate(name, change, "Endpoint")
    return endpoints.backend.operations.run_now(
        name,
        "MutateDeployedModelOperationMetadata",
        "MutateDeployedModelResponse",
        {"deployedModel": mutated},
    )


def _mutable_paths(paths: list[str]) -> list[str]:
    if not paths:
        raise bad_request(f"update_mask is required; mutable paths: {list(MUTABLE_PATHS)}.")
    for path in paths:
        if snake(path) not in MUTABLE_PATHS:
            raise bad_request(
                f"update_mask path {path!r} cannot be mutated on a deployed model; mutable "
                f"paths: {list(MUTABLE_PATHS)}."
            )
    return [snake(path) for path in paths]


def _mutated(current: Resource, patch: Resource, paths: list[str]) -> Resource:
    """A copy of `current` with each masked field taken from `patch` (absent: cleared)."""
    mutated = {**current}
    for path in paths:
        keys = [camel(part) for part in path.split(".")]
        if len(keys) == 2 and keys[0] not in current:
            raise bad_request(
                f"update_mask path {path!r}: deployed model {current['id']} has no "
                f"{path.split('.')[0]}."
            )
        _set_path(mutated, keys, _get_path(patch, keys))
    return mutated


def _get_path(doc: Resource, keys: list[str]) -> Any:
    for key in keys:
        doc = (doc or {}).get(key)
    return doc


def _set_path(doc: Resource, keys: list[str], value: Any) -> None:
    *parents, last = keys
    for key in parents:
        doc[key] = doc = {**doc[key]}
    if value is None:
        doc.pop(last, None)
    else:
        doc[last] = value


def _check_counts(deployed: Resource) -> None:
    for field in ("dedicatedResources", "automaticResources"):
        resources = deployed.get(field)
        if resources is None:
            continue
        minimum = int(resources.get("minReplicaCount") or 0)
        maximum = int(resources.get("maxReplicaCount") or 0)
        if field == "dedicatedResources" and minimum < 1:
            raise bad_request(f"deployed_model.{snake(field)}.min_replica_count must be >= 1.")
        if maximum and maximum < minimum:
            raise bad_request(
                f"deployed_model.{snake(field)}.max_replica_count ({maximum}) must be >= "
                f"min_replica_count ({minimum})."
            )
