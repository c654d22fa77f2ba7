"""`vertexkit local up` as a user runs it: prints exports, serves, stops on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

from vertexkit.context import CloudContext
from vertexkit.local.projects import project_number
from vertexkit.local_up import LOCAL_UP_FILE, running_local_up

EXPECTED = {
    "GOOGLE_CLOUD_PROJECT",
    "STORAGE_EMULATOR_HOST",
    "BIGQUERY_EMULATOR_HOST",
    "BIGQUERY_STORAGE_EMULATOR_HOST",
    "VERTEX_AI_EMULATOR_HOST",
}


def test_local_up_prints_exports_first_then_serves_until_sigterm(tmp_path: Path) -> None:
    home = tmp_path / "home"
    command = [sys.executable, "-m", "vertexkit.cli", "local", "up", "--home", str(home)]
    process = subprocess.Popen(
        [*command, "--port", "0"], stdout=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    try:
        exports = {}
        while not exports.keys() >= EXPECTED:
            line = process.stdout.readline()
            assert line.startswith("export "), f"expected export lines first, got {line!r}"
            name, _, value = line.removeprefix("export ").strip().partition("=")
            exports[name] = value
        assert exports["STORAGE_EMULATOR_HOST"].startswith("http://127.0.0.1:")
        console = process.stdout.readline().strip()
        while console.startswith("export "):
            console = process.stdout.readline().strip()
        assert console == f"# console: {exports['STORAGE_EMULATOR_HOST']}/console/"
        client = storage.Client(
            project=exports["GOOGLE_CLOUD_PROJECT"],
            credentials=AnonymousCredentials(),
            client_options={"api_endpoint": exports["STORAGE_EMULATOR_HOST"]},
        )
        client.create_bucket("made-through-local-up")
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    assert (home / "storage" / "made-through-local-up").is_dir()  # state kept under --home


def started_local_up(home: Path, project: str) -> tuple[subprocess.Popen, str]:
    """`vertexkit local up` on a free port, once its last line (the console's URL) printed."""
    command = [sys.executable, "-m", "vertexkit.cli", "local", "up", "--home", str(home),
               "--project", project]  # fmt: skip
    process = subprocess.Popen([*command, "--port", "0"], stdout=subprocess.PIPE, text=True)
    for line in process.stdout:
        if line.startswith("# console: "):
            return process, line.removeprefix("# console: ").strip().removesuffix("/console/")
    raise AssertionError(f"local up ended with {process.wait()} before it served")


def test_read_verbs_find_a_running_local_up_through_its_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process, url = started_local_up(home, project="found-project")
    try:
        found = running_local_up(home)
        assert found is not None and found["VERTEX_AI_EMULATOR_HOST"] == url
        assert found["VERTEXKIT_HOME"] == str(home.resolve())
        context = CloudContext("found-project", "us-central1", url, url, url)
        endpoint = {"display_name": "made-in-found-project"}
        context.endpoint_client().create_endpoint(parent=context.parent, endpoint=endpoint).result()
        # No exported variables: only the running server knows its project; a verb that
        # started a local cloud of its own would list `local-project`'s endpoints (none).
        env = {k: v for k, v in os.environ.items() if "EMULATOR" not in k}
        env["COLUMNS"] = "200"  # one line per row: the display name is not folded
        listed = subprocess.run(
            [sys.executable, "-m", "vertexkit.cli", "endpoints", "list", "--home", str(home)],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        assert listed.returncode == 0, listed.stderr
        assert "made-in-found-project" in listed.stdout
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    assert not (home / LOCAL_UP_FILE).exists()  # removed at exit
    assert running_local_up(home) is None


def test_a_local_up_file_naming_a_dead_process_is_ignored(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    (tmp_path / LOCAL_UP_FILE).write_text(
        json.dumps({"url": "http://127.0.0.1:9", "pid": int(dead.stdout), "env": {}})
    )
    assert running_local_up(tmp_path) is None


PIPELINE_MODULE = """
from kfp import dsl


@dsl.component(install_kfp_package=False)
def shout(word: str) -> str:
    return word.upper()


@dsl.pipeline(name="shout")
def shout_pipeline(word: str = "hello") -> str:
    return shout(word=word).output
"""


def test_run_submits_to_the_local_up_serving_its_home(tmp_path: Path) -> None:
    """One local cloud per home: `vertexkit run` sends its job to the running `local up`
    (whose own project shows where the job went) instead of starting a second one."""
    home = tmp_path / "home"
    (tmp_path / "shout_module.py").write_text(PIPELINE_MODULE)
    process, url = started_local_up(home, project="up-project")
    try:
        env = {k: v for k, v in os.environ.items() if "EMULATOR" not in k}
        ran = subprocess.run(
            [sys.executable, "-m", "vertexkit.cli", "run", "shout_module:shout_pipeline",
             "--home", str(home), "--no-cache", "--param", "word=quiet"],
            capture_output=True, text=True, env=env, cwd=tmp_path, check=False,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
        # Vertex names the job with the project's number (vertexkit.local.projects).
        assert f"projects/{project_number('up-project')}/locations/us-central1/pipelineJobs/" in (
            ran.stdout
        )
        assert f"console: {url}/console/" in ran.stdout
        context = CloudContext("up-project", "us-central1", url, url, url)
        [job] = context.pipeline_client().list_pipeline_jobs(parent=context.parent)
        assert job.state.name == "PIPELINE_STATE_SUCCEEDED"
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


# -- one local cloud per home: the three ways a second one used to start ------------------------
def test_a_second_local_up_on_a_served_home_exits_before_any_export(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process, url = started_local_up(home, project="first-project")
    try:
        local_up_file = (home / LOCAL_UP_FILE).read_text()
        second = subprocess.run(
            [sys.executable, "-m", "vertexkit.cli", "local", "up", "--home", str(home)],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip  (the default port, which the first one does not hold: --port 0)
        assert second.returncode != 0
        assert "export " not in second.stdout
        for needed in (str(home.resolve()), url, f"pid {process.pid}", "local exec"):
            assert needed in second.stderr, second.stderr
        assert "damaged" not in second.stderr
        assert not list(home.rglob("*.damaged-*"))
        assert (home / LOCAL_UP_FILE).read_text() == local_up_file  # the first's, untouched
        assert running_local_up(home)["STORAGE_EMULATOR_HOST"] == url  # still serving
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_local_exec_without_the_exports_uses_the_local_up_serving_the_home(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    process, url = started_local_up(home, project="up-project")
    try:
        env = {k: v for k, v in os.environ.items() if "EMULATOR" not in k}
        ran = subprocess.run(
            [sys.executable, "-m", "vertexkit.cli", "local", "exec", "--home", str(home), "--",
             sys.executable, "-c", "import os; print(os.environ['STORAGE_EMULATOR_HOST'])"],
            capture_output=True, text=True, env=env, timeout=60, check=False,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.strip() == url
        assert not list(home.rglob("*.damaged-*"))
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_two_runs_on_one_home_without_local_up_both_succeed(tmp_path: Path) -> None:
    """The second run's cloud waits for the first run's to end (that cloud ends with its own
    command) instead of failing on DuckDB's lock as a 'damaged' file."""
    home = tmp_path / "home"
    (tmp_path / "shout_module.py").write_text(PIPELINE_MODULE)
    env = {k: v for k, v in os.environ.items() if "EMULATOR" not in k}
    command = [sys.executable, "-m", "vertexkit.cli", "run", "shout_module:shout_pipeline",
               "--home", str(home), "--no-cache"]  # fmt: skip
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    runs = [
        subprocess.Popen([*command, "--param", f"word=run{n}"], env=env, cwd=tmp_path, **pipes)
        for n in range(2)
    ]
    errors = ""
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, out + err
        errors += err
    assert "damaged" not in errors
    assert "waiting for the local cloud of `vertexkit run`" in errors  # said once, by the second
    assert not list(home.rglob("*.damaged-*"))
    listed = subprocess.run(
        [sys.executable, "-m", "vertexkit.cli", "runs", "list", "--home", str(home)],
        capture_output=True, text=True, env={**env, "COLUMNS": "200"}, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("SUCCEEDED") == 2, listed.stdout
