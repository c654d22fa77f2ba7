"""Shared fixtures: one local cloud per test process (pytest-xdist worker), real clients on it;
and the seal's audit around every test: a test whose processes (this one, and every Python
process a local cloud starts) tried to reach an address off this machine fails, naming it.
Off-machine traffic from a local run is a bug, never a skip (vertexkit/local/hooks)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from vertexkit.context import CloudContext, environ_set
from vertexkit.local import LocalCloud
from vertexkit.local.hooks import vertexkit_off_machine_audit as audit


@pytest.fixture(scope="session", autouse=True)
def off_machine_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    log = tmp_path_factory.mktemp("audit") / "off-machine.log"
    log.write_text("")
    os.environ[audit.LOG_ENV] = str(log)  # inherited by every process a local cloud starts
    audit.install()
    yield log


@pytest.fixture(autouse=True)
def nothing_leaves_the_machine(off_machine_log: Path) -> Iterator[None]:
    start = off_machine_log.stat().st_size
    yield
    with off_machine_log.open() as log:
        log.seek(start)
        attempts = log.read()
    if attempts:
        pytest.fail(f"this test's processes tried to leave the machine:\n{attempts}")


@pytest.fixture(scope="session")
def local_cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCloud]:
    """A running local cloud with its own home; the process env points the clients at it."""
    home = tmp_path_factory.mktemp("vertexkit-home")
    with LocalCloud(home=home) as cloud, environ_set(cloud.env()):
        yield cloud


@pytest.fixture
def cloud_context(local_cloud: LocalCloud) -> CloudContext:
    return local_cloud.context()
