"""Speculative work runs at a raised nice value in a thread of its own, and only there."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from vertexkit.local.speculative import SPECULATIVE_NICE, at_low_priority

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's"
)


def own_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@linux_only
def test_the_work_runs_lowered_and_the_caller_keeps_its_priority() -> None:
    before = own_nice()
    seen: list[int] = []
    at_low_priority(lambda: seen.append(own_nice()))
    assert seen == [min(before + SPECULATIVE_NICE, 19)]
    assert own_nice() == before


@linux_only
def test_a_process_forked_afterwards_keeps_the_callers_priority() -> None:
    before = own_nice()
    at_low_priority(lambda: None)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: reports its nice value and leaves at once
        os.write(write, str(own_nice()).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert int(os.read(read, 16)) == before
    os.close(read)


def test_what_the_work_raises_reaches_the_caller() -> None:
    def fail() -> None:
        raise LookupError("no such module")

    with pytest.raises(LookupError, match="no such module"):
        at_low_priority(fail)
