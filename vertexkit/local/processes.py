"""Process groups the local cloud starts (job replicas, tuning trials, pipeline drivers and
their tasks, serving containers), recorded so that none outlives the local cloud.

Each process leads its own process group (`start_new_session`), so ending the group reaches every
child, even children that outlive the leader or ignore SIGTERM: SIGTERM to the group, a grace,
then SIGKILL to whatever is left. The leader is not reaped before its group is ended (exit
statuses are read with `waitid(WNOWAIT)`): while its zombie exists, its pid, which is the group
id, cannot go to another process, so `killpg` never reaches a stranger.

Each group is recorded in vertex.sqlite with its leader's start time and the identity of the
local cloud that started it. A local cloud that starts after another one died (kill -9) ends the
groups the dead one left; groups of a local cloud still running on the same home are left alone.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vertexkit.local.vertex.store import ResourceStore

PROC = Path("/proc")
POLL_SECONDS = 0.02
LEFTOVER_GRACE_SECONDS = 2.0
KILL_WAIT_SECONDS = 5.0  # SIGKILL cannot be refused; a process takes a moment to exit


@dataclass(frozen=True)
class GroupRecord:
    pgid: int
    leader: str  # the leader's identity at spawn (see process_identity)
    cloud: str  # "PID IDENTITY" of the local cloud that started it
    owner: str  # the job or deployed model it ran for


# -- identities --------------------------------------------------------------------------------
def process_identity(pid: int) -> str | None:
    """Something that tells this process from a later one given the same pid: its start time
    (clock ticks since boot, /proc/PID/stat field 22, with the boot id), or `ps`'s on macOS."""
    if PROC.is_dir():
        stat = _proc_stat(pid)
        return f"{_boot_id()}:{stat[19]}" if stat else None
    answer = subprocess.run(["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True)
    return answer.stdout.strip() or None


def _proc_stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (field 3, the state, first)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def _boot_id() -> str:
    with contextlib.suppress(OSError):
        return (PROC / "sys/kernel/random/boot_id").read_text().strip()
    return ""


def this_cloud() -> str:
    return f"{os.getpid()} {process_identity(os.getpid())}"


def is_alive(cloud: str) -> bool:
    pid, _, identity = cloud.partition(" ")
    return process_identity(int(pid)) == identity


# -- groups ------------------------------------------------------------------------------------
def live_groups(pgids: Sequence[int]) -> list[int]:
    """Those of `pgids` with a process still running (zombies waiting to be reaped do not
    count), from one look at the process table however many groups are asked about."""
    if not pgids:
        return []
    wanted = {str(pgid) for pgid in pgids}
    if PROC.is_dir():
        stats = (_proc_stat(entry.name) for entry in PROC.iterdir() if entry.name.isdigit())
        live = {s[2] for s in stats if s and s[2] in wanted and s[0] != "Z"}
    else:
        listing = subprocess.run(["ps", "-A", "-o", "pgid=,stat="], capture_output=True, text=True)
        rows = (line.split() for line in listing.stdout.splitlines())
        live = {r[0] for r in rows if len(r) > 1 and r[0] in wanted and not r[1].startswith("Z")}
    return [pgid for pgid in pgids if str(pgid) in live]


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies waiting to be reaped do not)."""
    return bool(live_groups([pgid]))


def signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def wait_for_groups(pgids: Sequence[int], grace: float) -> list[int]:
    """Waits up to `grace` for the groups to go; returns those still running."""
    deadline = time.monotonic() + grace
    while (alive := live_groups(pgids)) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    return alive


def end_groups(pgids: Sequence[int], grace: float) -> None:
    """SIGTERM every group, wait up to `grace` for them to go, then SIGKILL what is left."""
    for pgid in pgids:
        signal_group(pgid, signal.SIGTERM)
    alive = wait_for_groups(pgids, grace)
    for pgid in alive:
        signal_group(pgid, signal.SIGKILL)  # e.g. children that ignore SIGTERM
    wait_for_groups(alive, KILL_WAIT_SECONDS)  # so "ended" means no process is left


class Group:
    """A process started as the leader of its own process group."""

    def __init__(self, process: subprocess.Popen[bytes], groups: ProcessGroups) -> None:
        self.process = process
        self.groups = groups
        self._lock = threading.Lock()
        self._exit_fd: int | None = None  # see exit_fd()
        self._exit_fd_tried = False

    @property
    def pid(self) -> int:
        return self.process.pid

    def returncode(self) -> int | None:
        """The leader's exit status, read without reaping it (see the module's docstring)."""
        if self.process.returncode is not None:
            return self.process.returncode
        if not hasattr(os, "waitid"):  # macOS before Python 3.13: reaps (the pid may go)
            return self.process.poll()
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return self.process.poll()
        if info is None:
            return None
        return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status

    def exit_fd(self) -> int | None:
        """A file descriptor that becomes readable when the leader exits (a Linux pidfd), or
        None where there is none. Opened while the leader is not reaped, so it names this
        process and never a later one given the same pid; closed by end()."""
        if not self._exit_fd_tried and self.process.returncode is None:
            self._exit_fd_tried = True
            with contextlib.suppress(AttributeError, OSError):  # not Linux, or an old kernel
                self._exit_fd = os.pidfd_open(self.pid)
        return self._exit_fd

    def end(self, grace: float) -> int:
        """Ends the whole group (even when the leader already exited) and reaps the leader."""
        with self._lock:
            if self.process.returncode is None:  # not reaped: the group id is still ours
                end_groups([self.pid], grace)
                self.process.wait()
            if self._exit_fd is not None:
                os.close(self._exit_fd)
                self._exit_fd = None
            self.groups.forget(self.pid)
        return self.process.returncode


def wait_for_exit(groups: Sequence[Group], timeout: float) -> None:
    """Returns once a leader of `groups` has exited, or after `timeout` seconds. With pidfds the
    exit itself wakes the caller (no timer); elsewhere exits are checked every POLL_SECONDS."""
    fds = [fd for group in groups if (fd := group.exit_fd()) is not None]
    if groups and len(fds) == len(groups):
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        poller.poll(timeout * 1000)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and all(g.returncode() is None for g in groups):
        time.sleep(min(POLL_SECONDS, max(deadline - time.monotonic(), 0)))


class ProcessGroups:
    """Starts process groups and keeps their records in the resource store (when given)."""

    def __init__(self, store: ResourceStore | None = None) -> None:
        self.store = store
        self.cloud = this_cloud()

    def spawn(self, argv: Sequence[str], owner: str, **popen: Any) -> Group:
        process = subprocess.Popen(list(argv), start_new_session=True, **popen)
        if self.store is not None:
            leader = process_identity(process.pid) or ""
            self.store.record_process(GroupRecord(process.pid, leader, self.cloud, owner))
        return Group(process, self)

    def forget(self, pgid: int) -> None:
        if self.store is not None:
            with contextlib.suppress(Exception):  # the store may be closed at shutdown
                self.store.forget_process(pgid)

    def end_leftovers(self, grace: float = LEFTOVER_GRACE_SECONDS) -> list[GroupRecord]:
        """Ends the groups that local clouds which are gone left running; returns them."""
        assert self.store is not None
        leftovers = [r for r in self.store.recorded_processes() if not is_alive(r.cloud)]
        running = [r for r in leftovers if still_ours(r)]
        end_groups([r.pgid for r in running], grace)
        for record in leftovers:
            self.store.forget_process(record.pgid)
        return running


def still_ours(record: GroupRecord) -> bool:
    """Whether the recorded group still runs. A live leader must be the process recorded (not a
    later one given the same pid); with the leader gone, a group that still has members keeps
    its id reserved (POSIX), so they are the recorded group's."""
    identity = process_identity(record.pgid)
    if identity is not None:
        return identity == record.leader and group_alive(record.pgid)
    return group_alive(record.pgid)
