"""A local run builds its PipelineJob without the aiplatform SDK: the request must stay the one
`aiplatform.PipelineJob` builds for `--vertex` (both real: the SDK is installed here).

No `from __future__ import annotations`: kfp reads the component's annotations as types."""

from pathlib import Path
from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform_v1
from google.protobuf import json_format
from kfp import dsl

from vertexkit import pipeline_jobs, runner
from vertexkit.compiler import compile_to_text


@dsl.component
def _echo(text: str) -> str:
    return text


@dsl.pipeline(name="Typed Params_pipeline!")
def typed_pipeline(
    project: str,
    gcs_root: str,
    count: int = 3,
    rate: float = 0.5,
    flag: bool = False,
    tags: list = [],  # noqa: B006 - a pipeline default, compiled into the spec
    options: dict = {},  # noqa: B006
    note: str = "",
) -> None:
    first = _echo(text=note)
    _echo(text=first.output).set_caching_options(False)


TYPED = "vertexkit.runner_test:typed_pipeline"
ROOT = "gs://bucket/root"
TARGET = ("my-project", "us-central1", ROOT)  # project, region, pipeline root


def _sdk_request(name: str, params: dict, caching: bool | None, labels: Any, tmp: Path) -> dict:
    job = runner.build_vertex_job(
        name,
        params,
        compile_to_text(name),
        *TARGET,
        enable_caching=caching,
        work_dir=tmp,
        credentials=AnonymousCredentials(),
        labels=labels,
    )
    return {"id": job.job_id, "job": pipeline_jobs.as_dict(pipeline_jobs.request_from_sdk_job(job))}


def _our_request(name: str, params: dict, caching: bool | None, labels: Any) -> dict:
    job_id, body = runner.pipeline_job_request(
        name,
        params,
        compile_to_text(name),
        *TARGET,
        enable_caching=caching,
        labels=labels,
    )
    return {"id": job_id, "job": pipeline_jobs.as_dict(_as_read(body))}


def _as_read(body: dict) -> aiplatform_v1.PipelineJob:
    """The JSON `create_job` sends, as Vertex reads it: into the API's own message type."""
    message = aiplatform_v1.PipelineJob()
    json_format.ParseDict(body, aiplatform_v1.PipelineJob.pb(message))
    return message


@pytest.mark.parametrize(
    ("name", "params", "caching", "labels"),
    [
        ("training", {}, None, None),
        ("training", {"n_estimators": 7, "machine_type": "n1-standard-8"}, True, None),
        ("training", {}, False, {"vertexkit-max-parallel": "2"}),
        (TYPED, {"count": 5, "rate": 0.25, "flag": True, "note": "x"}, None, {"team": "ml"}),
        (TYPED, {"tags": ["a", 1], "options": {"k": [1, 2.5]}}, False, None),
        (TYPED, {"note": None}, True, None),
    ],
    ids=["defaults", "params-caching-on", "caching-off-labels", "scalars", "structs", "none"],
)
def test_the_local_request_is_the_sdks(
    tmp_path: Path, name: str, params: dict, caching: bool | None, labels: Any
) -> None:
    for _ in range(3):  # the IDs hold the second each was built in: a busy machine crosses one
        ours = _our_request(name, params, caching, labels)
        sdk = _sdk_request(name, params, caching, labels, tmp_path)
        if ours["id"] == sdk["id"]:
            break
    assert ours == sdk


@pytest.mark.parametrize(
    ("name", "labels", "root", "message"),
    [
        # the run's display name is the pipeline's own name (`pipelineInfo.name`)
        ("x" * 130, None, ROOT, "Display name needs to be less than 128"),
        ("training", {"team": 5}, ROOT, "Expect labels to be a mapping of string key value"),
        ("training", None, "/tmp/root", "--pipeline-root must be a gs:// URI"),
    ],
    ids=["display-name-too-long", "label-not-a-string", "root-not-gs"],
)
def test_the_local_request_refuses_what_the_sdk_refuses(
    tmp_path: Path, name: str, labels: Any, root: str, message: str
) -> None:
    pipeline_yaml = compile_to_text("training")
    if name == "x" * 130:
        own_name = "\n  name: vertexkit-training\n"
        pipeline_yaml = pipeline_yaml.replace(own_name, f"\n  name: {name}\n")
        assert name in pipeline_yaml
    with pytest.raises(ValueError) as ours:
        runner.pipeline_job_request(
            name, {}, pipeline_yaml, "p", "us-central1", root, labels=labels
        )
    with pytest.raises(ValueError) as sdk:
        runner.build_vertex_job(
            name,
            {},
            pipeline_yaml,
            "p",
            "us-central1",
            root,
            work_dir=tmp_path,
            credentials=AnonymousCredentials(),
            labels=labels,
        )
    assert str(ours.value) == str(sdk.value)
    assert message in str(ours.value)
