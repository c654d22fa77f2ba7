"""`vertexkit run`'s cloud process, spawned by the console script before the CLI loads: taken by
the `run` verb for the home and caching Typer parsed, closed on a wrong guess, never spawned
where the argv may mean something else; and through the real console script, one process a run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vertexkit.cli import early_cloud

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")


@pytest.fixture(autouse=True)
def nothing_left_spawned():
    yield
    leftover = early_cloud.take(None, True)  # closes whatever a test left behind
    if leftover is not None:
        leftover.close()


def test_the_run_verb_takes_the_process_spawned_for_its_home_and_caching(tmp_path: Path) -> None:
    home = tmp_path / "home"
    early_cloud.spawn_for(["run", "training", "--no-cache", "--home", str(home)])
    process = early_cloud.take(home, caching=False)
    assert process is not None
    try:
        assert process.process.poll() is None
        assert early_cloud.take(home, caching=False) is None  # taken once
    finally:
        process.close()
    assert not home.exists()  # never asked to serve: it touched nothing


@pytest.mark.parametrize(
    ("home_words", "caching"),
    [(["--home=other"], False), ([], True)],
    ids=["another-home", "caching-differs"],
)
def test_a_wrong_guess_is_closed_and_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home_words: list[str], caching: bool
) -> None:
    monkeypatch.chdir(tmp_path)  # the default home, and `other`, are in here
    monkeypatch.delenv("VERTEXKIT_HOME", raising=False)
    early_cloud.spawn_for(["run", "training", "--no-cache", *home_words])
    spawned = early_cloud._spawned
    assert spawned is not None
    assert early_cloud.take(None, caching) is None
    assert spawned[2].process.poll() is not None  # closed: it has ended


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "training", "--vertex"],
        ["run", "--help"],
        ["models", "list"],
        [],
    ],
    ids=["vertex", "help", "another-verb", "nothing"],
)
def test_nothing_is_spawned_where_the_argv_may_mean_something_else(argv: list[str]) -> None:
    early_cloud.spawn_for(argv)
    assert early_cloud._spawned is None


def _cloud_processes_started_by(command: list[str], cwd: Path) -> tuple[int, set[int]]:
    """Runs `command`; the pids of the `vertexkit.cloud_process` children it started (sampled
    from /proc while it runs: each lives at least as long as the compile)."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen: set[int] = set()
    while process.poll() is None:
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry.name}/stat").read_text().rpartition(")")[2].split()
                argv = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            except OSError:
                continue
            if int(stat[1]) == process.pid and b"vertexkit.cloud_process" in argv:
                seen.add(int(entry.name))
        time.sleep(0.005)
    process.communicate()
    return process.returncode, seen


def test_a_run_through_the_console_script_spawns_one_cloud_process(tmp_path: Path) -> None:
    """A refused parameter ends the run after its compile, which both spawns would outlive."""
    home = tmp_path / "home"
    command = [sys.executable, "-m", "vertexkit.cli", "run", "training", "--home", str(home),
               "-p", "no_such_parameter=1"]  # fmt: skip
    code, spawned = _cloud_processes_started_by(command, Path.cwd())
    assert code == 2
    assert len(spawned) == 1, f"spawned {len(spawned)} cloud processes"
    assert not home.exists()
