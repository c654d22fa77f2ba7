"""The KFP API's tests run pipelines and upload models: they get a local cloud of their own
(one per module), so their runs and models never appear in another test's lists on the
suite's shared cloud (the console's newest run, a list's first job)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from vertexkit.context import environ_set
from vertexkit.local import LocalCloud


@pytest.fixture(scope="module")
def local_cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCloud]:
    with LocalCloud(home=tmp_path_factory.mktemp("kfp-home")) as cloud, environ_set(cloud.env()):
        yield cloud
