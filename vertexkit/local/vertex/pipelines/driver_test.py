"""The pipeline driver's pure parts: numbers, the storage mount, the workers' preload."""

from pathlib import Path

import pytest
from kfp import dsl

from vertexkit.local.vertex.pipelines.driver import storage_root
from vertexkit.local.vertex.pipelines.leaf import typed_parameters, whole_numbers_as_int

REPO = Path(__file__).resolve().parents[4]


def test_whole_numbers_inside_lists_and_dicts_become_integers() -> None:
    value = {"n_estimators": 20.0, "rate": 0.5, "sizes": [1.0, 2.5], "name": "x", "on": True}
    assert whole_numbers_as_int(value) == {
        "n_estimators": 20,
        "rate": 0.5,
        "sizes": [1, 2.5],
        "name": "x",
        "on": True,
    }
    assert isinstance(whole_numbers_as_int(value)["n_estimators"], int)


def test_root_parameters_are_typed_by_the_spec() -> None:
    spec = {
        "root": {
            "inputDefinitions": {
                "parameters": {
                    "count": {"parameterType": "NUMBER_INTEGER"},
                    "ratio": {"parameterType": "NUMBER_DOUBLE"},
                    "config": {"parameterType": "STRUCT"},
                }
            }
        }
    }
    declared = spec["root"]["inputDefinitions"]["parameters"]
    typed = typed_parameters(declared, {"count": 3.0, "ratio": 1.0, "config": {"n": 20.0}})
    assert typed == {"count": 3, "ratio": 1.0, "config": {"n": 20}}
    assert isinstance(typed["ratio"], float) and isinstance(typed["config"]["n"], int)


@pytest.mark.parametrize(
    ("root", "uri", "expected"),
    [
        pytest.param("/h/storage/b/p/training", "gs://b/p/training", "/h/storage", id="under"),
        pytest.param("/h/storage/b/p/", "gs://b/p", "/h/storage", id="trailing-slash"),
        pytest.param("/elsewhere/x", "gs://b/p", None, id="not-storage"),
        pytest.param("/h/storage/b/p", None, None, id="no-uri"),
    ],
)
def test_storage_root(root: str, uri: str | None, expected: str | None) -> None:
    assert storage_root({"pipelineRoot": root, "pipelineRootUri": uri}) == expected


def _spec(pipeline) -> dict:
    from google.protobuf import json_format

    return json_format.MessageToDict(pipeline.pipeline_spec)


@dsl.component(base_image="python:3.11")
def with_sdk() -> str:
    from google.cloud import aiplatform

    return aiplatform.__name__


@dsl.component(base_image="python:3.11")
def with_gapic() -> str:
    from google.cloud import aiplatform_v1

    return aiplatform_v1.__name__


def test_the_full_worker_preloads_the_sdk_or_the_gapic_package_only_for_runs_that_use_it():
    import yaml
    from google_cloud_pipeline_components.v1.endpoint import EndpointCreateOp

    from vertexkit.local.vertex.pipelines.warm_tasks import full_preload_list

    assert full_preload_list(_spec(with_sdk)) == "sdk"
    assert full_preload_list(_spec(EndpointCreateOp)) == "sdk"
    assert full_preload_list(_spec(with_gapic)) == "gapic"
    for name in ("training", "tuning", "retraining"):
        compiled = yaml.safe_load((REPO / "compiled" / f"{name}.yaml").read_text())
        # the built-in components use vertexkit.runtime's aiplatform_v1 names only
        assert full_preload_list(compiled) == "full", name
