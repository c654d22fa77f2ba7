"""The read verbs (`models list`, `endpoints list`, `runs list`, `predict`) against the local
cloud, checked against what the aiplatform SDK reads from the same state.

The verbs speak REST themselves (vertexkit/vertex_rest.py); the SDK, driven here the way
these verbs used to drive it, is the reference: every row, and the prediction's JSON, must be
the same. Each listing also runs with a page size of 2, so it must follow `nextPageToken`.
"""

# No `from __future__ import annotations`: KFP reads the component's real type annotations.

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import joblib
import pytest
import yaml
from google.api_core import exceptions
from google.cloud import aiplatform
from kfp import compiler, dsl
from sklearn.linear_model import LogisticRegression
from typer.testing import CliRunner

from vertexkit import vertex_rest
from vertexkit.cli import app
from vertexkit.cli.errors import USER_ERROR_EXIT, client_error_message
from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.storage.routes import StorageService

SKLEARN_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest"
BUCKET = "read-verbs-test"
EMPTY_ENDPOINT = "read-verbs-empty-endpoint"
WIDE = {"COLUMNS": "1000"}  # one line per table row: no cell is folded
PAGE_SIZES = [pytest.param(None, id="default-pages"), pytest.param(2, id="pages-of-2")]
TERMINAL = {"PIPELINE_STATE_SUCCEEDED", "PIPELINE_STATE_FAILED", "PIPELINE_STATE_CANCELLED"}


@dsl.component(install_kfp_package=False)
def noop(a: int) -> int:
    return a


@dsl.pipeline(name="read-verbs-noop")
def noop_pipeline(a: int = 1) -> int:
    return noop(a=a).output


def _artifact(cloud: LocalCloud) -> str:
    """A classifier whose labels are integers: its predictions come back as JSON numbers."""
    estimator = LogisticRegression().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    storage = next(s for s in cloud.services if isinstance(s, StorageService))
    with tempfile.TemporaryDirectory() as scratch:
        joblib.dump(estimator, Path(scratch) / "model.joblib")
        storage.write_object(BUCKET, "int-labels/model.joblib", Path(scratch) / "model.joblib")
    return f"gs://{BUCKET}/int-labels"


@pytest.fixture(scope="module")
def served(local_cloud: LocalCloud) -> aiplatform.Endpoint:
    """Three models (one of three versions, with aliases), an endpoint serving one of them,
    an endpoint with nothing deployed."""
    local_cloud.context().init_aiplatform()
    artifact = _artifact(local_cloud)
    upload = {"artifact_uri": artifact, "serving_container_image_uri": SKLEARN_IMAGE}
    first = aiplatform.Model.upload(display_name="read-verbs-a", **upload)
    for aliases in (["canary"], []):
        aiplatform.Model.upload(
            parent_model=first.resource_name,
            version_aliases=aliases,
            is_default_version=False,
            **upload,
        )
    for name in ("read-verbs-b", "read-verbs-c"):
        aiplatform.Model.upload(display_name=name, **upload)
    aiplatform.Endpoint.create(display_name=EMPTY_ENDPOINT)
    return first.deploy(machine_type="n1-standard-2")


@pytest.fixture(scope="module")
def runs(local_cloud: LocalCloud, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Three finished pipeline jobs (created at once, then waited for)."""
    template = tmp_path_factory.mktemp("template") / "noop.yaml"
    compiler.Compiler().compile(noop_pipeline, str(template))
    spec = yaml.safe_load(template.read_text())
    context = local_cloud.context()
    client = context.pipeline_client()
    job = {"pipeline_spec": spec, "runtime_config": {"gcs_output_directory": f"gs://{BUCKET}/p"}}
    names = [
        client.create_pipeline_job(parent=context.parent, pipeline_job=job).name for _ in range(3)
    ]
    deadline = time.monotonic() + 180
    while any(client.get_pipeline_job(name=n).state.name not in TERMINAL for n in names):
        assert time.monotonic() < deadline, "the pipeline jobs did not end in 180 s"
        time.sleep(0.2)
    return names


@pytest.fixture
def page_size(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int | None:
    monkeypatch.setattr(vertex_rest, "PAGE_SIZE", request.param)
    return request.param


def table_rows(output: str) -> list[tuple[str, ...]]:
    """The body rows of a rich table printed one line per row (the header's rules are ┃)."""
    lines = [line for line in output.splitlines() if "│" in line]
    return [tuple(cell.strip() for cell in line.split("│")[1:-1]) for line in lines]


def ours(rows: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The rows of this module's resources: the session cloud is shared with other tests,
    whose pipeline jobs may change state between two reads."""
    return [row for row in rows if row[0].startswith("read-verbs")]


def invoke(args: list[str]) -> str:
    result = CliRunner().invoke(app, args, env=WIDE)
    assert result.exit_code == 0, result.output
    return result.output


# -- what the SDK reads, as the verbs read it before they spoke REST ---------------------------
def sdk_model_rows() -> list[tuple[str, ...]]:
    return [
        (
            model.display_name,
            model.name,
            str(version.version_id),
            ", ".join(version.version_aliases or []),
            str(version.version_create_time)[:19],
        )
        for model in aiplatform.Model.list()
        for version in model.versioning_registry.list_versions()
    ]


def sdk_endpoint_rows() -> list[tuple[str, ...]]:
    rows = []
    for endpoint in aiplatform.Endpoint.list():
        split = endpoint.traffic_split or {}
        for model in endpoint.list_models() or [None]:
            rows.append(
                (
                    endpoint.display_name,
                    endpoint.name,
                    model.id if model else "-",
                    f"{model.model.rsplit('/', 1)[-1]}@{model.model_version_id}" if model else "-",
                    f"{split.get(model.id, 0)}%" if model else "-",
                )
            )
    return rows


def sdk_run_rows(context: CloudContext, query: dict[str, str]) -> list[tuple[str, ...]]:
    jobs = context.pipeline_client().list_pipeline_jobs(request={"parent": context.parent, **query})
    return [
        (
            job.state.name.removeprefix("PIPELINE_STATE_"),
            job.create_time.isoformat() if job.create_time else "-",
            job.end_time.isoformat() if job.end_time else "-",
            job.name.rsplit("/", 1)[-1],
        )
        for job in jobs
    ]


# -- the verbs -----------------------------------------------------------------------------------
@pytest.mark.parametrize("page_size", PAGE_SIZES, indirect=True)
def test_models_list_rows_are_the_sdks(served: aiplatform.Endpoint, page_size: int | None) -> None:
    rows = ours(table_rows(invoke(["models", "list"])))
    assert rows == ours(sdk_model_rows())
    assert len({row[1] for row in rows}) == 3
    versions = [row[2:4] for row in rows if row[0] == "read-verbs-a"]
    assert versions == [("1", "default"), ("2", "canary"), ("3", "")]


@pytest.mark.parametrize("page_size", PAGE_SIZES, indirect=True)
def test_endpoints_list_rows_are_the_sdks(
    served: aiplatform.Endpoint, page_size: int | None
) -> None:
    rows = ours(table_rows(invoke(["endpoints", "list"])))
    assert rows == ours(sdk_endpoint_rows())
    assert len(rows) == 2
    assert (EMPTY_ENDPOINT, "-", "-", "-") in [(row[0], *row[2:]) for row in rows]
    serving = next(row for row in rows if row[1] == served.name)
    assert serving[3].endswith("@1") and serving[4] == "100%"


@pytest.mark.parametrize(
    ("page_size", "schedule"),
    [
        pytest.param(None, None, id="all"),
        pytest.param(2, None, id="all-pages-of-2"),
        pytest.param(None, "no-such-schedule", id="one-schedule"),
    ],
    indirect=["page_size"],
)
def test_runs_list_rows_are_the_sdks(
    local_cloud: LocalCloud, runs: list[str], page_size: int | None, schedule: str | None
) -> None:
    context = local_cloud.context()
    args = ["--schedule", schedule] if schedule else []
    query = {"filter": f'schedule_name="{context.parent}/schedules/{schedule}"'} if schedule else {}
    listed = table_rows(invoke(["runs", "list", *args]))
    expected = sdk_run_rows(context, query)
    if schedule:
        assert listed == expected
        return
    ids = {name.rsplit("/", 1)[-1] for name in runs}  # finished: their rows no longer change
    assert [row for row in listed if row[3] in ids] == [row for row in expected if row[3] in ids]
    assert len([row for row in listed if row[3] in ids]) == 3


def test_predict_prints_what_the_sdk_predicts(served: aiplatform.Endpoint) -> None:
    printed = json.loads(invoke(["predict", served.name, "--instances", "[[0], [3]]"]))
    expected = served.predict(instances=[[0], [3]])
    assert printed == {
        "predictions": expected.predictions,
        "deployedModelId": expected.deployed_model_id,
        "model": expected.model_resource_name,
        "modelVersionId": expected.model_version_id,
    }
    assert printed["predictions"] == [0.0, 1.0]  # doubles, as protobuf gives them to the SDK


def _registry_state() -> tuple[list[str], list[str]]:
    models = sorted(m.resource_name for m in aiplatform.Model.list())
    return models, sorted(e.resource_name for e in aiplatform.Endpoint.list())


@pytest.mark.parametrize(
    ("endpoint", "instances", "needle"),
    [
        pytest.param("no-such-endpoint", "[[1]]", "ENDPOINT: no endpoint named", id="unknown"),
        pytest.param(
            "projects/p/locations/us-central1/endpoints/404",
            "[[1]]",
            "ENDPOINT: no endpoint named 'projects/p/locations/us-central1/endpoints/404'",
            id="unknown-resource-name",
        ),
        pytest.param(
            EMPTY_ENDPOINT,
            "[[1]]",
            f"ENDPOINT: '{EMPTY_ENDPOINT}': the service refused the request (400 Bad Request): ",
            id="nothing-deployed",
        ),
    ],
)
def test_predict_refusal_is_one_line_naming_the_endpoint(
    served: aiplatform.Endpoint, endpoint: str, instances: str, needle: str
) -> None:
    before = _registry_state()
    result = CliRunner().invoke(app, ["predict", endpoint, "--instances", instances])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == USER_ERROR_EXIT, result.output
    assert len(lines) == 1 and lines[0].startswith(f"error: {needle}"), result.output
    assert _registry_state() == before


def test_a_refusal_words_the_services_reason_as_the_sdk_did(served: aiplatform.Endpoint) -> None:
    [empty] = aiplatform.Endpoint.list(filter=f'display_name="{EMPTY_ENDPOINT}"')
    with pytest.raises(exceptions.ClientError) as refused:
        empty.predict(instances=[[1]])
    result = CliRunner().invoke(app, ["predict", EMPTY_ENDPOINT, "--instances", "[[1]]"])
    assert client_error_message(refused.value) in result.output.replace("\n", " ")


# -- against a `vertexkit local up` process, found through its home alone ---------------------
@pytest.fixture(scope="module")
def local_up(tmp_path_factory: pytest.TempPathFactory) -> Any:
    home = tmp_path_factory.mktemp("local-up-home")
    command = [sys.executable, "-m", "vertexkit.cli", "local", "up", "--home", str(home)]
    process = subprocess.Popen(
        [*command, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("# console"):
            break
    try:
        yield home
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.parametrize(
    ("args", "exit_code", "needle"),
    [
        pytest.param(["models", "list"], 0, "┃ model", id="models-list"),
        pytest.param(["endpoints", "list"], 0, "┃ endpoint", id="endpoints-list"),
        pytest.param(["runs", "list"], 0, "┃ state", id="runs-list"),
        pytest.param(
            ["predict", "no-such-endpoint", "--instances", "[[1.0]]"],
            USER_ERROR_EXIT,
            "error: ENDPOINT: no endpoint named 'no-such-endpoint'",
            id="predict-unknown-endpoint",
        ),
    ],
)
def test_read_verbs_on_a_running_local_up_never_import_the_sdk(
    local_up: Path, args: list[str], exit_code: int, needle: str
) -> None:
    env = {k: v for k, v in os.environ.items() if "EMULATOR" not in k}
    env["VERTEXKIT_HOME"] = str(local_up)
    command = [sys.executable, "-X", "importtime", "-m", "vertexkit.cli", *args]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()}
    assert result.returncode == exit_code, result.stdout + result.stderr
    assert needle in result.stdout + result.stderr
    assert not {"google.cloud.aiplatform", "google.cloud.aiplatform_v1", "kfp"} & imported
