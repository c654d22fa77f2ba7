"""StudySpec and HyperparameterTuningJob: metrics, parameters, algorithm, trial limits."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from vertexkit.specs.base import SpecModel, enum_name
from vertexkit.specs.errors import SpecError, allowed, join_path
from vertexkit.specs.naming import validate_display_name, validate_labels
from vertexkit.specs.worker_pools import CustomJobSpec

Goal = Literal["MAXIMIZE", "MINIMIZE"]
ScaleType = Literal[
    "SCALE_TYPE_UNSPECIFIED", "UNIT_LINEAR_SCALE", "UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE"
]
Algorithm = Literal["ALGORITHM_UNSPECIFIED", "GRID_SEARCH", "RANDOM_SEARCH"]
MeasurementSelection = Literal[
    "MEASUREMENT_SELECTION_TYPE_UNSPECIFIED", "LAST_MEASUREMENT", "BEST_MEASUREMENT"
]
VALUE_SPECS = ("doubleValueSpec", "integerValueSpec", "categoricalValueSpec", "discreteValueSpec")
LOG_SCALES = ("UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE")


class MetricSpec(SpecModel):
    metric_id: str = ""
    goal: Goal | None = None
    safety_config: dict[str, Any] | None = None

    @field_validator("goal", mode="before")
    @classmethod
    def _goal_name(cls, value: Any) -> Any:
        value = enum_name(value, _study_spec_pb().MetricSpec.GoalType, "goal")
        return None if value == "GOAL_TYPE_UNSPECIFIED" else value

    def check(self, path: str) -> None:
        if not self.metric_id:
            raise SpecError(join_path(path, "metricId"), "required: the metric's name")
        if self.goal is None:
            raise SpecError(join_path(path, "goal"), "required; allowed: MAXIMIZE, MINIMIZE")


# proto3 JSON omits fields equal to zero, so an absent min or max means 0, not "missing".
class DoubleValueSpec(SpecModel):
    min_value: float = 0.0
    max_value: float = 0.0
    default_value: float | None = None


class IntegerValueSpec(SpecModel):
    min_value: int = 0
    max_value: int = 0
    default_value: int | None = None


class CategoricalValueSpec(SpecModel):
    values: list[str] = Field(default_factory=list)
    default_value: str | None = None


class DiscreteValueSpec(SpecModel):
    values: list[float] = Field(default_factory=list)
    default_value: float | None = None


class ParentValues(SpecModel):
    values: list[Any] = Field(default_factory=list)


class ConditionalParameterSpec(SpecModel):
    """A child parameter searched only when its parent takes one of the listed values."""

    parent_discrete_values: ParentValues | None = None
    parent_int_values: ParentValues | None = None
    parent_categorical_values: ParentValues | None = None
    parameter_spec: ParameterSpec


class ParameterSpec(SpecModel):
    """One hyperparameter: exactly one of double/integer/categorical/discrete value specs."""

    parameter_id: str = ""
    double_value_spec: DoubleValueSpec | None = None
    integer_value_spec: IntegerValueSpec | None = None
    categorical_value_spec: CategoricalValueSpec | None = None
    discrete_value_spec: DiscreteValueSpec | None = None
    scale_type: ScaleType | None = None
    conditional_parameter_specs: list[ConditionalParameterSpec] | None = None

    @field_validator("scale_type", mode="before")
    @classmethod
    def _scale_name(cls, value: Any) -> Any:
        return enum_name(value, _study_spec_pb().ParameterSpec.ScaleType, "scaleType")

    @property
    def kind(self) -> str:
        """`double`, `integer`, `categorical` or `discrete`."""
        for kind in ("double", "integer", "categorical", "discrete"):
            if getattr(self, f"{kind}_value_spec") is not None:
                return kind
        return ""

    def check(self, path: str) -> None:
        if not self.parameter_id:
            raise SpecError(join_path(path, "parameterId"), "required: the argument's name")
        given = [name for name in VALUE_SPECS if getattr(self, _snake(name)) is not None]
        if len(given) != 1:
            raise SpecError(
                path,
                f"set exactly one of {allowed(VALUE_SPECS)}; got {allowed(given) or 'none'}",
            )
        getattr(self, f"_check_{self.kind}")(join_path(path, given[0]))
        self._check_scale(path)
        for index, child in enumerate(self.conditional_parameter_specs or []):
            self._check_child(child, join_path(join_path(path, "conditionalParameterSpecs"), index))

    def _check_double(self, path: str) -> None:
        spec = self.double_value_spec
        assert spec is not None
        _check_range(spec.min_value, spec.max_value, spec.default_value, path)

    def _check_integer(self, path: str) -> None:
        spec = self.integer_value_spec
        assert spec is not None
        _check_range(spec.min_value, spec.max_value, spec.default_value, path)

    def _check_categorical(self, path: str) -> None:
        spec = self.categorical_value_spec
        assert spec is not None
        _check_values(spec.values, spec.default_value, path, ordered=False)

    def _check_discrete(self, path: str) -> None:
        spec = self.discrete_value_spec
        assert spec is not None
        _check_values(spec.values, spec.default_value, path, ordered=True)

    def _check_scale(self, path: str) -> None:
        scale = self.scale_type
        if scale in (None, "SCALE_TYPE_UNSPECIFIED"):
            return
        field = join_path(path, "scaleType")
        if self.kind == "categorical":
            raise SpecError(field, "categorical parameters take no scaleType; leave it unset")
        if scale in LOG_SCALES and self.lower_bound() <= 0:
            raise SpecError(
                field,
                f"{scale} needs every value > 0 (got minimum {self.lower_bound()}); "
                "use UNIT_LINEAR_SCALE or a positive range",
            )

    def lower_bound(self) -> float:
        if self.double_value_spec is not None:
            return self.double_value_spec.min_value
        if self.integer_value_spec is not None:
            return self.integer_value_spec.min_value
        values = self.discrete_value_spec.values if self.discrete_value_spec else []
        return min(values) if values else 0.0

    def domain(self) -> list[Any] | None:
        """The values a conditional child may be keyed on (None for doubles)."""
        if self.integer_value_spec is not None:
            spec = self.integer_value_spec
            return list(range(spec.min_value, spec.max_value + 1))
        if self.categorical_value_spec is not None:
            return list(self.categorical_value_spec.values)
        if self.discrete_value_spec is not None:
            return list(self.discrete_value_spec.values)
        return None

    def _check_child(self, child: ConditionalParameterSpec, path: str) -> None:
        parents = {
            "parentDiscreteValues": ("discrete", child.parent_discrete_values),
            "parentIntValues": ("integer", child.parent_int_values),
            "parentCategoricalValues": ("categorical", child.parent_categorical_values),
        }
        given = [(name, kind, spec) for name, (kind, spec) in parents.items() if spec is not None]
        expected = {kind: name for name, (kind, _) in parents.items()}.get(self.kind)
        if self.kind == "double":
            raise SpecError(
                path,
                "a double parameter cannot have conditional parameters; "
                "the parent must be integer, categorical or discrete",
            )
        if len(given) != 1 or given[0][0] != expected:
            raise SpecError(
                path,
                f"parent {self.parameter_id!r} is {self.kind}: set exactly {expected}",
            )
        name, _, spec = given[0]
        domain = self.domain() or []
        values_path = join_path(join_path(path, name), "values")
        if not spec.values:
            raise SpecError(values_path, f"required: values of {self.parameter_id!r}")
        for index, raw in enumerate(spec.values):
            value = _as_parent_value(self.kind, raw)
            if value not in domain:
                raise SpecError(
                    join_path(values_path, index),
                    f"{value!r} is not a value of {self.parameter_id!r}; allowed: "
                    f"{allowed(domain[:50])}",
                )
        child.parameter_spec.check(join_path(path, "parameterSpec"))


def _as_parent_value(kind: str, value: Any) -> Any:
    """int64 values arrive as JSON strings ("3"); compare them as numbers."""
    try:
        if kind == "integer":
            return int(value)
        if kind == "discrete":
            return float(value)
    except (TypeError, ValueError):
        return value
    return value


def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)


def _check_range(low: float, high: float, default: float | None, path: str) -> None:
    if low > high:
        raise SpecError(
            join_path(path, "maxValue"), f"must be at least minValue ({low}); got {high}"
        )
    if default is not None and not low <= default <= high:
        raise SpecError(
            join_path(path, "defaultValue"), f"must be within [{low}, {high}]; got {default}"
        )


def _check_values(values: list[Any], default: Any, path: str, *, ordered: bool) -> None:
    if not values:
        raise SpecError(join_path(path, "values"), "required: at least one value")
    if len(set(values)) != len(values):
        raise SpecError(join_path(path, "values"), f"values must be distinct; got {values}")
    if ordered and values != sorted(values):
        raise SpecError(join_path(path, "values"), f"must be in increasing order; got {values}")
    if default is not None and default not in values:
        raise SpecError(
            join_path(path, "defaultValue"), f"must be one of {allowed(values)}; got {default!r}"
        )


ConditionalParameterSpec.model_rebuild()


# -- automated stopping: typed, so a misspelt or mistyped field is a 400, not a silent no-op --
class ElapsedAxisStoppingSpec(SpecModel):
    """DecayCurveAutomatedStoppingSpec and MedianAutomatedStoppingSpec: both have one field."""

    use_elapsed_duration: bool = False


class ConvexAutomatedStoppingSpec(SpecModel):
    max_step_count: int = Field(default=0, ge=0)
    min_step_count: int = Field(default=0, ge=0)
    min_measurement_count: int = Field(default=0, ge=0)
    learning_rate_parameter_name: str = ""
    use_elapsed_duration: bool = False
    update_all_stopped_trials: bool | None = None


class StudyTimeConstraint(SpecModel):
    """A oneof: maxDuration (since the study was created) or endTime (a wall-clock time)."""

    max_duration: str | None = None
    end_time: str | None = None


class StudyStoppingConfig(SpecModel):
    should_stop_asap: bool | None = None
    minimum_runtime_constraint: StudyTimeConstraint | None = None
    maximum_runtime_constraint: StudyTimeConstraint | None = None
    min_num_trials: int | None = Field(default=None, ge=0)
    max_num_trials: int | None = Field(default=None, ge=0)
    max_num_trials_no_progress: int | None = Field(default=None, ge=0)
    max_duration_no_progress: str | None = None


class StudySpec(SpecModel):
    """What a tuning job optimises and how it searches."""

    metrics: list[MetricSpec] = Field(default_factory=list)
    parameters: list[ParameterSpec] = Field(default_factory=list)
    algorithm: Algorithm | None = None
    observation_noise: Literal["OBSERVATION_NOISE_UNSPECIFIED", "LOW", "HIGH"] | None = None
    measurement_selection_type: MeasurementSelection | None = None
    decay_curve_stopping_spec: ElapsedAxisStoppingSpec | None = None
    median_automated_stopping_spec: ElapsedAxisStoppingSpec | None = None
    convex_automated_stopping_spec: ConvexAutomatedStoppingSpec | None = None
    study_stopping_config: StudyStoppingConfig | None = None

    @field_validator("algorithm", mode="before")
    @classmethod
    def _algorithm_name(cls, value: Any) -> Any:
        return enum_name(value, _study_spec_pb().Algorithm, "algorithm")

    @field_validator("observation_noise", mode="before")
    @classmethod
    def _noise_name(cls, value: Any) -> Any:
        return enum_name(value, _study_spec_pb().ObservationNoise, "observationNoise")

    @field_validator("measurement_selection_type", mode="before")
    @classmethod
    def _selection_name(cls, value: Any) -> Any:
        return enum_name(
            value, _study_spec_pb().MeasurementSelectionType, "measurementSelectionType"
        )

    def check(self, path: str) -> None:
        if not self.metrics:
            raise SpecError(join_path(path, "metrics"), "required: at least one metric to optimise")
        _check_unique([m.metric_id for m in self.metrics], join_path(path, "metrics"), "metricId")
        for index, metric in enumerate(self.metrics):
            metric.check(join_path(join_path(path, "metrics"), index))
        if not self.parameters:
            raise SpecError(join_path(path, "parameters"), "required: at least one parameter")
        for index, parameter in enumerate(self.parameters):
            parameter.check(join_path(join_path(path, "parameters"), index))
        _check_unique(
            [p.parameter_id for p in self.all_parameters()],
            join_path(path, "parameters"),
            "parameterId",
        )
        if self.algorithm == "GRID_SEARCH":
            self._check_grid(path)

    def all_parameters(self) -> list[ParameterSpec]:
        """Every parameter, conditional children included, depth first."""
        found: list[ParameterSpec] = []

        def walk(parameter: ParameterSpec) -> None:
            found.append(parameter)
            for child in parameter.conditional_parameter_specs or []:
                walk(child.parameter_spec)

        for parameter in self.parameters:
            walk(parameter)
        return found

    def _check_grid(self, path: str) -> None:
        for parameter in self.all_parameters():
            if parameter.kind == "double":
                raise SpecError(
                    join_path(path, "algorithm"),
                    f"GRID_SEARCH needs integer, categorical or discrete parameters; "
                    f"{parameter.parameter_id!r} is double (use discreteValueSpec)",
                )


def _check_unique(values: list[str], path: str, what: str) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise SpecError(path, f"duplicate {what} {value!r}")
        seen.add(value)


class HyperparameterTuningJob(SpecModel):
    """The create request of a tuning job (output-only fields accepted and ignored)."""

    display_name: str = ""
    study_spec: StudySpec | None = None
    max_trial_count: int = 0
    parallel_trial_count: int = 0
    max_failed_trial_count: int = Field(default=0, ge=0)
    trial_job_spec: CustomJobSpec | None = None
    labels: dict[str, str] | None = None
    encryption_spec: dict[str, Any] | None = None
    # Output only: Vertex ignores them on create.
    name: str | None = None
    trials: list[dict[str, Any]] | None = None
    state: Any = None
    create_time: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    update_time: str | None = None
    error: dict[str, Any] | None = None
    satisfies_pzs: bool | None = None
    satisfies_pzi: bool | None = None

    def check(self, path: str) -> None:
        validate_display_name(self.display_name, join_path(path, "displayName"))
        validate_labels(self.labels, join_path(path, "labels"))
        if self.study_spec is None:
            raise SpecError(join_path(path, "studySpec"), "required: metrics and parameters")
        self.study_spec.check(join_path(path, "studySpec"))
        if self.max_trial_count < 1:
            raise SpecError(
                join_path(path, "maxTrialCount"), f"must be at least 1; got {self.max_trial_count}"
            )
        if not 1 <= self.parallel_trial_count <= self.max_trial_count:
            raise SpecError(
                join_path(path, "parallelTrialCount"),
                f"must be between 1 and maxTrialCount ({self.max_trial_count}); "
                f"got {self.parallel_trial_count}",
            )
        if self.trial_job_spec is None:
            raise SpecError(join_path(path, "trialJobSpec"), "required: the trial's worker pools")
        self.trial_job_spec.check(join_path(path, "trialJobSpec"))


def validate_tuning_job(job: dict[str, Any], path: str = "") -> HyperparameterTuningJob:
    """Checks a HyperparameterTuningJob create body; returns it parsed or raises SpecError."""
    return HyperparameterTuningJob.from_api(job, path)


def _study_spec_pb() -> Any:
    """The StudySpec proto, imported on first use (aiplatform_v1 takes ~1 s to import)."""
    from google.cloud.aiplatform_v1.types import study

    return study.StudySpec
