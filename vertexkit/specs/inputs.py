"""The rules each vertexkit component applies to its own inputs, in one table.

A component checks its arguments with `check_component_inputs` before it creates anything, and
`vertexkit run`'s preflight applies the same table to every task whose inputs are known before
the run (constants and pipeline parameters), so a bad value fails before the first task. A rule
sees one value and the input's name; the cross-field rules run only when every field they need
is known. Every failure is a `SpecError` whose `.field` is the component input's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from vertexkit.specs.errors import SpecError, allowed
from vertexkit.specs.naming import shorten, validate_display_name, validate_labels, validate_region
from vertexkit.specs.worker_pools import duration_seconds

Rule = Callable[[Any, str], None]

TRAINING_FRAMEWORKS = ("sklearn", "xgboost", "tensorflow", "pytorch")
SERVING_FRAMEWORKS = ("sklearn", "xgboost", "tensorflow")
FRAMEWORK_ALIASES = {"scikit-learn": "sklearn", "tf": "tensorflow", "tf2": "tensorflow"}
DIRECTIONS = ("maximize", "minimize")
EVALUATION_TASKS = ("classification", "regression")
BOOT_DISK_TYPES = ("pd-ssd", "pd-standard")
GOALS = ("MAXIMIZE", "MINIMIZE")
ALGORITHMS = ("ALGORITHM_UNSPECIFIED", "GRID_SEARCH", "RANDOM_SEARCH")
# Friendly metric names -> the keys Vertex's evaluation schemas use (both are accepted).
METRIC_KEYS = {
    "f1": "f1Score",
    "log_loss": "logLoss",
    "roc_auc": "auRoc",
    "pr_auc": "auPrc",
    "rmse": "rootMeanSquaredError",
    "mae": "meanAbsoluteError",
    "mape": "meanAbsolutePercentageError",
    "r2": "rSquared",
}
# Scalar metrics of Vertex's classification and regression metrics schemas.
SCHEMA_METRICS = (
    "accuracy",
    "precision",
    "recall",
    "f1Score",
    "logLoss",
    "auRoc",
    "auPrc",
    "rootMeanSquaredError",
    "meanAbsoluteError",
    "meanAbsolutePercentageError",
    "rSquared",
    "rootMeanSquaredLogError",
)
METRICS = (*METRIC_KEYS, *SCHEMA_METRICS)


# -- one-value rules ---------------------------------------------------------------------------
def as_integer(value: Any, field: str) -> int:
    """An int, or a whole float (compiled pipelines carry integers as `1.0`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(field, f"must be an integer; got {shorten(value)}")
    if isinstance(value, float) and not value.is_integer():
        raise SpecError(field, f"must be an integer; got {shorten(value)}")
    return int(value)


def as_number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(field, f"must be a number; got {shorten(value)}")
    return float(value)


def at_least(minimum: int) -> Rule:
    def rule(value: Any, field: str) -> None:
        if as_integer(value, field) < minimum:
            raise SpecError(field, f"must be >= {minimum}; got {shorten(value)}")

    return rule


def between(low: int, high: int) -> Rule:
    def rule(value: Any, field: str) -> None:
        if not low <= as_integer(value, field) <= high:
            raise SpecError(field, f"must be within {low}..{high}; got {shorten(value)}")

    return rule


def not_negative_number(value: Any, field: str) -> None:
    if as_number(value, field) < 0:
        raise SpecError(field, f"must be >= 0; got {shorten(value)}")


def one_of(values: tuple[str, ...]) -> Rule:
    def rule(value: Any, field: str) -> None:
        if value not in values:
            raise SpecError(field, f"{value!r} is not allowed; allowed: {allowed(values)}")

    return rule


def display_name(value: Any, field: str) -> None:
    validate_display_name(value, field)


def optional_display_name(value: Any, field: str) -> None:
    if value != "":
        validate_display_name(value, field)


def region(value: Any, field: str) -> None:
    validate_region(value, field)


def labels(value: Any, field: str) -> None:
    validate_labels(value, field)


def duration(value: Any, field: str) -> None:
    if not isinstance(value, str):
        raise SpecError(
            field, f"must be a duration in seconds such as '3600s'; got {shorten(value)}"
        )
    duration_seconds(value, field)


def framework_name(framework: str, choices: tuple[str, ...], field: str = "framework") -> str:
    """The canonical framework name (`scikit-learn` -> `sklearn`), or a SpecError."""
    name = str(framework).lower()
    name = FRAMEWORK_ALIASES.get(name, name)
    if name not in choices:
        raise SpecError(field, f"unknown framework {framework!r}; allowed: {allowed(choices)}")
    return name


def framework(choices: tuple[str, ...]) -> Rule:
    def rule(value: Any, field: str) -> None:
        if value != "":
            framework_name(value, choices, field)

    return rule


def metric(value: Any, field: str) -> None:
    if value not in METRICS:
        raise SpecError(field, f"unknown metric {value!r}; allowed: {allowed(METRICS)}")


# -- cross-field rules -------------------------------------------------------------------------
CrossRule = Callable[[Mapping[str, Any]], None]


def training_machine(values: Mapping[str, Any]) -> None:
    _machine(values, for_prediction=False)


def serving_machine(values: Mapping[str, Any]) -> None:
    if not values.get("automatic_resources"):
        _machine(values, for_prediction=True)


def _machine(values: Mapping[str, Any], for_prediction: bool) -> None:
    from vertexkit.specs.machines import MachineSpec, validate_dedicated_resources

    accelerator = values["accelerator_type"] or None
    count = as_integer(values["accelerator_count"], "accelerator_count")
    spec = {"machineType": values["machine_type"]}
    if accelerator:
        spec |= {"acceleratorType": accelerator, "acceleratorCount": count}
    try:
        if for_prediction:
            validate_dedicated_resources({"machineSpec": spec, "minReplicaCount": 1}, "")
        else:
            MachineSpec.from_api(spec)  # checked as a training machine
    except SpecError as exc:
        raise SpecError(_snake(exc.field.rsplit(".", 1)[-1]), exc.reason) from None
    if bool(accelerator) != (count > 0):
        raise SpecError(
            "accelerator_count", "give accelerator_type with accelerator_count >= 1, or neither"
        )


def prebuilt_training_image(values: Mapping[str, Any]) -> None:
    """A python package on a prebuilt image: Vertex has one for this framework, version and
    accelerator (vertexkit/specs/data/images.json), e.g. no GPU image for sklearn 0.23."""
    from vertexkit.specs.images import training_image

    image_given = values["executor_image_uri"] or values["container_image_uri"]
    if values["framework"] and not image_given:
        training_image(
            values["framework"],
            values["framework_version"],
            values["accelerator_type"],
            values["machine_type"],
        )


def replica_range(values: Mapping[str, Any]) -> None:
    low = as_integer(values["min_replica_count"], "min_replica_count")
    high = as_integer(values["max_replica_count"], "max_replica_count")
    if high < low:
        raise SpecError("max_replica_count", f"{high} is below min_replica_count {low}")


def trial_counts(values: Mapping[str, Any]) -> None:
    parallel = as_integer(values["parallel_trial_count"], "parallel_trial_count")
    maximum = as_integer(values["max_trial_count"], "max_trial_count")
    if parallel > maximum:
        raise SpecError("parallel_trial_count", f"{parallel} is above max_trial_count {maximum}")


def _snake(field: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in field).lstrip("_")


_MACHINE_FIELDS = ("machine_type", "accelerator_type", "accelerator_count")
_TRAINING_RULES: dict[str, Rule] = {
    "display_name": display_name,
    "location": region,
    "replica_count": at_least(1),
    "accelerator_count": at_least(0),
    "reduction_server_replica_count": at_least(0),
    "boot_disk_type": one_of(BOOT_DISK_TYPES),
    "boot_disk_size_gb": between(100, 64000),
    "timeout": duration,
    "framework": framework(TRAINING_FRAMEWORKS),
    "labels": labels,
}
_TUNING_RULES: dict[str, Rule] = {
    **_TRAINING_RULES,
    "goal": one_of(GOALS),
    "algorithm": one_of(ALGORITHMS),
    "max_trial_count": at_least(1),
    "parallel_trial_count": at_least(1),
    "max_failed_trial_count": at_least(0),
}
_IMAGE_FIELDS = (
    *_MACHINE_FIELDS,
    "framework",
    "framework_version",
    "executor_image_uri",
    "container_image_uri",
)
_TRAINING_CROSS = ((_MACHINE_FIELDS, training_machine), (_IMAGE_FIELDS, prebuilt_training_image))

# component function name -> ({input: rule}, ((inputs needed, cross-field rule), ...))
COMPONENT_RULES: dict[str, tuple[dict[str, Rule], tuple[tuple[tuple[str, ...], CrossRule], ...]]]
COMPONENT_RULES = {
    "custom_training_job": (_TRAINING_RULES, _TRAINING_CROSS),
    "hyperparameter_tuning_job": (
        _TUNING_RULES,
        (*_TRAINING_CROSS, (("max_trial_count", "parallel_trial_count"), trial_counts)),
    ),
    "upload_model": (
        {
            "display_name": display_name,
            "location": region,
            "framework": framework(SERVING_FRAMEWORKS),
            "labels": labels,
        },
        (),
    ),
    "deploy_model": (
        {
            "endpoint_display_name": display_name,
            "deployed_model_display_name": optional_display_name,
            "location": region,
            "traffic_percentage": between(0, 100),
            "min_replica_count": at_least(1),
            "max_replica_count": at_least(1),
            "accelerator_count": at_least(0),
        },
        (
            (("min_replica_count", "max_replica_count"), replica_range),
            ((*_MACHINE_FIELDS, "automatic_resources"), serving_machine),
        ),
    ),
    "compare_models": (
        {
            "metric": metric,
            "direction": one_of(DIRECTIONS),
            "min_improvement": not_negative_number,
            "location": region,
        },
        (),
    ),
    "evaluate_model": ({"task": one_of(EVALUATION_TASKS), "location": region}, ()),
    "evaluate_champion": (
        {
            "model_display_name": display_name,
            "task": one_of(EVALUATION_TASKS),
            "location": region,
        },
        (),
    ),
    "record_decision": ({"metric": metric, "location": region}, ()),
}


def check_component_inputs(component: str, values: Mapping[str, Any]) -> None:
    """Applies `component`'s rules to the inputs in `values` (the known ones; others skipped)."""
    rules, cross_rules = COMPONENT_RULES.get(component, ({}, ()))
    for name, rule in rules.items():
        if name in values:
            rule(values[name], name)
    for needed, cross_rule in cross_rules:
        if all(name in values for name in needed):
            cross_rule(values)
