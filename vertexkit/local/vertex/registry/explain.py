"""endpoints.explain: sampled Shapley attributions over the deployed model's own predict.

Vertex's sampled Shapley ("Introduction to Vertex Explainable AI", feature attribution methods)
assigns each feature its average marginal contribution over `pathCount` random orderings of the
features: walking from the baseline to the instance one feature at a time, each step's change
of the model's output is credited to the feature switched on. Along every path the steps sum to
`instanceOutputValue - baselineOutputValue` (Shapley's efficiency axiom), so the averages do too.

What is read from the explanation spec (the deployed model's, else its Model's, with the
request's `explanationSpecOverride` on top):

* `parameters.sampledShapleyAttribution.pathCount` (1..50); `topK` and `outputIndices` choose
  which outputs of a list-valued prediction are explained (default: the top one, as Vertex).
  `integratedGradientsAttribution` and `xraiAttribution` need the model's gradients, which the
  prebuilt scikit-learn/XGBoost predictors do not expose; `examples` needs Vertex's
  nearest-neighbour index: each is a 400 naming the field.
* `metadata.inputs[*].inputBaselines`: with list instances the one input's baselines (a list per
  baseline, or a scalar broadcast); with JSON-object instances each key's input's baselines.
  Several baselines: the attributions are averaged over them, as the reference says. None
  given: a baseline of zeros.
* `approximationError`: Google does not publish its formula; here it is the standard error of
  the attributions' sampling mean (root of the summed per-feature variances over paths),
  relative to |instanceOutputValue - baselineOutputValue|; more paths make it smaller, as the
  reference says of sampled Shapley.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vertexkit.local.errors import bad_request, failed_precondition, not_found
from vertexkit.runtime.prebuilt import ServingError

if TYPE_CHECKING:  # a batch prediction worker imports `attributions` without the registry
    from vertexkit.local.vertex.registry.endpoints import EndpointRegistry
    from vertexkit.local.vertex.store import Resource

MAX_PATH_COUNT = 50
NEEDS_GRADIENTS = {
    "integratedGradientsAttribution": "integrated gradients need the model's gradients",
    "xraiAttribution": "XRAI needs the model's gradients over image regions",
    "examples": "example-based explanations need Vertex's nearest-neighbour index",
}
Predict = Callable[[list[Any]], list[Any]]


def explain(endpoints: EndpointRegistry, name: str, body: dict[str, Any]) -> Resource:
    from vertexkit.local.vertex.protos import parse, to_dict
    from vertexkit.runtime.gapic import aiplatform_v1

    request = parse(aiplatform_v1.ExplainRequest, body)
    instances = to_dict(request).get("instances") or []
    if not instances:
        raise bad_request("instances must be a non-empty list.")
    endpoint = endpoints.get(name)
    deployed = _chosen(endpoints, endpoint, request.deployed_model_id)
    spec = _spec(endpoints, deployed, to_dict(request.explanation_spec_override))
    predictor = endpoints.serving(name, deployed)
    parameters = to_dict(request).get("parameters")

    def predict(rows: list[Any]) -> list[Any]:
        try:
            return predictor.predict(rows, parameters)
        except ServingError as exc:
            raise bad_request(exc.message) from exc

    predictions = predict(instances)
    explanations = [
        {"attributions": attributions(spec, instance, prediction, predict)}
        for instance, prediction in zip(instances, predictions, strict=True)
    ]
    return {
        "explanations": explanations,
        "deployedModelId": deployed["id"],
        "predictions": predictions,
    }


def _chosen(endpoints: EndpointRegistry, endpoint: Resource, deployed_id: str) -> Resource:
    if not deployed_id:
        return endpoints._route(endpoint)
    for deployed in endpoint.get("deployedModels") or []:
        if deployed["id"] == deployed_id:
            return deployed
    raise not_found(f"Deployed model {deployed_id} not found in {endpoint['name']}.")


def _spec(endpoints: EndpointRegistry, deployed: Resource, override: Resource) -> Resource:
    """The explanation spec in force, refused unless sampled Shapley can carry it out."""
    version = endpoints.store.find(f"{deployed['model']}@{deployed['modelVersionId']}") or {}
    spec = deployed.get("explanationSpec") or version.get("explanationSpec")
    if not spec or deployed.get("disableExplanations"):
        # Vertex's words (FAILED_PRECONDITION, seen in statmike/vertex-ai-mlops issue 46).
        raise failed_precondition(f"Deployed model {deployed['id']} does not support explanation.")
    if override.get("examplesOverride"):
        raise bad_request(
            "explanation_spec_override.examples_override: " + NEEDS_GRADIENTS["examples"]
        )
    return merged_spec(spec, override)


def merged_spec(spec: Resource, override: Resource) -> Resource:
    """`spec` with `override`'s parameters and per-input metadata on top, checked for sampled
    Shapley. Also a batch prediction job's `explanationSpec` over its Model's: "If a field of
    the explanation_spec object is not populated, the corresponding field of the
    Model.explanation_spec object is inherited" (BatchPredictionJob.explanation_spec)."""
    parameters = override.get("parameters") or spec.get("parameters") or {}
    inputs = {**((spec.get("metadata") or {}).get("inputs") or {})}
    for key, extra in ((override.get("metadata") or {}).get("inputs") or {}).items():
        inputs[key] = {**inputs.get(key, {}), **extra}
    _check_parameters(parameters)
    return {"parameters": parameters, "metadata": {**spec.get("metadata", {}), "inputs": inputs}}


def _check_parameters(parameters: Resource) -> None:
    for field, why in NEEDS_GRADIENTS.items():
        if field in parameters:
            raise bad_request(
                f"explanation_spec.parameters.{field}: {why}, which the local cloud's "
                "predictors do not have; use sampled_shapley_attribution."
            )
    shapley = parameters.get("sampledShapleyAttribution")
    if shapley is None:
        raise bad_request(
            "explanation_spec.parameters: set sampled_shapley_attribution (path_count 1..50)."
        )
    count = int(shapley.get("pathCount") or 0)
    if not 1 <= count <= MAX_PATH_COUNT:
        raise bad_request(
            f"explanation_spec.parameters.sampled_shapley_attribution.path_count is {count}; "
            f"the valid range is [1, {MAX_PATH_COUNT}]."
        )


# -- one instance ------------------------------------------------------------------------------
def attributions(spec: Resource, instance: Any, prediction: Any, predict: Predict) -> list:
    slots = _slots(instance)
    baselines = _baselines(spec["metadata"]["inputs"], instance, slots)
    path_count = int(spec["parameters"]["sampledShapleyAttribution"]["pathCount"])
    rows, orders = _coalition_rows(instance, slots, baselines, path_count)
    outputs = [_numeric(value) for value in predict(rows)]
    chosen = _output_indices(spec["parameters"], _numeric(prediction))
    return [_attribution(spec, instance, slots, outputs, orders, index) for index in chosen]


def _slots(instance: Any) -> list[Any]:
    """The features switched on and off: list positions, or a JSON object's keys."""
    if isinstance(instance, list):
        return list(range(len(instance)))
    if isinstance(instance, dict):
        return list(instance)
    raise bad_request("instances: each instance must be a list of features or a JSON object.")


def _baselines(inputs: Resource, instance: Any, slots: list[Any]) -> list[dict[Any, Any]]:
    """Each baseline as {slot: value}."""
    if isinstance(instance, list):
        if len(inputs) != 1:
            raise bad_request(
                "explanation_spec.metadata.inputs: a list instance is one input, so name "
                f"exactly one input; got {sorted(inputs) or 'none'}."
            )
        given = next(iter(inputs.values())).get("inputBaselines") or [0]
        return [_broadcast(baseline, slots) for baseline in given]
    per_key = {slot: (inputs.get(slot) or {}).get("inputBaselines") or [0] for slot in slots}
    count = max(len(values) for values in per_key.values())
    return [
        {slot: values[i % len(values)] for slot, values in per_key.items()} for i in range(count)
    ]


def _broadcast(baseline: Any, slots: list[Any]) -> dict[Any, Any]:
    if not isinstance(baseline, list):
        return dict.fromkeys(slots, baseline)
    if len(baseline) != len(slots):
        raise bad_request(
            f"explanation_spec.metadata.inputs[*].input_baselines: a baseline has "
            f"{len(baseline)} values but the instance has {len(slots)} features."
        )
    return dict(zip(slots, baseline, strict=True))


def _coalition_rows(
    instance: Any, slots: list[Any], baselines: list[dict[Any, Any]], path_count: int
) -> tuple[list[Any], list[list[Any]]]:
    """For each baseline and path: the baseline, then one more feature of the instance at a
    time in the path's random order, ending at the instance."""
    rows: list[Any] = []
    orders: list[list[Any]] = []
    for baseline in baselines:
        for _ in range(path_count):
            order = random.sample(slots, len(slots))
            values = dict(baseline)
            rows.append(_row(instance, values))
            for slot in order:
                values[slot] = instance[slot]
                rows.append(_row(instance, values))
            orders.append(order)
    return rows, orders


def _row(instance: Any, values: dict[Any, Any]) -> Any:
    return [values[i] for i in range(len(instance))] if isinstance(instance, list) else values


def _numeric(prediction: Any) -> float | list[float]:
    if isinstance(prediction, bool) or not isinstance(prediction, int | float | list):
        raise bad_request(
            f"The model predicts {prediction!r}: sampled Shapley attributes a numeric output "
            "(a number, or a list of numbers such as class probabilities), not a label."
        )
    return [float(x) for x in prediction] if isinstance(prediction, list) else float(prediction)


def _output_indices(parameters: Resource, prediction: float | list[float]) -> list[int | None]:
    """None for a scalar output; else `outputIndices`, or the `topK` (default 1) largest."""
    if not isinstance(prediction, list):
        return [None]
    if parameters.get("outputIndices"):
        return [int(index) for index in parameters["outputIndices"]]
    top_k = int(parameters.get("topK") or 1)
    return sorted(range(len(prediction)), key=lambda i: -prediction[i])[:top_k]


def _attribution(
    spec: Resource,
    instance: Any,
    slots: list[Any],
    outputs: list[Any],
    orders: list[list[Any]],
    index: int | None,
) -> Resource:
    def value(row: int) -> float:
        output = outputs[row]
        return output if index is None else output[index]

    steps = len(slots) + 1
    marginals: dict[Any, list[float]] = {slot: [] for slot in slots}
    for path, order in enumerate(orders):
        for step, slot in enumerate(order, start=1):
            row = path * steps + step
            marginals[slot].append(value(row) - value(row - 1))
    # Every baseline has path_count paths, so averaging all paths averages the baselines.
    base = sum(value(path * steps) for path in range(len(orders))) / len(orders)
    instance_value = value(steps - 1)
    means = {slot: sum(found) / len(found) for slot, found in marginals.items()}
    attribution: Resource = {
        "baselineOutputValue": base,
        "instanceOutputValue": instance_value,
        "featureAttributions": _shaped(spec, instance, means),
        "approximationError": _error(marginals, instance_value - base),
    }
    if index is not None:
        attribution["outputIndex"] = [index]
    outputs_metadata = (spec.get("metadata") or {}).get("outputs") or {}
    if len(outputs_metadata) == 1:
        attribution["outputName"] = next(iter(outputs_metadata))
    return attribution


def _shaped(spec: Resource, instance: Any, means: dict[Any, float]) -> Resource:
    """A list input's attributions as a list under its input's name; an object's by key."""
    if isinstance(instance, dict):
        return means
    input_name = next(iter(spec["metadata"]["inputs"]))
    return {input_name: [means[i] for i in range(len(instance))]}


def _error(marginals: dict[Any, list[float]], difference: float) -> float:
    variance = 0.0
    for found in marginals.values():
        mean = sum(found) / len(found)
        variance += sum((x - mean) ** 2 for x in found) / max(len(found) - 1, 1) / len(found)
    return math.sqrt(variance) / abs(difference) if difference else math.sqrt(variance)
