"""Vertex's pipeline placeholders resolve to the job's values, as Vertex resolves them."""

import json

import pytest

from vertexkit.local.vertex.pipelines import placeholders

JOB = {
    "name": "projects/local-project/locations/europe-west4/pipelineJobs/train-20260101-ab12cd",
    "createTime": "2026-01-01T00:00:00.000000Z",
    "serviceAccount": "trainer@local-project.iam.gserviceaccount.com",
    "runtimeConfig": {
        "defaultRuntime": {
            "persistentResourceRuntimeDetail": {
                "persistentResourceName": "projects/1/locations/x/persistentResources/pr-1"
            }
        }
    },
}
SETTINGS = {
    **placeholders.job_settings(JOB),
    "pipelineRoot": "/home/storage/bucket/root",
    "pipelineRootUri": "gs://bucket/root",
}


@pytest.mark.parametrize(
    ("element", "expected"),
    [
        ("{{$.pipeline_google_cloud_project_id}}", "local-project"),
        ("{{$.pipeline_google_cloud_location}}", "europe-west4"),
        ("{{$.pipeline_job_resource_name}}", JOB["name"]),
        ("{{$.pipeline_job_name}}", "train-20260101-ab12cd"),
        ("{{$.pipeline_root}}/data", "gs://bucket/root/data"),
        ("{{$.pipeline_persistent_resource_id}}", "pr-1"),
        ("{{$.pipeline_service_account}}", JOB["serviceAccount"]),
        ("{{$.pipeline_network}}", ""),
        ("{{$.pipeline_encryption_key_name}}", ""),
        ("{{$.pipeline_job_create_time_utc}}", JOB["createTime"]),
        ("{{$.pipeline_job_schedule_time_utc}}", JOB["createTime"]),
        ("{{$.inputs.parameters['x']}}", "{{$.inputs.parameters['x']}}"),  # kfp.local's own
    ],
    ids=lambda value: value if value.startswith("{{") else None,
)
def test_a_vertex_placeholder_resolves_to_the_jobs_value(element: str, expected: str) -> None:
    values = placeholders.job_placeholders(SETTINGS)
    assert placeholders.resolve(element, values) == expected


def test_an_unset_persistent_resource_is_empty_as_on_vertex() -> None:
    settings = {**SETTINGS, **placeholders.job_settings({"name": JOB["name"]})}
    values = placeholders.job_placeholders(settings)
    assert placeholders.resolve("{{$.pipeline_persistent_resource_id}}", values) == ""


@pytest.mark.parametrize("level", [0, 1, 2])
def test_the_escaped_executor_input_unescapes_to_the_executor_input(level: int) -> None:
    executor_input = {"inputs": {"parameterValues": {"q": 'say "hi"'}}, "outputs": {}}
    payload = '{"args": ["--executor_input", "{{$.json_escape[1]}}"]}'
    if level != 1:
        payload = payload.replace("[1]", f"[{level}]")
    resolved = placeholders.resolve_escaped_executor_input(payload, executor_input)
    if level == 1:  # inside one JSON string: the payload parses, and the arg is the input's JSON
        arg = json.loads(resolved)["args"][1]
        assert json.loads(arg) == executor_input
    else:
        text = resolved.split('"--executor_input", "', 1)[1].rsplit('"]}', 1)[0]
        for _ in range(level):
            text = json.loads(f'"{text}"')
        assert json.loads(text) == executor_input
