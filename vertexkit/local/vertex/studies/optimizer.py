"""Trial suggestions for a Vizier study, from the optimiser the local tuning jobs use.

The Optuna study is never kept between requests: it is rebuilt from the stored trials each
time (`rebuild`), so the local cloud can restart without losing what the optimiser knows.
Each stored trial is replayed through the same `suggest` the tuning jobs draw with (its values
enqueued, so the draw returns them): the search space is then defined once, in `tuning.py`.
SUCCEEDED trials are told their final measurement, INFEASIBLE ones fail, the others stay
running. GRID_SEARCH hands out the untried points of `tuning.grid_points`, in its seeded order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vertexkit.local.vertex.training.tuning import (
    _optuna,
    all_parameters,
    grid_points,
    make_sampler,
    suggest,
)

if TYPE_CHECKING:
    import optuna

Param = dict[str, Any]
# A study has no maxTrialCount: TPE's random warm-up is sized as for a 40-trial budget
# (10 trials, `tuning.startup_trials`) unless studyStoppingConfig.maxNumTrials says otherwise.
DEFAULT_BUDGET = 40


def suggest_values(spec: Param, trials: list[Param], seed: int, count: int) -> list[Param]:
    """Up to `count` new parameter assignments ({parameterId: value}); fewer when a grid
    runs out."""
    if spec.get("algorithm") == "GRID_SEARCH":
        return untried_grid_points(spec, trials, seed)[:count]
    # Replayed trials draw nothing from the sampler's generator, so a sampler seeded alike on
    # every request would repeat its first draw: the seed moves on with the trial count.
    study = rebuild(spec, trials, (seed + len(trials)) % 2**32)
    start = starting_point(spec) if not trials else {}
    if start:  # the first trial tries the defaults, as Vizier's "good starting point"
        study.enqueue_trial(internal_values(spec, start))
    return [ask(study, spec) for _ in range(count)]


VALUE_SPECS = ("doubleValueSpec", "integerValueSpec", "categoricalValueSpec", "discreteValueSpec")


def starting_point(spec: Param) -> Param:
    """Each top-level parameter's `defaultValue` (ParameterSpec reference: "a relatively good
    starting point ... Currently only supported by the Vertex AI Vizier service")."""
    point: Param = {}
    for parameter in spec.get("parameters") or []:
        for kind in VALUE_SPECS:
            default = (parameter.get(kind) or {}).get("defaultValue")
            if default is not None:
                point[parameter["parameterId"]] = default
    return point


def untried_grid_points(spec: Param, trials: list[Param], seed: int) -> list[Param]:
    tried = [trial_values(trial) for trial in trials]
    # The grid's order comes from the study's own seed, not the per-request one.
    return [point for point in grid_points(spec, seed) if point not in tried]


def rebuild(spec: Param, trials: list[Param], seed: int) -> optuna.Study:
    budget = int((spec.get("studyStoppingConfig") or {}).get("maxNumTrials") or DEFAULT_BUDGET)
    sampler = make_sampler(spec, seed, budget)
    study = _optuna().create_study(directions=directions(spec), sampler=sampler)
    for trial in trials:
        replay(study, spec, trial)
    return study


def directions(spec: Param) -> list[str]:
    return ["maximize" if m["goal"] == "MAXIMIZE" else "minimize" for m in spec["metrics"]]


def replay(study: optuna.Study, spec: Param, trial: Param) -> None:
    """Re-draws a stored trial's values into `study` and tells it the trial's outcome."""
    study.enqueue_trial(internal_values(spec, trial_values(trial)))
    optuna_trial = study.ask()
    suggest(optuna_trial, spec["parameters"], False, {})
    if trial.get("state") == "SUCCEEDED":
        study.tell(optuna_trial, objective_values(spec, trial["finalMeasurement"]))
    elif trial.get("state") == "INFEASIBLE":
        study.tell(optuna_trial, state=_optuna().trial.TrialState.FAIL)


def ask(study: optuna.Study, spec: Param) -> Param:
    values: Param = {}
    suggest(study.ask(), spec["parameters"], False, values)
    return values


def trial_values(trial: Param) -> Param:
    return {p["parameterId"]: p.get("value") for p in trial.get("parameters") or []}


def objective_values(spec: Param, measurement: Param) -> list[float]:
    by_id = {m["metricId"]: float(m.get("value") or 0.0) for m in measurement.get("metrics") or []}
    return [by_id[m["metricId"]] for m in spec["metrics"]]


def internal_values(spec: Param, values: Param) -> Param:
    """Values as `tuning.suggest_one` drew them: a reverse-log value was drawn reflected."""
    specs = {p["parameterId"]: p for p in all_parameters(spec["parameters"])}
    return {name: internal_value(specs[name], value) for name, value in values.items()}


def internal_value(spec: Param, value: Any) -> Any:
    reverse = spec.get("scaleType") == "UNIT_REVERSE_LOG_SCALE"
    for kind, cast in (("doubleValueSpec", float), ("integerValueSpec", int)):
        if kind in spec:
            low, high = (cast(spec[kind][k]) for k in ("minValue", "maxValue"))
            return low + high - cast(value) if reverse else cast(value)
    if "discreteValueSpec" in spec:
        return float(value)
    return value
