"""Bad input to every verb: one `error:` line naming the parameter, exit 2, nothing created.

Each row runs the real CLI (in-process through typer's CliRunner; `local up` as a subprocess,
because a row that wrongly succeeds would serve forever) against the session's local cloud, and
checks that the state directory was not made and that the cloud holds the same resources after.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.api_core import exceptions
from google.auth.exceptions import DefaultCredentialsError
from typer.testing import CliRunner

from vertexkit.cli import app
from vertexkit.cli.errors import BUG_EXIT, USER_ERROR_EXIT, user_error_message
from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud

EMPTY_ENDPOINT = "errors-test-empty-endpoint"  # an endpoint with nothing deployed: predict is a 400
LONG_INSTANCES = json.dumps([[1.5] * 8] * 40)  # inline JSON far past the 255 bytes of a file name
CRON = "0 3 * * *"
TRAINING = ["run", "training", "--home", "{home}"]
SCHEDULE = ["schedule", "create", "training", "--cron", CRON, "--home", "{home}"]
PREDICT = ["predict", EMPTY_ENDPOINT, "--instances"]


def row(id: str, args: list[str], needle: str, env: dict[str, str] | None = None) -> Any:
    return pytest.param(args, needle, env or {}, id=id)


ROWS = [
    # vertexkit run
    row("run-unknown-pipeline", ["run", "nope", "--home", "{home}"], "unknown pipeline 'nope'"),
    row("run-markup-in-name", ["run", "foo[/x]:bar"], "cannot import 'foo[/x]'"),
    row("run-not-a-pipeline", ["run", "os:getcwd"], "'os:getcwd' is not a pipeline"),
    row("run-missing-attribute", ["run", "os:nope"], "'os' has no attribute 'nope'"),
    row(
        "run-int-param-abc",
        [*TRAINING, "-p", "n_estimators=abc"],
        "n_estimators='abc': expected an integer",
    ),
    row(
        "run-double-param-nan",
        [*TRAINING, "-p", "min_improvement=nan"],
        "min_improvement='nan': expected a number",
    ),
    row(
        "run-bool-param",
        ["run", "retraining", "-p", "include_history=maybe"],
        "include_history='maybe': expected true or false",
    ),
    row(
        "run-list-param-object",
        ["run", "tuning", "-p", "parameters={}"],
        "parameters='{}': expected a JSON list",
    ),
    row("run-unknown-param", [*TRAINING, "-p", "colour=red"], "--param colour: unknown parameter"),
    row(
        "run-param-without-value",
        [*TRAINING, "-p", "n_estimators"],
        "'n_estimators': expected key=value",
    ),
    row(
        "run-long-display-name",
        [*TRAINING, "-p", "model_display_name=" + "m" * 2000],
        "--param model_display_name: at most 128",
    ),
    row(
        "run-empty-display-name",
        [*TRAINING, "-p", "endpoint_display_name="],
        "--param endpoint_display_name: required",
    ),
    row(
        "run-bad-machine-type",
        [*TRAINING, "-p", "machine_type=n1-standard-3"],
        "--param machine_type: unknown machine type 'n1-standard-3'",
    ),
    row("run-vertex-without-project", ["run", "training", "--vertex"], "--vertex needs --project"),
    row(
        "run-bad-project",
        ["run", "training", "--vertex", "--project", "Bad_P"],
        "'--project': invalid project 'Bad_P'",
    ),
    row(
        "run-bad-region",
        ["run", "training", "--region", "mars-central1"],
        "'--region': unknown Vertex AI region 'mars-central1'",
    ),
    row(
        "run-home-is-a-file", ["run", "training", "--home", "{file}"], "'--home': {file} is a file"
    ),
    # vertexkit compile
    row(
        "compile-not-a-pipeline",
        ["compile", "os:getcwd", "--output-dir", "{home}"],
        "'os:getcwd' is not a pipeline",
    ),
    row(
        "compile-second-name-bad",
        ["compile", "training", "nope", "--output-dir", "{home}"],
        "unknown pipeline 'nope'",
    ),
    row(
        "compile-markup-in-name",
        ["compile", "a[/b]:c", "--output-dir", "{home}"],
        "cannot import 'a[/b]'",
    ),
    row(
        "compile-output-dir-is-a-file",
        ["compile", "training", "--output-dir", "{file}"],
        "'--output-dir': {file} is a file",
    ),
    # vertexkit schedule / runs
    row(
        "schedule-bad-machine-type",
        [*SCHEDULE, "-p", "machine_type=n1-standard-3"],
        "--param machine_type: unknown machine type",
    ),
    row(
        "schedule-int-param-abc",
        [*SCHEDULE, "-p", "n_estimators=abc"],
        "n_estimators='abc': expected an integer",
    ),
    row(
        "schedule-long-display-name",
        [*SCHEDULE, "-p", "endpoint_display_name=" + "e" * 2000],
        "--param endpoint_display_name: at most 128",
    ),
    row(
        "schedule-bad-cron",
        ["schedule", "create", "training", "--cron", "61 * * * *", "--home", "{home}"],
        "--cron:",
    ),
    row(
        "schedule-bad-start-time",
        [*SCHEDULE, "--start-time", "yesterday"],
        "--start-time 'yesterday': expected RFC 3339",
    ),
    row(
        "schedule-end-before-start",
        [*SCHEDULE, "--start-time", "2030-02-01T00:00:00Z", "--end-time", "2030-01-01T00:00:00Z"],
        "must be after --start-time",
    ),
    row(
        "schedule-zero-runs",
        [*SCHEDULE, "--max-run-count", "0"],
        "--max-run-count must be at least 1",
    ),
    row(
        "schedule-vertex-without-root",
        [*SCHEDULE, "--vertex", "--project", "my-project"],
        "--vertex needs --project and --pipeline-root",
    ),
    row(
        "schedule-home-is-a-file",
        ["schedule", "create", "training", "--cron", CRON, "--home", "{file}"],
        "'--home': {file} is a file",
    ),
    row("schedule-missing-cron", ["schedule", "create", "training"], "Missing option '--cron'"),
    row("schedule-pause-unknown", ["schedule", "pause", "424242"], "SCHEDULE: '424242'"),
    row(
        "schedule-delete-markup",
        ["schedule", "delete", "[/red]"],
        "'schedule': '[/red]' is neither an ID nor projects/P/locations/L/schedules/ID",
    ),
    row(
        "schedule-resume-markup-404",
        ["schedule", "resume", "[red]x"],
        "SCHEDULE: '[red]x': the service refused the request (404 Not Found)",
    ),
    row(
        "runs-show-bad-project",
        ["runs", "show", "projects/P/locations/us-central1/pipelineJobs/1"],
        "'run': invalid project 'P'",
    ),
    row("runs-show-unknown", ["runs", "show", "424242"], "RUN: '424242'"),
    # vertexkit predict
    row(
        "predict-missing-file",
        [*PREDICT, "{home}/instances.json"],
        "--instances: {home}/instances.json is neither a JSON file",
    ),
    row(
        "predict-bad-inline-json", [*PREDICT, "[1, 2"], "--instances: inline JSON is not valid JSON"
    ),
    row(
        "predict-bad-json-file",
        [*PREDICT, "{file}"],
        "--instances: {file} (a JSON file) is not valid JSON",
    ),
    row("predict-not-a-list", [*PREDICT, '{"a": 1}'], "--instances: must be a non-empty JSON list"),
    row("predict-empty-list", [*PREDICT, "[]"], "--instances: must be a non-empty JSON list"),
    row("predict-missing-instances", ["predict", EMPTY_ENDPOINT], "Missing option '--instances'"),
    row(
        "predict-long-json-unknown-endpoint",
        ["predict", "nope", "--instances", LONG_INSTANCES],
        "ENDPOINT: no endpoint named 'nope'",
    ),
    row(
        "predict-server-400",
        [*PREDICT, LONG_INSTANCES],
        f"ENDPOINT: '{EMPTY_ENDPOINT}': the service refused the request (400 Bad Request)",
    ),
    row(
        "predict-markup-endpoint",
        ["predict", "[/x]", "--instances", "[[1]]"],
        "ENDPOINT: no endpoint named '[/x]'",
    ),
    # listings, logs, decisions, the command itself
    row(
        "models-bad-region",
        ["models", "list", "--region", "mars-central1"],
        "'--region': unknown Vertex AI region",
    ),
    row(
        "endpoints-bad-project",
        ["endpoints", "list", "--project", "Bad_P"],
        "'--project': invalid project 'Bad_P'",
    ),
    row(
        "models-home-is-a-file",
        ["models", "list", "--home", "{file}"],
        "'--home': {file} is a file",
    ),
    row(
        "models-env-home-is-a-file",
        ["models", "list"],
        "VERTEXKIT_HOME: {file} is a file",
        {"VERTEXKIT_HOME": "{file}"},
    ),
    row("decisions-zero-limit", ["decisions", "list", "--limit", "0"], "'--limit'"),
    row(
        "decisions-bad-table",
        ["decisions", "list", "--table", "x"],
        "--table: 'x' is not a table name",
    ),
    row(
        "logs-home-is-a-file", ["logs", "424242", "--home", "{file}"], "'--home': {file} is a file"
    ),
    row("logs-no-such-job", ["logs", "424242"], "JOB: no logs for job '424242'"),
    row("unknown-command", ["bogus"], "No such command 'bogus'"),
]

LOCAL_UP_ROWS = [
    row("local-up-port-too-big", ["--port", "99999"], "'--port'"),
    row("local-up-port-negative", ["--port", "-1"], "'--port'"),
    row("local-up-port-not-a-number", ["--port", "abc"], "'--port'"),
    row(
        "local-up-port-in-use",
        ["--port", "{busy_port}"],
        "--port: 127.0.0.1:{busy_port} is not free",
    ),
    row(
        "local-up-home-is-a-file", ["--port", "0", "--home", "{file}"], "'--home': {file} is a file"
    ),
    row(
        "local-up-home-under-a-file",
        ["--port", "0", "--home", "{file}/home"],
        "'--home': {file} (in {file}/home) is a file",
    ),
    row(
        "local-up-bad-project",
        ["--port", "0", "--project", "Bad_P"],
        "'--project': invalid project 'Bad_P'",
    ),
]


@pytest.fixture(scope="module")
def empty_endpoint(local_cloud: LocalCloud) -> str:
    client = local_cloud.context().endpoint_client()
    parent = local_cloud.context().parent
    client.create_endpoint(parent=parent, endpoint={"display_name": EMPTY_ENDPOINT}).result()
    return EMPTY_ENDPOINT


@pytest.fixture
def busy_port() -> Iterator[int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


@pytest.fixture
def places(tmp_path: Path, busy_port: int) -> dict[str, str]:
    """What the `{...}` in a row stand for: a home that must not appear, a file that is no dir."""
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory, not JSON")
    return {"home": str(tmp_path / "home"), "file": str(a_file), "busy_port": str(busy_port)}


def _fill(text: str, places: dict[str, str]) -> str:
    for name, value in places.items():
        text = text.replace(f"{{{name}}}", value)
    return text


def _cloud_state(context: CloudContext) -> dict[str, list[str]]:
    """Every resource a refused command could have made, by name."""
    from vertexkit.scheduling import schedule_client

    parent = context.parent
    listings = {
        "schedules": schedule_client(context).list_schedules(parent=parent),
        "pipeline jobs": context.pipeline_client().list_pipeline_jobs(parent=parent),
        "custom jobs": context.job_client().list_custom_jobs(parent=parent),
        "models": context.model_client().list_models(parent=parent),
        "endpoints": context.endpoint_client().list_endpoints(parent=parent),
        "buckets": context.storage_client().list_buckets(),
        "datasets": context.bigquery_client().list_datasets(),
    }
    return {kind: sorted(_name(item) for item in items) for kind, items in listings.items()}


def _name(item: Any) -> str:
    return getattr(item, "name", None) or item.dataset_id


def _assert_one_error_line(output: str, needle: str, exit_code: int) -> None:
    lines = [line for line in output.splitlines() if line.strip()]
    assert exit_code == USER_ERROR_EXIT, output
    assert "Traceback" not in output
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    assert needle in lines[0], output


@pytest.mark.parametrize(("args", "needle", "env"), ROWS)
def test_bad_input_is_one_line_naming_the_parameter_and_creates_nothing(
    local_cloud: LocalCloud,
    empty_endpoint: str,
    places: dict[str, str],
    args: list[str],
    needle: str,
    env: dict[str, str],
) -> None:
    context = local_cloud.context()
    before = _cloud_state(context)
    filled_env = {key: _fill(value, places) for key, value in env.items()}
    result = CliRunner().invoke(app, [_fill(arg, places) for arg in args], env=filled_env)
    _assert_one_error_line(result.output, _fill(needle, places), result.exit_code)
    assert not Path(places["home"]).exists(), "a refused command made its state directory"
    assert _cloud_state(context) == before


@pytest.mark.parametrize(("args", "needle", "env"), LOCAL_UP_ROWS)
def test_local_up_refuses_before_it_makes_the_home_or_binds(
    places: dict[str, str], args: list[str], needle: str, env: dict[str, str]
) -> None:
    filled = [_fill(arg, places) for arg in args]
    home = ["--home", places["home"]] if "--home" not in filled else []
    command = [sys.executable, "-m", "vertexkit.cli", "local", "up", *home, *filled]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    output = result.stdout + result.stderr
    _assert_one_error_line(output, _fill(needle, places), result.returncode)
    assert not Path(places["home"]).exists()


def test_an_unexpected_error_is_one_line_pointing_at_the_saved_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_pipeline_module.py").write_text("raise RuntimeError('boom [/x]')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(app, ["compile", "broken_pipeline_module:p"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == BUG_EXIT and "Traceback" not in result.output
    assert len(lines) == 1 and lines[0].startswith("error: unexpected RuntimeError: boom [/x]")
    saved = Path(lines[0].rsplit("the full traceback is in ", 1)[1].rstrip(")"))
    try:
        assert "Traceback" in saved.read_text() and "boom [/x]" in saved.read_text()
    finally:
        saved.unlink()


@pytest.mark.parametrize(
    ("error", "line"),
    [
        pytest.param(
            OSError(errno.EADDRINUSE, "Address already in use"),
            "the address is already in use (another process listens on this port)",
            id="bind-address-in-use",
        ),
        pytest.param(
            FileNotFoundError(errno.ENOENT, "No such file or directory", "x.json"),
            "x.json: No such file or directory",
            id="missing-file",
        ),
        pytest.param(
            exceptions.BadRequest("POST http://127.0.0.1:1/v1/x:predict: wrong shape [/x]"),
            "the service refused the request (400 Bad Request): wrong shape [/x]",
            id="client-error-400",
        ),
        pytest.param(
            ValueError("n_estimators: must be > 0"), "n_estimators: must be > 0", id="value"
        ),
        pytest.param(
            DefaultCredentialsError("Your default credentials were not found."),
            "--project: no Google credentials for Vertex AI: Your default credentials were not "
            "found.",
            id="no-credentials",
        ),
        pytest.param(exceptions.InternalServerError("boom"), None, id="server-error-is-a-bug"),
        pytest.param(KeyError("x"), None, id="key-error-is-a-bug"),
    ],
)
def test_which_errors_are_the_users(error: Exception, line: str | None) -> None:
    assert user_error_message(error) == line


def test_a_vertex_verb_without_credentials_is_a_user_error(tmp_path) -> None:
    """This machine has no Google login: a `--project` verb ends with one line, exit 2."""
    env = {k: v for k, v in os.environ.items() if "EMULATOR" not in k and "GOOGLE" not in k}
    env.update(HOME=str(tmp_path), CLOUDSDK_CONFIG=str(tmp_path / "gcloud"), NO_GCE_CHECK="True")
    listed = subprocess.run(
        [sys.executable, "-m", "vertexkit.cli", "models", "list", "--project", "some-project"],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 2, listed.stdout + listed.stderr
    assert listed.stderr.startswith("error: --project: no Google credentials for Vertex AI")
    assert "Traceback" not in listed.stderr
