"""Checks of Vizier request bodies before anything is stored: the study (displayName and a
studySpec that `vertexkit.specs.study` accepts, and only the parts of it this local Vizier
carries out), a user-provided trial's parameters, a final measurement's metrics."""

from __future__ import annotations

from typing import Any

from vertexkit.local.vertex.training.tuning import all_parameters
from vertexkit.specs.errors import SpecError
from vertexkit.specs.naming import validate_display_name
from vertexkit.specs.study import StudySpec

Param = dict[str, Any]
# StudySpec fields this local Vizier does not carry out: refused rather than ignored.
UNHONOURED_SPEC_FIELDS = {
    "decayCurveStoppingSpec": "the decay-curve stopping rule is not run locally; use "
    "medianAutomatedStoppingSpec",
    "convexAutomatedStoppingSpec": "the convex stopping rule is not run locally; use "
    "medianAutomatedStoppingSpec",
}
HONOURED_STOPPING_CONFIG = {"maxNumTrials"}


def validate_study(body: Param) -> None:
    validate_display_name(body.get("displayName"), "displayName")
    if not body.get("studySpec"):
        raise SpecError("studySpec", "required: the metrics and parameters to search")
    StudySpec.from_api(body["studySpec"], "studySpec")
    refuse_unhonoured(body["studySpec"])


def refuse_unhonoured(spec: Param) -> None:
    for field, why in UNHONOURED_SPEC_FIELDS.items():
        if field in spec:
            raise SpecError(f"studySpec.{field}", why)
    if spec.get("observationNoise", "OBSERVATION_NOISE_UNSPECIFIED") != (
        "OBSERVATION_NOISE_UNSPECIFIED"
    ):
        raise SpecError(
            "studySpec.observationNoise",
            "the local optimiser (Optuna) has no noise model; leave it unset",
        )
    if (spec.get("medianAutomatedStoppingSpec") or {}).get("useElapsedDuration"):
        raise SpecError(
            "studySpec.medianAutomatedStoppingSpec.useElapsedDuration",
            "the local median rule compares measurements by stepCount; leave it false",
        )
    for index, metric in enumerate(spec.get("metrics") or []):
        if "safetyConfig" in metric:
            raise SpecError(
                f"studySpec.metrics[{index}].safetyConfig", "safety metrics are not run locally"
            )
    refuse_stopping_config(spec.get("studyStoppingConfig") or {})


def refuse_stopping_config(config: Param) -> None:
    for field in sorted(set(config) - HONOURED_STOPPING_CONFIG):
        raise SpecError(
            f"studySpec.studyStoppingConfig.{field}",
            "not carried out locally; allowed: maxNumTrials",
        )


def check_parameters(spec: Param, parameters: list[Param]) -> None:
    """A user-provided trial's parameters: known IDs, each value within its parameter's spec."""
    specs = {p["parameterId"]: p for p in all_parameters(spec["parameters"])}
    for index, parameter in enumerate(parameters):
        field = f"parameters[{index}]"
        name = parameter.get("parameterId")
        if name not in specs:
            raise SpecError(f"{field}.parameterId", f"allowed: {sorted(specs)}; got {name!r}")
        if not value_allowed(specs[name], parameter.get("value")):
            raise SpecError(f"{field}.value", f"{parameter.get('value')!r} is outside "
                            f"parameter {name!r}'s spec")  # fmt: skip


def value_allowed(spec: Param, value: Any) -> bool:
    for kind in ("doubleValueSpec", "integerValueSpec"):
        if kind in spec:
            if not isinstance(value, (int, float)):
                return False
            low, high = (float(spec[kind][k]) for k in ("minValue", "maxValue"))
            whole = kind == "doubleValueSpec" or float(value).is_integer()
            return whole and low <= value <= high
    if "discreteValueSpec" in spec:
        return isinstance(value, (int, float)) and value in spec["discreteValueSpec"]["values"]
    return value in spec["categoricalValueSpec"]["values"]


def check_final_measurement(spec: Param, measurement: Param) -> None:
    reported = {m.get("metricId") for m in measurement.get("metrics") or []}
    missing = [m["metricId"] for m in spec["metrics"] if m["metricId"] not in reported]
    if missing:
        raise SpecError(
            "finalMeasurement.metrics", f"needs a value for every study metric; missing {missing}"
        )
