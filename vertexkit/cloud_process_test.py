"""The run's local cloud in a process of its own: what it serves, what it leaves behind when the
command ends (normally, refused, killed, or interrupted with Ctrl-C), and its preload list."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vertexkit.cloud_process import CloudProcess
from vertexkit.local import LocalCloud

LIVENESS_BOUND_S = 60.0  # how long a process may take to go before the test calls it stuck
TREE_WAIT_S = 5.0  # how long the Ctrl-C test waits for the run's whole tree to be there


def process_tree(root: int) -> list[int]:
    """`root` and its live descendants (zombies left out: they hold nothing, and reaping them
    is their parent's business, or init's). Job processes run in sessions of their own, so the
    tree, not the session, is what a process started."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if stat[0] != "Z":  # fields after the name: state ppid ...
            parents[int(entry.name)] = int(stat[1])
    tree = [root] if root in parents else []
    for pid in tree:  # grows while it is walked: breadth first
        tree.extend(child for child, parent in parents.items() if parent == pid)
    return tree


def wait_until_gone(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + LIVENESS_BOUND_S
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if Path(f"/proc/{pid}").exists() and pid_state(pid) != "Z"]
        if not alive:
            return []
        time.sleep(0.05)
    return alive


def pid_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return "gone"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_it_serves_the_home_and_ends_with_everything_it_started(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process = CloudProcess.spawn(home)
    try:
        cloud = process.serve()
        storage = cloud.context().storage_client()
        storage.create_bucket("served")
        assert [bucket.name for bucket in storage.list_buckets()] == ["served"]
        assert (home / "storage" / "served").is_dir()  # the state is the home's
        started = process_tree(process.process.pid)
        assert len(started) >= 3, "the cloud, its standby pipeline driver and its light worker"
    finally:
        process.close()
    assert process.process.returncode == 0
    assert wait_until_gone(started) == []


def test_a_command_refused_before_it_serves_leaves_no_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process = CloudProcess.spawn(home)
    process.close()
    assert process.process.returncode == 0
    assert not home.exists()


def test_a_damaged_state_file_is_refused_with_the_message_of_an_in_process_start(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with LocalCloud(home=home):
        pass
    state = home / "vertex" / "vertex.sqlite"
    state.write_bytes(b"not a database" * 100)
    process = CloudProcess.spawn(home)
    try:
        with pytest.raises(ValueError) as refused:
            process.serve()
    finally:
        process.close()
    assert str(state) in str(refused.value) and "damaged" in str(refused.value)
    assert process.process.returncode == 0


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_the_cloud_ends_when_its_command_is_killed(tmp_path: Path) -> None:
    command = textwrap.dedent(f"""
        import json, os, signal
        from vertexkit.cloud_process import CloudProcess
        from pathlib import Path
        process = CloudProcess.spawn(Path({str(tmp_path / "home")!r}))
        process.serve()
        print(json.dumps(process.process.pid), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no close(), no atexit: as a killed terminal
    """)
    finished = subprocess.run(
        [sys.executable, "-c", command], capture_output=True, text=True, timeout=120
    )
    assert finished.returncode == -signal.SIGKILL, finished.stderr
    cloud = json.loads(finished.stdout)
    assert wait_until_gone(process_tree(cloud)) == []


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_ctrl_c_cancels_the_job_and_leaves_no_process(tmp_path: Path) -> None:
    """SIGINT to the terminal's process group, as Ctrl-C sends it, while a task runs: the run
    cancels its job through the API, exits 130, and its cloud ends with every job process."""
    home = tmp_path / "home"
    run = subprocess.Popen(
        [sys.executable, "-m", "vertexkit.cli", "run", "training", "--no-cache",
         "--home", str(home)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    assert run.stdout is not None
    seen = []
    for line in run.stdout:
        seen.append(line)
        if "custom-training-job" in line and "RUNNING" in line:  # the longest task: 2 s
            # before the signal (then they begin to go), once the full task worker is there:
            # the light one grows it after its own imports, which on a loaded machine can
            # still be under way when this task starts
            started = _tree_of_at_least(run.pid, 5, TREE_WAIT_S)
            os.killpg(run.pid, signal.SIGINT)
            break
    rest = run.stdout.read()
    assert run.wait(LIVENESS_BOUND_S) == 130, "".join(seen) + rest
    assert len(started) >= 5, "the command, its cloud, the pipeline driver and its workers"
    assert wait_until_gone(started) == []
    with LocalCloud(home=home) as cloud:
        context = cloud.context()
        [job] = context.pipeline_client().list_pipeline_jobs(parent=context.parent)
    assert job.state.name == "PIPELINE_STATE_CANCELLED"


def _tree_of_at_least(pid: int, count: int, seconds: float) -> list[int]:
    """`pid`'s process tree once it holds `count` processes, or as it is after `seconds`."""
    deadline = time.monotonic() + seconds
    tree = process_tree(pid)
    while len(tree) < count and time.monotonic() < deadline:
        time.sleep(0.05)
        tree = process_tree(pid)
    return tree


def test_preload_holds_every_module_a_local_cloud_imports_to_start(tmp_path: Path) -> None:
    """What `LocalCloud.start()` (and its warm-up) imports after `PRELOAD`: none of ours nor of
    Google's clients, so a new service area cannot slip past the early start unnoticed."""
    script = textwrap.dedent(f"""
        import importlib, json, sys
        from vertexkit.cloud_process import PRELOAD
        for module in PRELOAD:
            importlib.import_module(module)
        before = set(sys.modules)
        from vertexkit.local import LocalCloud
        cloud = LocalCloud(home={str(tmp_path / "home")!r}).start()
        cloud.stop()
        print(json.dumps(sorted(set(sys.modules) - before)))
    """)
    finished = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    late = [m for m in json.loads(finished.stdout) if m.startswith(("vertexkit.", "google."))]
    assert late == []
