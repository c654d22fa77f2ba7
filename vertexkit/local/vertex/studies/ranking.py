"""Comparing trials by their metrics: the optimal trials and the final measurement a complete
picks. The median automated stopping rule lives in `training.early_stopping`, shared with
tuning jobs.

Objective values are signed so that larger is better whatever each metric's goal, which keeps
every comparison here one-directional.
"""

from __future__ import annotations

from typing import Any

from vertexkit.local.vertex.training.early_stopping import signed

Param = dict[str, Any]


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
