"""The command-line placeholders of one task. Expected values follow KFP's placeholder rules
(kfp/local/placeholder_utils.py `resolve_io_placeholders`: a non-string value is its JSON, an
unset one JSON null) and GCPC's use of `{{$.json_escape[1]}}` inside a custom job's payload
(google_cloud_pipeline_components/v1/custom_job/utils.py)."""

from __future__ import annotations

import json

from vertexkit.local.vertex.pipelines.leaf import CommandResolver, Storage


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
