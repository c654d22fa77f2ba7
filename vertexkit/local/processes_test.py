"""Process groups: ending one reaches children that outlive the leader or ignore SIGTERM, and a
restart ends only what a dead local cloud left, never a process that merely reuses a pid."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from vertexkit.local.processes import (
    Group,
    GroupRecord,
    ProcessGroups,
    group_alive,
    process_identity,
    wait_for_exit,
)
from vertexkit.local.vertex.store import ResourceStore

STUBBORN = Path(__file__).parent / "vertex/training/testdata/stubborn.py"
SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]
UNTIL_STDIN_CLOSES = [sys.executable, "-c", "import sys; sys.stdin.read()"]
HAS_PIDFD = hasattr(os, "pidfd_open")
GONE_CLOUD = "999999999 a-local-cloud-that-was-killed"


def wait_until(check: Callable[[], Any], what: str, timeout: float = 10) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.02)
    raise AssertionError(f"{what}: not within {timeout}s")


def pids_from(path: Path) -> list[int]:
    text = wait_until(lambda: path.exists() and path.read_text(), f"{path} written")
    return [int(pid) for pid in text.split()]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ResourceStore]:
    store = ResourceStore(tmp_path / "vertex.sqlite")
    yield store
    store.close()


@pytest.fixture
def stranger() -> Iterator[subprocess.Popen[bytes]]:
    """A process of someone else's, leading its own group."""
    process = subprocess.Popen(SLEEP, start_new_session=True)
    yield process
    process.kill()
    process.wait()


def test_ending_a_group_whose_leader_exited_kills_the_child_ignoring_sigterm(
    tmp_path: Path,
) -> None:
    group = ProcessGroups().spawn(
        [sys.executable, str(STUBBORN), str(tmp_path / "p"), "--exit"], "j"
    )
    leader, child = pids_from(tmp_path / "p")
    assert wait_until(lambda: group.returncode() == 0, "the leader exiting")
    assert process_identity(leader) is not None  # not reaped yet: the group id stays ours
    assert group_alive(group.pid)  # the child lives on
    assert group.end(grace=0.2) == 0
    wait_until(lambda: not group_alive(group.pid), f"child {child} ending")


def test_restart_ends_the_groups_a_dead_cloud_left_and_no_others(
    store: ResourceStore, tmp_path: Path
) -> None:
    groups = ProcessGroups(store)
    left = groups.spawn([sys.executable, str(STUBBORN), str(tmp_path / "p")], "dead-job")
    ours = groups.spawn(SLEEP, "live-job")
    pids_from(tmp_path / "p")
    store.record_process(GroupRecord(left.pid, process_identity(left.pid) or "", GONE_CLOUD, "j"))
    try:
        ended = ProcessGroups(store).end_leftovers(grace=0.2)
        assert [record.owner for record in ended] == ["j"]
        wait_until(lambda: not group_alive(left.pid), "the leftover group ending")
        assert group_alive(ours.pid)  # a running local cloud's group is not a leftover
        assert [record.owner for record in store.recorded_processes()] == ["live-job"]
    finally:
        left.end(grace=0)
        ours.end(grace=0)


def test_a_pid_reused_by_another_process_is_not_killed(
    store: ResourceStore, stranger: subprocess.Popen[bytes]
) -> None:
    """The record's leader started at another time: the pid now belongs to someone else."""
    store.record_process(GroupRecord(stranger.pid, "0:an-earlier-start", GONE_CLOUD, "old-job"))
    assert ProcessGroups(store).end_leftovers(grace=0.2) == []
    assert stranger.poll() is None
    assert store.recorded_processes() == []  # the stale record is dropped


def test_a_group_that_ended_is_only_forgotten(store: ResourceStore) -> None:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
    pid = int(finished.stdout)
    store.record_process(GroupRecord(pid, "0:gone", GONE_CLOUD, "old-job"))
    assert ProcessGroups(store).end_leftovers(grace=0.2) == []
    assert store.recorded_processes() == []


def test_signals_reach_the_group_not_this_process() -> None:
    """Sanity: spawned groups are not ours, so ending them never signals the test runner."""
    group = ProcessGroups().spawn(SLEEP, "j")
    assert os.getpgid(group.pid) == group.pid != os.getpgid(0)
    assert group.end(grace=1) == -signal.SIGTERM
    assert not group_alive(group.pid)


def readable(fd: int) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def without_pidfd(group: Group) -> Group:
    group._exit_fd_tried = True  # as on a machine without pidfds: exits are checked on a timer
    return group


@pytest.mark.parametrize(
    "prepare",
    [
        pytest.param(
            lambda g: g, id="pidfd", marks=pytest.mark.skipif(not HAS_PIDFD, reason="no pidfd")
        ),
        pytest.param(without_pidfd, id="timer"),
    ],
)
def test_wait_for_exit_returns_when_the_leader_exits(prepare: Callable[[Group], Group]) -> None:
    group = prepare(ProcessGroups().spawn(UNTIL_STDIN_CLOSES, "j", stdin=subprocess.PIPE))
    waiter = threading.Thread(target=wait_for_exit, args=([group], 3600))
    waiter.start()
    try:
        assert group.returncode() is None
        assert group.process.stdin is not None
        group.process.stdin.close()  # the leader exits
        waiter.join(timeout=30)
        assert not waiter.is_alive(), "wait_for_exit did not return when the leader exited"
        assert group.returncode() == 0
    finally:
        group.end(grace=1)


def test_wait_for_exit_gives_up_after_its_timeout_while_the_leader_runs() -> None:
    group = ProcessGroups().spawn(SLEEP, "j")
    try:
        wait_for_exit([group], 0.01)
        assert group.returncode() is None
    finally:
        group.end(grace=1)


@pytest.mark.skipif(not HAS_PIDFD, reason="this machine has no pidfds")
def test_the_exit_fd_is_readable_once_the_leader_exited_and_closed_by_end() -> None:
    group = ProcessGroups().spawn(UNTIL_STDIN_CLOSES, "j", stdin=subprocess.PIPE)
    fd = group.exit_fd()
    assert fd is not None and not readable(fd)
    assert group.process.stdin is not None
    group.process.stdin.close()
    wait_until(lambda: group.returncode() is not None, "the leader exiting")
    assert readable(fd)
    assert group.end(grace=1) == 0
    assert group.exit_fd() is None  # closed with the group: the reaped pid may be reused
