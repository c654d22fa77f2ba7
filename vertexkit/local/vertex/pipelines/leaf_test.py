"""The command-line placeholders of one task. Expected values follow KFP's placeholder rules
(kfp/local/placeholder_utils.py `resolve_io_placeholders`: a non-string value is its JSON, an
unset one JSON null) and GCPC's use of `{{$.json_escape[1]}}` inside a custom job's payload
(google_cloud_pipeline_components/v1/custom_job/utils.py)."""

from __future__ import annotations

import hashlib
import json

from vertexkit.local.vertex.pipelines.leaf import (
    CommandResolver,
    Storage,
    TaskIO,
    cache_key,
    go_json,
)


def resolver(parameters: dict, artifacts: dict | None = None) -> CommandResolver:
    executor = {
        "inputs": {"parameterValues": parameters, "artifacts": artifacts or {}},
        "outputs": {"artifacts": {}, "parameters": {}, "outputFile": "/tmp/out.json"},
    }
    system = {"{{$.pipeline_google_cloud_project_id}}": "my-project"}
    return CommandResolver(executor, Storage(mount="/gcs"), system)


def test_a_payload_with_an_inner_components_placeholders_stays_json() -> None:
    """GCPC's payload takes worker_pool_specs raw; the specs hold the inner component's own
    `{{$.inputs.parameters[...]}}` and this task's executor input as `{{$.json_escape[1]}}`.
    The inner placeholders belong to the inner job's launcher and are kept as written."""
    inner = [{"container_spec": {"args": ["--executor_input", "{{$.json_escape[1]}}",
                                          "--n", "{{$.inputs.parameters['n']}}"]}}]  # fmt: skip
    task = resolver({"worker_pool_specs": inner, "n": 'say "hi"', "labels": None})
    payload = task.resolve_text(
        '{"project": "{{$.pipeline_google_cloud_project_id}}", "job_spec": {"worker_pool_specs": '
        "{{$.inputs.parameters['worker_pool_specs']}}}, "
        "\"labels\": {{$.inputs.parameters['labels']}}, \"unset\": {{$.inputs.parameters['gone']}}}"
    )
    parsed = json.loads(payload)
    args = parsed["job_spec"]["worker_pool_specs"][0]["container_spec"]["args"]
    assert json.loads(args[1]) == task.executor  # the executor input, escaped once
    assert args[3] == "{{$.inputs.parameters['n']}}"
    assert parsed["project"] == "my-project"
    assert parsed["labels"] is None and parsed["unset"] is None


def test_an_artifacts_metadata_value_is_resolved_by_key() -> None:
    """GCPC's ModelUploadOp passes
    `{{$.inputs.artifacts['parent_model'].metadata['resourceName']}}`."""
    model = {"uri": "gs://b/m", "metadata": {"resourceName": "projects/1/locations/l/models/7"}}
    task = resolver({}, {"parent_model": {"artifacts": [model]}})
    text = "{{$.inputs.artifacts['parent_model'].metadata['resourceName']}}"
    assert task.resolve_text(text) == "projects/1/locations/l/models/7"
    assert task.resolve_text("{{$.inputs.artifacts['parent_model'].path}}") == "/gcs/b/m"
    whole = task.resolve_text("{{$.inputs.artifacts['parent_model'].metadata}}")
    assert json.loads(whole) == model["metadata"]


# The KFP backend's own fingerprints (backend/src/v2/cacheutils/cache_test.go,
# TestGenerateFingerPrint), from the CacheKey messages written there.
MODEL_SCHEMA = (
    "title: kfp.Model\ntype: object\nproperties:\n  framework:\n    type: string\n"
    "  framework_version:\n    type: string\n"
)


def test_the_cache_key_is_the_kfp_backends_fingerprint() -> None:
    inputs = TaskIO(
        {"message": "Some string value", "num_steps": 5},
        {"dataset_one": [{"name": "1"}], "dataset_two": [{"name": "2"}]},
    )
    component = {
        "outputDefinitions": {
            "artifacts": {
                "model": {
                    "artifactType": {"instanceSchema": MODEL_SCHEMA},
                    "metadata": {"name": "model"},
                },
                "metrics": {
                    "artifactType": {"schemaTitle": "kfp.Metrics"},
                    "metadata": {"name": "metrics"},
                },
            },
            "parameters": {
                "output_parameter_one": {"parameterType": "STRING"},
                "output_parameter_two": {"parameterType": "INT"},
            },
        }
    }
    container = {"image": "python:3.11", "command": ["sh", "ec"], "args": ["test"]}
    assert cache_key(inputs, component, container, {}) == (
        "b498530c9016917298999ec0b01f364a180f8a3862bea0fa672a383ca3f22e4e"
    )


def test_a_key_with_no_parameters_leaves_the_empty_maps_out() -> None:
    inputs = TaskIO({}, {"dataset": [{"name": "10"}]})
    component = {
        "outputDefinitions": {"parameters": {"output_parameter": {"parameterType": "DOUBLE"}}}
    }
    container = {"image": "python:3.11", "command": ["sh", "ec", "run"]}
    assert cache_key(inputs, component, container, {}) == (
        "3d9a2a778fa3174c6cfc6e639c507c265b5f21ef6e5b1dd70b236462cc6da464"
    )


def test_a_custom_cache_key_is_the_components_name_and_the_key() -> None:
    """`getFingerPrint` (backend/src/v2/driver/cache.go): sha256(component name, NUL, key)."""
    task = {"componentRef": {"name": "comp-train"}, "cachingOptions": {"cacheKey": "v1"}}
    expected = hashlib.sha256(b"comp-train\0v1").hexdigest()
    assert cache_key(TaskIO({"a": 1}), {}, {"image": "x"}, task) == expected


def test_numbers_and_text_as_go_writes_them() -> None:
    value = {"b": [1, 2.0, 0.5, 1e-7, 1.5e-5, 1e21, -3.25e-9, None, True], "a": "<x>&é"}
    assert go_json(value) == (
        '{"a":"\\u003cx\\u003e\\u0026é","b":[1,2,0.5,1e-7,0.000015,1e+21,-3.25e-9,null,true]}'
    )
