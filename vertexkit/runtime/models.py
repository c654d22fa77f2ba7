"""Model Registry: upload a model directory as a Model or a new version; compare and promote.

Versions of one model share its display name: an upload finds the model with that display name
and adds a version under it (`parent_model`), so retraining builds one model's history.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from vertexkit.context import CloudContext
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.runtime.gcp_resources import vertex_resource_uri
from vertexkit.runtime.operations import start_or_resume
from vertexkit.specs import SpecError
from vertexkit.specs.inputs import METRIC_KEYS, check_component_inputs

log = logging.getLogger(__name__)

DEFAULT_ALIAS = "default"


@dataclass
class UploadConfig:
    display_name: str
    artifact_uri: str
    serving_image_uri: str = ""
    framework: str = ""
    framework_version: str = ""
    serving_command: list[str] = field(default_factory=list)
    serving_args: list[str] = field(default_factory=list)
    serving_env: dict[str, str] = field(default_factory=dict)
    serving_port: int = 0
    predict_route: str = ""
    health_route: str = ""
    description: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    version_aliases: list[str] = field(default_factory=list)
    version_description: str = ""
    is_default_version: bool = True


@dataclass(frozen=True)
class UploadedModel:
    model_name: str
    version_id: str

    @property
    def versioned_name(self) -> str:
        return f"{self.model_name}@{self.version_id}"

    def uri(self, region: str) -> str:
        return vertex_resource_uri(region, self.versioned_name)


def _serving_image(config: UploadConfig) -> str:
    if config.serving_image_uri:
        return config.serving_image_uri
    if not config.framework:
        raise SpecError(
            "serving_image_uri",
            "give serving_image_uri (a custom container) or framework (sklearn, xgboost, "
            "tensorflow) and framework_version for a prebuilt prediction image",
        )
    from vertexkit.runtime.packaging import prebuilt_serving_image

    return prebuilt_serving_image(config.framework, config.framework_version)


def build_model(config: UploadConfig) -> aiplatform_v1.Model:
    check_component_inputs("upload_model", vars(config))  # the rules preflight applies
    if not config.artifact_uri.startswith("gs://"):
        raise SpecError(
            "artifact_uri", f"must be a gs:// model directory, got {config.artifact_uri!r}"
        )
    for alias in config.version_aliases:
        if alias == DEFAULT_ALIAS:
            raise SpecError("version_aliases", "'default' is set with is_default_version")
    container: dict[str, Any] = {"image_uri": _serving_image(config)}
    if config.serving_command:
        container["command"] = list(config.serving_command)
    if config.serving_args:
        container["args"] = list(config.serving_args)
    if config.serving_env:
        container["env"] = [{"name": k, "value": str(v)} for k, v in config.serving_env.items()]
    if config.serving_port:
        container["ports"] = [{"container_port": config.serving_port}]
    if config.predict_route:
        container["predict_route"] = config.predict_route
    if config.health_route:
        container["health_route"] = config.health_route
    return aiplatform_v1.Model(
        display_name=config.display_name,
        description=config.description,
        version_description=config.version_description,
        artifact_uri=config.artifact_uri,
        container_spec=container,
        labels=dict(config.labels),
        version_aliases=list(config.version_aliases),
    )


def find_model_by_display_name(ctx: CloudContext, display_name: str) -> str | None:
    """The resource name of the (oldest) model with this display name, if any."""
    client = ctx.model_client()
    found = list(
        client.list_models(
            request={"parent": ctx.parent, "filter": f'display_name="{display_name}"'}
        )
    )
    found.sort(key=lambda model: model.create_time)
    return found[0].name if found else None


def upload_model(
    ctx: CloudContext, config: UploadConfig, gcp_resources: str | None
) -> UploadedModel:
    """Uploads a new model, or a new version of the model with the same display name."""
    model = build_model(config)
    client = ctx.model_client()
    parent_model = find_model_by_display_name(ctx, config.display_name)

    if config.is_default_version:
        # The API has no is_default_version field: like the SDK, send the `default` alias.
        model.version_aliases = [DEFAULT_ALIAS, *config.version_aliases]

    def start() -> Any:
        request: dict[str, Any] = {"parent": ctx.parent, "model": model}
        if parent_model:
            request["parent_model"] = parent_model
        return client.upload_model(request=request)

    response = start_or_resume(
        ctx,
        client,
        start,
        aiplatform_v1.UploadModelResponse,
        gcp_resources,
        describe=f"upload of {config.display_name}",
    )
    uploaded = UploadedModel(response.model, response.model_version_id)
    log.info("uploaded %s", uploaded.versioned_name)
    return uploaded


# ---------------------------------------------------------------- champion vs challenger


@dataclass(frozen=True)
class Comparison:
    promoted: bool
    reason: str
    champion: str
    champion_value: float | None
    challenger: str
    challenger_value: float | None


def split_version(versioned_name: str) -> tuple[str, str]:
    if "@" not in versioned_name:
        raise SpecError(
            "model",
            f"expected a versioned model name (...models/ID@VERSION), got {versioned_name!r}",
        )
    model_name, version = versioned_name.rsplit("@", 1)
    return model_name, version


def evaluation_metrics(ctx: CloudContext, versioned_name: str) -> dict[str, Any] | None:
    """The metrics of the version's most recent imported evaluation, if any."""
    client = ctx.model_client()
    evaluations = list(client.list_model_evaluations(parent=versioned_name))
    if not evaluations:
        return None
    newest = max(evaluations, key=lambda e: e.create_time)
    return json.loads(aiplatform_v1.ModelEvaluation.to_json(newest)).get("metrics") or {}


def metric_value(metrics: dict[str, Any] | None, metric: str) -> float | None:
    if not metrics:
        return None
    for key in (metric, METRIC_KEYS.get(metric, metric)):
        value = metrics.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def decide(
    champion_value: float | None,
    challenger_value: float,
    direction: str,
    min_improvement: float,
) -> tuple[bool, str]:
    """Whether the challenger beats the champion by at least `min_improvement` (and at all)."""
    if champion_value is None:
        return True, "no champion value: the challenger wins"
    gain = challenger_value - champion_value
    if direction == "minimize":
        gain = -gain
    verdict = f"challenger {challenger_value:.6g} vs champion {champion_value:.6g} ({direction})"
    if gain > 0 and gain >= min_improvement:
        return True, f"{verdict}: improves by {gain:.6g} >= {min_improvement:g}"
    if gain <= 0:
        return False, f"{verdict}: no improvement ({gain:+.6g}); the champion stays"
    return False, f"{verdict}: improvement {gain:.6g} is below the required {min_improvement:g}"


def compare_and_promote(
    ctx: CloudContext,
    challenger: str,
    metric: str,
    direction: str = "maximize",
    min_improvement: float = 0.0,
    promote: bool = True,
) -> Comparison:
    """Challenger version vs the model's `default` version; moves `default` if it wins."""
    check_component_inputs(
        "compare_models",
        {"metric": metric, "direction": direction, "min_improvement": min_improvement},
    )
    model_name, _ = split_version(challenger)
    client = ctx.model_client()
    challenger_version = client.get_model(name=challenger).version_id
    challenger = f"{model_name}@{challenger_version}"
    champion_version = client.get_model(name=f"{model_name}@{DEFAULT_ALIAS}").version_id
    champion = f"{model_name}@{champion_version}"
    challenger_value = metric_value(evaluation_metrics(ctx, challenger), metric)
    if challenger_value is None:
        raise SpecError("metric", f"the challenger {challenger} has no evaluation with {metric!r}")
    if champion_version == challenger_version:
        return Comparison(
            True,
            "no champion: the challenger is already the default version",
            champion,
            None,
            challenger,
            challenger_value,
        )
    champion_value = metric_value(evaluation_metrics(ctx, champion), metric)
    promoted, reason = decide(champion_value, challenger_value, direction, min_improvement)
    if promoted and promote:
        client.merge_version_aliases(name=challenger, version_aliases=[DEFAULT_ALIAS])
        log.info("promoted %s to default", challenger)
    elif promoted:
        reason += " (promotion disabled)"
    return Comparison(promoted, reason, champion, champion_value, challenger, challenger_value)
