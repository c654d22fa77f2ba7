"""Shared fixtures: one local cloud per test process (pytest-xdist worker), real clients on it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud


@pytest.fixture(scope="session")
def local_cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCloud]:
    """A running local cloud with its own home; the process env points the clients at it."""
    cloud = LocalCloud(home=tmp_path_factory.mktemp("vertexkit-home")).start()
    saved = dict(os.environ)
    os.environ.update(cloud.env())
    try:
        yield cloud
    finally:
        cloud.stop()
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def cloud_context(local_cloud: LocalCloud) -> CloudContext:
    return local_cloud.context()
