"""Endpoints: get or create by display name, deploy a model version, canary, retire old versions.

Traffic follows Vertex's REST semantics: in `deployModel`, the key "0" of `trafficSplit` is the
model being deployed and the split must sum to 100. A canary of P % gives the new version P and
scales the models already serving down to 100 - P (like the SDK's `traffic_percentage`).
Versions of the same model left with no traffic are then undeployed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from vertexkit.context import CloudContext
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.runtime.gcp_resources import (
    find_vertex_resource,
    record_vertex_resource,
    vertex_resource_uri,
)
from vertexkit.runtime.operations import start_or_resume, wait_for_operation
from vertexkit.specs import SpecError
from vertexkit.specs.inputs import check_component_inputs

log = logging.getLogger(__name__)

ENDPOINT_RESOURCE_TYPE = "Endpoint"
DEPLOY_RESOURCE_TYPE = "VertexLro"


@dataclass
class DeployConfig:
    endpoint_display_name: str
    model: str  # versioned name: projects/.../models/ID@VERSION
    deployed_model_display_name: str = ""
    machine_type: str = "n1-standard-2"
    accelerator_type: str = ""
    accelerator_count: int = 0
    min_replica_count: int = 1
    max_replica_count: int = 1
    automatic_resources: bool = False
    traffic_percentage: int = 100
    undeploy_superseded: bool = True
    service_account: str = ""
    endpoint_labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Deployment:
    endpoint_name: str
    deployed_model_id: str
    traffic_split: dict[str, int]
    undeployed: list[str]

    def uri(self, region: str) -> str:
        return vertex_resource_uri(region, self.endpoint_name)


def validate_config(config: DeployConfig) -> None:
    check_component_inputs("deploy_model", vars(config))  # the rules preflight applies
    if "@" not in config.model:
        raise SpecError(
            "model", f"expected a versioned model name (...@VERSION), got {config.model!r}"
        )
    if config.automatic_resources and config.accelerator_type:
        raise SpecError("automatic_resources", "accelerators need dedicated resources")


def deployed_model(config: DeployConfig) -> dict[str, Any]:
    """The DeployedModel REST JSON with dedicated or automatic resources."""
    body: dict[str, Any] = {
        "model": config.model,
        "displayName": config.deployed_model_display_name or config.model.rsplit("/", 1)[-1],
    }
    replicas = {
        "minReplicaCount": config.min_replica_count,
        "maxReplicaCount": config.max_replica_count,
    }
    if config.automatic_resources:
        body["automaticResources"] = replicas
    else:
        machine: dict[str, Any] = {"machineType": config.machine_type}
        if config.accelerator_type:
            machine["acceleratorType"] = config.accelerator_type
            machine["acceleratorCount"] = config.accelerator_count
        body["dedicatedResources"] = {"machineSpec": machine, **replicas}
        _validate_dedicated(body["dedicatedResources"])
    if config.service_account:
        body["serviceAccount"] = config.service_account
    return body


def _validate_dedicated(resources: dict[str, Any]) -> None:
    import vertexkit.specs as specs

    validate = getattr(specs, "validate_dedicated_resources", None)
    if validate is not None:
        validate(resources)


def canary_split(current: dict[str, int], percentage: int) -> dict[str, int]:
    """New model ("0") gets `percentage`; the others share the rest in proportion (sum 100)."""
    others = {k: v for k, v in current.items() if v > 0}
    if not others:
        return {"0": 100}
    rest = 100 - percentage
    total = sum(others.values())
    split = {k: (v * rest) // total for k, v in others.items()}
    leftover = rest - sum(split.values())
    for key in sorted(others, key=lambda k: -others[k])[:leftover]:
        split[key] += 1
    split["0"] = percentage
    return {k: v for k, v in split.items() if v > 0 or k == "0"}


def get_or_create_endpoint(
    ctx: CloudContext, config: DeployConfig, gcp_resources: str | None
) -> str:
    client = ctx.endpoint_client()
    remembered = find_vertex_resource(gcp_resources, ENDPOINT_RESOURCE_TYPE)
    if remembered:
        return remembered
    name = config.endpoint_display_name
    found = list(
        client.list_endpoints(request={"parent": ctx.parent, "filter": f'display_name="{name}"'})
    )
    if found:
        endpoint = min(found, key=lambda e: e.create_time).name
    else:
        operation = client.create_endpoint(
            parent=ctx.parent,
            endpoint=aiplatform_v1.Endpoint(display_name=name, labels=config.endpoint_labels),
        )
        created = wait_for_operation(
            ctx,
            client,
            operation.operation.name,
            aiplatform_v1.Endpoint,
            describe="endpoint create",
        )
        endpoint = created.name
        log.info("created endpoint %s", endpoint)
    record_vertex_resource(gcp_resources, ENDPOINT_RESOURCE_TYPE, ctx.region, endpoint)
    return endpoint


def undeploy_superseded(ctx: CloudContext, endpoint_name: str, model: str, keep: str) -> list[str]:
    """Undeploys other versions of `model` that no longer receive traffic."""
    client = ctx.endpoint_client()
    endpoint = client.get_endpoint(name=endpoint_name)
    split = dict(endpoint.traffic_split)
    model_name = model.rsplit("@", 1)[0]
    undeployed = []
    for deployed in endpoint.deployed_models:
        same_model = deployed.model.rsplit("@", 1)[0] == model_name
        if deployed.id == keep or not same_model or split.get(deployed.id, 0) > 0:
            continue
        remaining = {k: v for k, v in split.items() if k != deployed.id}
        operation = client.undeploy_model(
            endpoint=endpoint_name, deployed_model_id=deployed.id, traffic_split=remaining
        )
        wait_for_operation(
            ctx,
            client,
            operation.operation.name,
            aiplatform_v1.UndeployModelResponse,
            describe=f"undeploy of {deployed.id}",
        )
        split = remaining
        undeployed.append(deployed.id)
        log.info("undeployed superseded %s (%s)", deployed.id, deployed.model)
    return undeployed


def deploy_model(ctx: CloudContext, config: DeployConfig, gcp_resources: str | None) -> Deployment:
    """Deploys the version to the endpoint (made if needed): all traffic or a canary share."""
    validate_config(config)
    body = deployed_model(config)
    endpoint_name = get_or_create_endpoint(ctx, config, gcp_resources)
    client = ctx.endpoint_client()

    def start() -> Any:
        current = dict(client.get_endpoint(name=endpoint_name).traffic_split)
        split = canary_split(current, config.traffic_percentage)
        return client.deploy_model(
            endpoint=endpoint_name,
            deployed_model=aiplatform_v1.DeployedModel.from_json(_json(body)),
            traffic_split=split,
        )

    response = start_or_resume(
        ctx,
        client,
        start,
        aiplatform_v1.DeployModelResponse,
        gcp_resources,
        resource_type=DEPLOY_RESOURCE_TYPE,
        describe=f"deploy of {config.model}",
    )
    deployed_id = response.deployed_model.id
    undeployed = (
        undeploy_superseded(ctx, endpoint_name, config.model, deployed_id)
        if config.undeploy_superseded
        else []
    )
    split = dict(client.get_endpoint(name=endpoint_name).traffic_split)
    return Deployment(endpoint_name, deployed_id, split, undeployed)


def _json(body: dict[str, Any]) -> str:
    import json

    return json.dumps(body)
