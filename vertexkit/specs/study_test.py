from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from google.cloud import aiplatform_v1

from vertexkit.specs import SpecError, StudySpec, validate_tuning_job

POOLS = {
    "workerPoolSpecs": [
        {
            "machineSpec": {"machineType": "n1-standard-4"},
            "replicaCount": "1",
            "containerSpec": {"imageUri": "img", "command": ["python", "train.py"]},
        }
    ]
}
JOB: dict[str, Any] = {
    "displayName": "tune",
    "maxTrialCount": 8,
    "parallelTrialCount": 2,
    "maxFailedTrialCount": 3,
    "studySpec": {
        "metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
        "parameters": [
            {
                "parameterId": "lr",
                "doubleValueSpec": {"minValue": 1e-4, "maxValue": 0.1},
                "scaleType": "UNIT_LOG_SCALE",
            },
            {
                "parameterId": "layers",
                "integerValueSpec": {"minValue": "1", "maxValue": "4"},
                "scaleType": "UNIT_LINEAR_SCALE",
            },
            {"parameterId": "batch", "discreteValueSpec": {"values": [16, 32, 64]}},
            {
                "parameterId": "model",
                "categoricalValueSpec": {"values": ["tree", "linear"]},
                "conditionalParameterSpecs": [
                    {
                        "parentCategoricalValues": {"values": ["tree"]},
                        "parameterSpec": {
                            "parameterId": "depth",
                            "integerValueSpec": {"minValue": 2, "maxValue": 8},
                        },
                    }
                ],
            },
        ],
        "algorithm": "RANDOM_SEARCH",
        "measurementSelectionType": "BEST_MEASUREMENT",
    },
    "trialJobSpec": POOLS,
    "labels": {"team": "ml"},
}


def changed(path: str, value: Any) -> dict[str, Any]:
    """JOB with the value at a dotted path (list indexes as numbers) replaced."""
    job = copy.deepcopy(JOB)
    *parents, last = path.split(".")
    node: Any = job
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    if value is DELETE:
        del node[int(last) if last.isdigit() else last]
    else:
        node[int(last) if last.isdigit() else last] = value
    return job


DELETE = object()


def rejected(job: dict[str, Any]) -> SpecError:
    with pytest.raises(SpecError) as caught:
        validate_tuning_job(job)
    return caught.value


def test_valid_job_through_the_proto() -> None:
    proto = aiplatform_v1.HyperparameterTuningJob.from_json(json.dumps(JOB))
    body = json.loads(type(proto).to_json(proto, use_integers_for_enums=True))
    job = validate_tuning_job(body)
    assert job.study_spec is not None
    assert [p.parameter_id for p in job.study_spec.all_parameters()] == [
        "lr",
        "layers",
        "batch",
        "model",
        "depth",
    ]
    assert job.study_spec.algorithm == "RANDOM_SEARCH"  # from the enum number
    assert aiplatform_v1.HyperparameterTuningJob.from_json(json.dumps(job.to_api())) == proto


@pytest.mark.parametrize(
    ("path", "value", "field", "words"),
    [
        ("maxTrialCount", 0, "maxTrialCount", "at least 1"),
        ("parallelTrialCount", 9, "parallelTrialCount", "between 1 and maxTrialCount (8)"),
        ("parallelTrialCount", 0, "parallelTrialCount", "between 1"),
        ("maxFailedTrialCount", -1, "maxFailedTrialCount", "greater than or equal to 0"),
        ("displayName", "", "displayName", "non-empty"),
        ("labels", {"Team": "x"}, "labels.Team", "lowercase"),
        ("trialJobSpec", DELETE, "trialJobSpec", "required"),
        (
            "trialJobSpec.workerPoolSpecs.0.replicaCount",
            "2",
            "trialJobSpec.workerPoolSpecs[0].replicaCount",
            "exactly 1",
        ),
        ("studySpec", DELETE, "studySpec", "required"),
        ("studySpec.metrics", [], "studySpec.metrics", "at least one"),
        ("studySpec.metrics.0.goal", "BIGGER", "studySpec.metrics[0].goal", "MAXIMIZE"),
        ("studySpec.metrics.0.goal", 0, "studySpec.metrics[0].goal", "MAXIMIZE, MINIMIZE"),
        ("studySpec.metrics.0.metricId", "", "studySpec.metrics[0].metricId", "required"),
        (
            "studySpec.metrics",
            [{"metricId": "a", "goal": "MAXIMIZE"}] * 2,
            "studySpec.metrics",
            "duplicate",
        ),
        ("studySpec.parameters", [], "studySpec.parameters", "at least one"),
        (
            "studySpec.parameters.0.doubleValueSpec.maxValue",
            1e-5,
            "studySpec.parameters[0].doubleValueSpec.maxValue",
            "at least minValue",
        ),
        (
            "studySpec.parameters.0.doubleValueSpec.defaultValue",
            5.0,
            "studySpec.parameters[0].doubleValueSpec.defaultValue",
            "within",
        ),
        (
            "studySpec.parameters.0.doubleValueSpec.minValue",
            0.0,
            "studySpec.parameters[0].scaleType",
            "> 0",
        ),
        (
            "studySpec.parameters.0.scaleType",
            "UNIT_CUBE_SCALE",
            "studySpec.parameters[0].scaleType",
            "UNIT_REVERSE_LOG_SCALE",
        ),
        (
            "studySpec.parameters.3.scaleType",
            "UNIT_LINEAR_SCALE",
            "studySpec.parameters[3].scaleType",
            "categorical",
        ),
        (
            "studySpec.parameters.2.discreteValueSpec.values",
            [64, 16],
            "studySpec.parameters[2].discreteValueSpec.values",
            "increasing",
        ),
        (
            "studySpec.parameters.3.categoricalValueSpec.values",
            [],
            "studySpec.parameters[3].categoricalValueSpec.values",
            "at least one",
        ),
        (
            "studySpec.parameters.3.categoricalValueSpec.values",
            ["a", "a"],
            "studySpec.parameters[3].categoricalValueSpec.values",
            "distinct",
        ),
        (
            "studySpec.parameters.1.parameterId",
            "lr",
            "studySpec.parameters",
            "duplicate parameterId 'lr'",
        ),
        (
            "studySpec.parameters.0.integerValueSpec",
            {"minValue": 1, "maxValue": 2},
            "studySpec.parameters[0]",
            "exactly one of",
        ),
        (
            "studySpec.parameters.3.conditionalParameterSpecs.0.parentCategoricalValues.values",
            ["forest"],
            "studySpec.parameters[3].conditionalParameterSpecs[0].parentCategoricalValues.values[0]",
            "tree, linear",
        ),
        (
            "studySpec.parameters.3.conditionalParameterSpecs.0.parameterSpec.parameterId",
            "lr",
            "studySpec.parameters",
            "duplicate",
        ),
        (
            "studySpec.parameters.3.conditionalParameterSpecs.0.parameterSpec.integerValueSpec.maxValue",
            1,
            "studySpec.parameters[3].conditionalParameterSpecs[0].parameterSpec.integerValueSpec.maxValue",
            "minValue (2)",
        ),
        ("studySpec.algorithm", "HILL_CLIMB", "studySpec.algorithm", "GRID_SEARCH"),
        ("studySpec.algorithm", "GRID_SEARCH", "studySpec.algorithm", "'lr' is double"),
        (
            "studySpec.measurementSelectionType",
            "MEDIAN",
            "studySpec.measurementSelectionType",
            "LAST_MEASUREMENT",
        ),
    ],
)
def test_rules(path: str, value: Any, field: str, words: str) -> None:
    error = rejected(changed(path, value))
    assert error.field == field
    assert words in str(error)


def test_conditional_parent_kind_must_match() -> None:
    child = {
        "parentIntValues": {"values": [1]},
        "parameterSpec": JOB["studySpec"]["parameters"][0] | {"parameterId": "c"},
    }
    error = rejected(changed("studySpec.parameters.3.conditionalParameterSpecs", [child]))
    assert error.field == "studySpec.parameters[3].conditionalParameterSpecs[0]"
    assert "parentCategoricalValues" in str(error)
    on_double = changed("studySpec.parameters.0.conditionalParameterSpecs", [child])
    assert "double parameter cannot" in str(rejected(on_double))


def test_int_parent_values_compare_as_numbers() -> None:
    child = {
        "parentIntValues": {"values": ["2", "3"]},
        "parameterSpec": {"parameterId": "width", "discreteValueSpec": {"values": [8, 16]}},
    }
    job = validate_tuning_job(changed("studySpec.parameters.1.conditionalParameterSpecs", [child]))
    assert job.study_spec is not None and len(job.study_spec.all_parameters()) == 6
    out_of_range = copy.deepcopy(child)
    out_of_range["parentIntValues"]["values"] = [9]
    error = rejected(changed("studySpec.parameters.1.conditionalParameterSpecs", [out_of_range]))
    assert "1, 2, 3, 4" in str(error)


def test_grid_search_accepts_discrete_parameters() -> None:
    job = changed("studySpec.algorithm", "GRID_SEARCH")
    job["studySpec"]["parameters"][0] = {
        "parameterId": "lr",
        "discreteValueSpec": {"values": [0.01, 0.1]},
    }
    assert validate_tuning_job(job).study_spec is not None


def test_study_from_kwargs() -> None:
    study = StudySpec(
        metrics=[{"metric_id": "rmse", "goal": "MINIMIZE"}],
        parameters=[
            {"parameter_id": "alpha", "double_value_spec": {"min_value": 0.1, "max_value": 1}}
        ],
    )
    assert study.to_api()["metrics"] == [{"metricId": "rmse", "goal": "MINIMIZE"}]
    with pytest.raises(SpecError) as caught:
        StudySpec(metrics=[{"metric_id": "rmse", "goal": "MINIMIZE"}], parameters=[])
    assert caught.value.field == "parameters"


def test_zero_bounds_omitted_on_the_wire_read_as_zero() -> None:
    # The SDK serialises min_value=0.0 by omitting it (proto3 JSON); that is a range [0, 1].
    spec = aiplatform_v1.StudySpec(
        metrics=[{"metric_id": "accuracy", "goal": "MAXIMIZE"}],
        parameters=[
            {"parameter_id": "dropout", "double_value_spec": {"min_value": 0.0, "max_value": 1.0}}
        ],
    )
    wire = json.loads(aiplatform_v1.StudySpec.to_json(spec, including_default_value_fields=False))
    assert "minValue" not in wire["parameters"][0]["doubleValueSpec"]
    parsed = StudySpec.from_api(wire)
    assert parsed.parameters[0].double_value_spec.min_value == 0.0
