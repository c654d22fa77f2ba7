"""Issue 26's CLI verbs as a user types them, against a `vertexkit local up` found through its
home (no exports in the shell): `schedule create` finds it and links the local console, schedules
are addressed by display name, a module's pipeline names its run and compiled file, Ctrl-C says
what became of the run and exits 130, and a piped table is not cut to 80 columns."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vertexkit.cli.errors import UserError
from vertexkit.cli.local_test import started_local_up
from vertexkit.cli.names import find_by_name

MODULE = """
from kfp import dsl


@dsl.component(install_kfp_package=False)
def nap(seconds: int) -> int:
    import time

    time.sleep(seconds)
    return seconds


@dsl.pipeline(name="my-penguins")
def my_pipeline(seconds: int = 0) -> int:
    return nap(seconds=seconds).output
"""
PIPELINE = "my_module:my_pipeline"


class LocalUp:
    def __init__(self, home: Path, url: str, folder: Path) -> None:
        self.home, self.url, self.folder = home, url, folder
        # a fresh shell: no exports, the home named by VERTEXKIT_HOME
        self.env = {k: v for k, v in os.environ.items() if "EMULATOR" not in k}
        self.env |= {"VERTEXKIT_HOME": str(home)}
        self.env.pop("COLUMNS", None)

    def cli(self, *args: str, **options: Any) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "vertexkit.cli", *args],
            capture_output=True, text=True, env=self.env, cwd=self.folder, timeout=300,
            check=False, **options,
        )  # fmt: skip

    def rest(self, path: str, method: str = "GET") -> dict[str, Any]:
        request = urllib.request.Request(f"{self.url}/v1/{path}", method=method)
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read() or b"{}")


@pytest.fixture(scope="module")
def local_up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalUp]:
    folder = tmp_path_factory.mktemp("user-folder")
    (folder / "my_module.py").write_text(MODULE)
    process, url = started_local_up(folder / "home", project="local-project")
    try:
        yield LocalUp(folder / "home", url, folder)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_schedule_create_finds_the_local_up_and_links_its_console(local_up: LocalUp) -> None:
    created = local_up.cli("schedule", "create", PIPELINE, "--cron", "0 3 * * *")
    assert created.returncode == 0, created.stdout + created.stderr
    name = created.stdout.split()[1]
    assert name.startswith("projects/") and "/schedules/" in name, created.stdout
    assert f"console: {local_up.url}/console/{name}" in created.stdout
    assert "no `vertexkit local up` is running" not in created.stderr
    assert "console.cloud.google.com" not in created.stdout + created.stderr
    schedule = local_up.rest(name)
    assert schedule["displayName"] == "my-penguins"  # the pipeline's own name
    local_up.cli("schedule", "delete", name)


def test_schedules_are_addressed_by_display_name_where_unique(local_up: LocalUp) -> None:
    created = local_up.cli("schedule", "create", PIPELINE, "--cron", "0 4 * * *")
    assert created.returncode == 0, created.stderr
    first = created.stdout.split()[1]
    paused = local_up.cli("schedule", "pause", "my-penguins")
    assert paused.returncode == 0, paused.stdout + paused.stderr
    assert local_up.rest(first)["state"] == "PAUSED"
    resumed = local_up.cli("schedule", "resume", "my-penguins")
    assert resumed.returncode == 0 and local_up.rest(first)["state"] == "ACTIVE"
    second = local_up.cli("schedule", "create", PIPELINE, "--cron", "0 5 * * *").stdout.split()[1]
    ambiguous = local_up.cli("schedule", "pause", "my-penguins")
    assert ambiguous.returncode == 2
    ids = [name.rsplit("/", 1)[-1] for name in (first, second)]
    message = " ".join(ambiguous.stderr.split())
    assert "SCHEDULE: 2 schedules are named 'my-penguins': give one of their IDs" in message
    assert all(schedule_id in message for schedule_id in ids), message
    assert {local_up.rest(name)["state"] for name in (first, second)} == {"ACTIVE"}
    by_id = local_up.cli("schedule", "pause", ids[1])  # an ID still works
    assert by_id.returncode == 0 and local_up.rest(second)["state"] == "PAUSED"
    for schedule_id in ids:
        assert local_up.cli("schedule", "delete", schedule_id).returncode == 0


def test_a_module_pipeline_names_its_run_and_compiled_file(local_up: LocalUp) -> None:
    ran = local_up.cli("run", PIPELINE, "--no-cache")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    job_name = ran.stdout.split("created ", 1)[1].split()[0]
    assert "/pipelineJobs/my-penguins-" in job_name  # not `my-...`, nor `vertexkit-my-...`
    assert local_up.rest(job_name)["displayName"] == "my-penguins"
    compiled = local_up.cli("compile", PIPELINE, "--output-dir", "out")
    assert compiled.returncode == 0, compiled.stderr
    assert (local_up.folder / "out" / "my-penguins.yaml").is_file()
    assert not (local_up.folder / "out" / "my.yaml").exists()
    # `runs show`, piped: the whole table at its own width, with the run's and task's durations
    shown = local_up.cli("runs", "show", job_name.rsplit("/", 1)[-1])
    assert shown.returncode == 0, shown.stderr
    assert "duration: " in shown.stdout
    [row] = [line for line in shown.stdout.splitlines() if line.startswith("│ nap ")]
    assert len(row) > 80 and row.split("│")[5].strip().endswith(" s"), shown.stdout


def _interrupted_run(local_up: LocalUp, home_args: list[str]) -> tuple[str, int, str]:
    """`vertexkit run` of a long task, Ctrl-C (SIGINT to its process group, as a terminal sends
    it) once the task runs: the run's name, the exit code and stderr."""
    process = subprocess.Popen(
        [sys.executable, "-m", "vertexkit.cli", "run", PIPELINE, "-p", "seconds=120",
         "--no-cache", *home_args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=local_up.folder,
        env=local_up.env, start_new_session=True,
    )  # fmt: skip
    assert process.stdout is not None
    job_name = ""
    for line in process.stdout:
        job_name = job_name or line.removeprefix("created ").strip() * line.startswith("created ")
        if line.split()[1:3] == ["nap", "RUNNING"]:
            break
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    return job_name, process.returncode, err


def test_ctrl_c_on_a_local_up_leaves_the_run_going_and_says_how_to_cancel(
    local_up: LocalUp,
) -> None:
    job_name, code, err = _interrupted_run(local_up, [])
    run_id = job_name.rsplit("/", 1)[-1]
    assert code == 130
    lines = [line for line in err.splitlines() if line.startswith("interrupted")]
    assert lines == [
        f"interrupted; the run {run_id} continues on `vertexkit local up`; follow it with "
        f"`vertexkit runs show {run_id}`, cancel it with `vertexkit runs cancel {run_id}`"
    ], err
    time.sleep(0.5)
    assert local_up.rest(job_name)["state"] == "PIPELINE_STATE_RUNNING"
    cancelled = local_up.cli("runs", "cancel", run_id)
    assert cancelled.returncode == 0, cancelled.stderr
    deadline = time.monotonic() + 60
    while local_up.rest(job_name)["state"] != "PIPELINE_STATE_CANCELLED":
        assert time.monotonic() < deadline, local_up.rest(job_name)["state"]
        time.sleep(0.2)


def test_ctrl_c_on_the_runs_own_cloud_cancels_it_and_says_so(
    local_up: LocalUp, tmp_path: Path
) -> None:
    job_name, code, err = _interrupted_run(local_up, ["--home", str(tmp_path / "own")])
    run_id = job_name.rsplit("/", 1)[-1]
    assert code == 130
    assert f"interrupted; the run {run_id} was cancelled: its local cloud ends with this" in err
    assert "Traceback" not in err


def test_a_display_name_several_share_is_refused_listing_their_ids() -> None:
    items = [
        {"name": "projects/p/locations/l/schedules/1", "displayName": "training"},
        {"name": "projects/p/locations/l/schedules/2", "displayName": "training"},
        {"name": "projects/p/locations/l/schedules/3", "displayName": "other"},
    ]
    assert find_by_name("other", items, "schedule", "SCHEDULE") == items[2]
    assert find_by_name("2", items, "schedule", "SCHEDULE") == items[1]
    assert find_by_name(items[0]["name"], items, "schedule", "SCHEDULE") == items[0]
    assert find_by_name("nothing", items, "schedule", "SCHEDULE") is None
    with pytest.raises(UserError, match=r"2 schedules are named 'training'.*\(1, 2\)"):
        find_by_name("training", items, "schedule", "SCHEDULE")
