"""Comparing trials by their metrics: the optimal trials, the final measurement a complete
picks, and the median automated stopping rule.

Objective values are signed so that larger is better whatever each metric's goal, which keeps
every comparison here one-directional.
"""

from __future__ import annotations

import statistics
from typing import Any

Param = dict[str, Any]


def signed(spec: Param, measurement: Param) -> list[float] | None:
    """The measurement's objective values, negated for MINIMIZE; None if one is missing.
    A reported metric without `value` is 0: proto3 JSON leaves a zero double out."""
    by_id = {m.get("metricId"): m.get("value", 0.0) for m in measurement.get("metrics") or []}
    values = []
    for metric in spec["metrics"]:
        value = by_id.get(metric["metricId"])
        if value is None:
            return None
        values.append(float(value) if metric["goal"] == "MAXIMIZE" else -float(value))
    return values


# -- listOptimalTrials ----------------------------------------------------------------------
def optimal_trials(spec: Param, trials: list[Param]) -> list[Param]:
    """SUCCEEDED trials no other dominates: the best one for a single metric (the earliest of
    equals), the Pareto set for several (as the ListOptimalTrialsResponse reference says)."""
    scored = [(t, signed(spec, t["finalMeasurement"])) for t in trials if succeeded(t)]
    scored = [(t, s) for t, s in scored if s is not None]
    if len(spec["metrics"]) == 1:
        best = max(scored, key=lambda pair: pair[1][0], default=None)
        return [best[0]] if best else []
    return [t for t, s in scored if not any(dominates(other, s) for _, other in scored)]


def succeeded(trial: Param) -> bool:
    return trial.get("state") == "SUCCEEDED" and "finalMeasurement" in trial


def dominates(a: list[float], b: list[float]) -> bool:
    return all(x >= y for x, y in zip(a, b, strict=True)) and a != b


# -- complete without a final measurement ---------------------------------------------------
def select_measurement(spec: Param, measurements: list[Param]) -> Param | None:
    """The measurement a complete without `finalMeasurement` takes, per the study spec's
    measurementSelectionType (LAST_MEASUREMENT unless BEST_MEASUREMENT): Vertex's "the service
    will auto-select a previously reported measurement"."""
    usable = [m for m in measurements if signed(spec, m) is not None]
    if not usable:
        return None
    if spec.get("measurementSelectionType") == "BEST_MEASUREMENT":
        return max(usable, key=lambda m: signed(spec, m)[0])  # type: ignore[index]
    return usable[-1]


# -- checkTrialEarlyStoppingState -----------------------------------------------------------
def median_rule_stops(spec: Param, trial: Param, others: list[Param]) -> bool:
    """MedianAutomatedStoppingSpec, as its reference states it: stop a pending trial whose best
    objective value is strictly below the median performance of the completed trials, each
    completed trial's performance being the running average of its objective values reported
    up to the trial's last measurement (by step count). The first metric is the objective."""
    measurements = trial.get("measurements") or []
    own = objectives(spec, measurements)
    if not own:
        return False
    last_step = step(measurements[-1])
    averages = [running_average(spec, t, last_step) for t in others if succeeded(t)]
    averages = [a for a in averages if a is not None]
    return bool(averages) and max(own) < statistics.median(averages)


def objectives(spec: Param, measurements: list[Param]) -> list[float]:
    """The (signed) first-metric values of the measurements that report every metric."""
    return [values[0] for values in (signed(spec, m) for m in measurements) if values]


def running_average(spec: Param, trial: Param, up_to_step: int) -> float | None:
    reported = [m for m in trial.get("measurements") or [] if step(m) <= up_to_step]
    values = objectives(spec, reported)
    return statistics.fmean(values) if values else None


def step(measurement: Param) -> int:
    return int(measurement.get("stepCount") or 0)
