"""Study spec -> Optuna: scales, conditional parameters, hypertune metric files."""

from __future__ import annotations

import json
from pathlib import Path

import optuna

from vertexkit.local.vertex.training.tuning import (
    final_measurement,
    format_arg,
    grid_points,
    read_curve,
    suggest,
)


def draw(specs: list[dict], trials: int = 200) -> list[dict]:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    drawn = []
    for _ in range(trials):
        values: dict = {}
        suggest(study.ask(), specs, grid=False, values=values)
        drawn.append(values)
    return drawn


def test_reverse_log_scale_is_dense_near_the_maximum() -> None:
    spec = {"parameterId": "m", "doubleValueSpec": {"minValue": 0.01, "maxValue": 0.99}}
    linear = [v["m"] for v in draw([{**spec, "scaleType": "UNIT_LINEAR_SCALE"}])]
    reverse = [v["m"] for v in draw([{**spec, "scaleType": "UNIT_REVERSE_LOG_SCALE"}])]
    log = [v["m"] for v in draw([{**spec, "scaleType": "UNIT_LOG_SCALE"}])]
    assert all(0.01 <= v <= 0.99 for v in reverse)
    above = [sum(v > 0.9 for v in values) for values in (log, linear, reverse)]
    assert above[0] < above[1] < above[2]


def test_conditional_parameter_only_when_parent_matches() -> None:
    spec = {
        "parameterId": "model",
        "categoricalValueSpec": {"values": ["tree", "linear"]},
        "conditionalParameterSpecs": [
            {
                "parentCategoricalValues": {"values": ["tree"]},
                "parameterSpec": {
                    "parameterId": "depth",
                    "integerValueSpec": {"minValue": "1", "maxValue": "5"},
                },
            }
        ],
    }
    drawn = draw([spec], trials=40)
    assert {v["model"] for v in drawn} == {"tree", "linear"}
    assert all(("depth" in v) == (v["model"] == "tree") for v in drawn)


def test_measurement_last_and_best(tmp_path: Path) -> None:
    path = tmp_path / "output.metrics"
    lines = [{"loss": "0.5", "global_step": "1"}, {"loss": "0.2", "global_step": "2"},
             {"loss": "0.4", "global_step": "3"}]  # fmt: skip
    path.write_text("\n".join(json.dumps(line) for line in lines))
    metrics = [{"metricId": "loss", "goal": "MINIMIZE"}]
    curve = read_curve(path, metrics, started=0.0)
    last = final_measurement(curve, metrics, "LAST_MEASUREMENT")
    best = final_measurement(curve, metrics, "BEST_MEASUREMENT")
    assert last and last["stepCount"] == "3" and last["metrics"] == [
        {"metricId": "loss", "value": 0.4}
    ]
    assert best and best["stepCount"] == "2" and best["metrics"] == [
        {"metricId": "loss", "value": 0.2}
    ]
    assert read_curve(path, [{"metricId": "acc", "goal": "MAXIMIZE"}], 0.0) == []


def test_grid_points_cover_every_combination_once() -> None:
    study = {
        "parameters": [
            {"parameterId": "a", "integerValueSpec": {"minValue": "1", "maxValue": "3"}},
            {"parameterId": "b", "discreteValueSpec": {"values": [0.5, 2]}},
        ]
    }
    points = grid_points(study, seed=1)
    assert len(points) == 6 and len({tuple(p.items()) for p in points}) == 6


def test_format_arg() -> None:
    assert (
        format_arg(32.0) == "32" and format_arg(0.001) == "0.001" and format_arg("adam") == "adam"
    )
