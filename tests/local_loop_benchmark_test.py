"""The local-loop benchmark's pure parts: the /proc process-tree sum on a real tree of processes
spawned here, the repeat budget, and the table's ratio/verdict formatting. No timings."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from benchmarks.local_loop import (
    MIB,
    CliRun,
    Figure,
    PeakSampler,
    ProcessTree,
    Trainer,
    format_table,
    in_turn,
    memory_bytes,
    runs_within,
    table_row,
)

HELD_MIB = 64
# A parent that starts a child holding HELD_MIB of touched memory; each prints its pid, then
# both wait until their stdin closes.
CHILD = f"""
import sys
held = bytearray({HELD_MIB} * 1024 * 1024)
print("pid", __import__("os").getpid(), flush=True)
sys.stdin.read()
"""
PARENT = f"""
import os, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", {CHILD!r}], stdin=subprocess.PIPE)
print("pid", os.getpid(), flush=True)
sys.stdin.read()
child.stdin.close()
child.wait()
"""


@pytest.fixture
def tree() -> Iterator[tuple[subprocess.Popen, set[int]]]:
    """A real parent -> child tree; yields the parent and both pids once both are running."""
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdin is not None and parent.stdout is not None
    pids = {int(parent.stdout.readline().split()[1]) for _ in range(2)}
    yield parent, pids
    parent.stdin.close()
    parent.wait(timeout=30)


def test_tree_finds_the_child_and_grandchild_of_this_process(tree):
    parent, pids = tree
    assert ProcessTree(parent.pid).refresh() == pids
    mine = ProcessTree(os.getpid(), include_root=False).refresh()
    assert pids <= mine and os.getpid() not in mine  # other fixtures may hold children too


def test_tree_memory_is_the_sum_over_its_processes(tree):
    parent, pids = tree
    summed = ProcessTree(parent.pid).memory_bytes()
    assert summed >= HELD_MIB * MIB  # the child's touched bytearray is resident
    by_process = sum(memory_bytes(pid) for pid in pids)
    assert abs(summed - by_process) < 8 * MIB  # the same processes, read a moment apart


def test_sampler_keeps_the_largest_sum(tree):
    parent, _ = tree
    sampler = PeakSampler(ProcessTree(parent.pid))
    now = sampler.sample()
    assert sampler.bytes == now >= HELD_MIB * MIB


def test_tree_forgets_processes_that_ended():
    tree = ProcessTree(os.getpid(), include_root=False)
    child = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    assert child.pid in tree.refresh()
    child.communicate(b"\n", timeout=30)
    assert child.pid not in tree.refresh()
    assert memory_bytes(child.pid) == 0


@pytest.mark.parametrize(
    ("first", "budget", "runs"),
    [
        pytest.param(10.0, 100.0, 3, id="cheap-capped-at-3"),
        pytest.param(40.0, 100.0, 2, id="two-fit"),
        pytest.param(61.0, 100.0, 1, id="one-fits"),
        pytest.param(200.0, 100.0, 1, id="over-budget-keeps-the-first"),
        pytest.param(0.0, 100.0, 3, id="instant"),
    ],
)
def test_runs_within_budget(first, budget, runs):
    assert runs_within(first, budget) == runs


def test_each_run_is_followed_by_a_run_of_its_floor(tmp_path):
    """Runs and floor in turn, so that both medians come from the same minutes. The callables
    stand in for subprocess runs: this checks the order and the medians, not a timing."""
    calls: list[str] = []
    floor_seconds = iter([2.0, 1.0, 3.0])

    def run() -> CliRun:
        calls.append("run")
        return CliRun(6.0, 7.0, 0, "job", tmp_path)

    def floor() -> Trainer:
        calls.append("floor")
        return Trainer(next(floor_seconds), 1.5, 0)

    first = CliRun(10.0, 11.0, 0, "job", tmp_path)  # cheap against the budget: 3 runs in all
    runs, trainer = in_turn(first, run, floor, 100)
    assert calls == ["floor", "run", "floor", "run", "floor"]
    assert [r.seconds for r in runs] == [10.0, 6.0, 6.0]
    assert (trainer.seconds, trainer.cpu) == (2.0, 1.5)  # the median of 2.0, 1.0 and 3.0


@pytest.mark.parametrize(
    ("figure", "cells"),
    [
        pytest.param(
            Figure("run", 8.0, "trainer", 2.0, 4, now_cpu=5.0, floor_cpu=1.5),
            [
                "run",
                "8.00 s (5.00 s CPU)",
                "trainer 2.00 s (1.50 s CPU)",
                "4.00x (3.33x CPU)",
                "<= 4x",
                "meets",
            ],
            id="at-target-meets",
        ),
        pytest.param(
            Figure("cached", 3.1, "trainer", 2.0, 1.5),
            ["cached", "3.10 s", "trainer 2.00 s", "1.55x", "<= 1.5x", "misses"],
            id="over-target-misses",
        ),
        pytest.param(
            Figure("up", 1.0, "bare", 0.3, 3, now_cpu=0.2, floor_cpu=0.2),
            [
                "up",
                "1.00 s (0.20 s CPU)",
                "bare 0.30 s (0.20 s CPU)",
                "3.33x (1.00x CPU)",
                "<= 3x",
                "misses",
            ],
            id="verdict-on-wall-not-cpu",
        ),
        pytest.param(
            Figure("peak", 900.4, "trainer alone", 150.0, None, unit="MiB"),
            ["peak", "900 MiB", "trainer alone 150 MiB", "6.00x", "-", "-"],
            id="no-target-reported-beside",
        ),
    ],
)
def test_table_row(figure, cells):
    assert table_row(figure) == cells


def test_format_table_has_the_issue_columns():
    lines = format_table([Figure("up", 0.6, "bare", 0.3, 3)]).splitlines()
    assert lines[0] == "| what | now | floor | ratio | target | verdict |"
    assert lines[2] == "| up | 0.60 s | bare 0.30 s | 2.00x | <= 3x | meets |"
