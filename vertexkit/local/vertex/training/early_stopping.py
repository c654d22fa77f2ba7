"""Automated early stopping of one trial from its intermediate measurements, shared by Vizier's
`checkTrialEarlyStoppingState` and the tuning jobs that stop their own trials.

A curve is a trial's list of measurements (`stepCount`, optional `elapsedDuration`, `metrics`),
ordered as reported. Objective values are signed so that larger is better whatever the first
metric's goal; the first metric is the objective. The x-axis is `stepCount`, or the seconds of
`elapsedDuration` when the stopping spec sets useElapsedDuration.
"""

from __future__ import annotations

import statistics
from typing import Any

Param = dict[str, Any]
Curve = list[Param]


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


def step(measurement: Param) -> float:
    return float(measurement.get("stepCount") or 0)


def elapsed(measurement: Param) -> float:
    """`elapsedDuration` in seconds: proto3 JSON writes a Duration as "1.5s"."""
    return float(str(measurement.get("elapsedDuration") or "0s").rstrip("s"))


def x_axis(stopping: Param) -> Any:
    return elapsed if stopping.get("useElapsedDuration") else step


def points(spec: Param, curve: Curve, axis: Any) -> list[tuple[float, float]]:
    """(x, signed objective) of each measurement that reports every study metric."""
    found = []
    for measurement in curve:
        values = signed(spec, measurement)
        if values:
            found.append((axis(measurement), values[0]))
    return found


# -- MedianAutomatedStoppingSpec ------------------------------------------------------------
def median_rule_stops(spec: Param, curve: Curve, completed: list[Curve]) -> bool:
    """The rule as its reference states it: stop a pending trial whose best objective value is
    strictly below the median 'performance' of the completed trials, a completed trial's
    performance being the running average of the objective values it reported up to the
    pending trial's last measurement (on the x-axis). Completed trials with no measurement up
    to that point take no part; with none left, the trial goes on."""
    axis = x_axis(spec.get("medianAutomatedStoppingSpec") or {})
    own = points(spec, curve, axis)
    if not own:
        return False
    last = own[-1][0]
    averages = [running_average(spec, other, axis, last) for other in completed]
    usable = [a for a in averages if a is not None]
    return bool(usable) and max(v for _, v in own) < statistics.median(usable)


def running_average(spec: Param, curve: Curve, axis: Any, up_to: float) -> float | None:
    values = [v for x, v in points(spec, curve, axis) if x <= up_to]
    return statistics.fmean(values) if values else None


# -- DecayCurveAutomatedStoppingSpec ------------------------------------------------------
def decay_curve_stops(spec: Param, curve: Curve, completed: list[Curve]) -> bool:
    """A local stand-in for Vertex's rule, which fits a Gaussian process to predict a trial's
    final value and stops it when it has "very low probability to exceed the optimal value
    found so far". No probability model here: the pending trial's final value is predicted as
    its best value so far plus the largest improvement any completed trial still made after
    the same point on the x-axis (an optimistic extrapolation: a curve is assumed to improve
    at most as much as the best-improving completed curve did). The trial is stopped when even
    that prediction is strictly below the best final value of the completed trials. Completed
    trials with no measurement up to that point take no part; with none left, it goes on."""
    axis = x_axis(spec.get("decayCurveStoppingSpec") or {})
    own = points(spec, curve, axis)
    if not own:
        return False
    last = own[-1][0]
    finals, gains = [], []
    for other in completed:
        theirs = points(spec, other, axis)
        before = [v for x, v in theirs if x <= last]
        if before:
            finals.append(max(v for _, v in theirs))
            gains.append(max(v for _, v in theirs) - max(before))
    if not finals:
        return False
    predicted = max(v for _, v in own) + max(gains)
    return predicted < max(finals)


RULES = {
    "medianAutomatedStoppingSpec": median_rule_stops,
    "decayCurveStoppingSpec": decay_curve_stops,
}


def should_stop(spec: Param, curve: Curve, completed: list[Curve]) -> str:
    """The name of the study spec's stopping rule that stops this trial, or "" to go on."""
    for name, rule in RULES.items():
        if name in spec and rule(spec, curve, completed):
            return name
    return ""
