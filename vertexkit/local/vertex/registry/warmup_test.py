"""The framework warm-up an upload starts: once per framework, only for the prebuilt images the
local cloud serves in-process, and never an error of its own."""

from __future__ import annotations

import sys

import pytest

from vertexkit.local.vertex.registry.warmup import FrameworkWarmup, import_quietly

SKLEARN = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest"
XGBOOST = "us-docker.pkg.dev/vertex-ai/prediction/xgboost-cpu.2-1:latest"
TF2 = "us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest"
CUSTOM = "us-central1-docker.pkg.dev/p/r/my-server:1"


@pytest.mark.parametrize(
    ("images", "started"),
    [
        pytest.param([SKLEARN], ["sklearn"], id="sklearn-prebuilt"),
        pytest.param([SKLEARN, SKLEARN], ["sklearn"], id="second-upload-same-framework"),
        pytest.param([XGBOOST, SKLEARN], ["xgboost", "sklearn"], id="two-frameworks"),
        pytest.param([TF2], [], id="prebuilt-not-served-in-process"),
        pytest.param([CUSTOM], [], id="custom-container"),
    ],
)
def test_an_upload_warms_each_served_framework_once(images: list[str], started: list[str]) -> None:
    warmup = FrameworkWarmup()
    for image in images:
        warmup.start(image)
    assert list(warmup._threads) == started
    for image in images:
        warmup.wait(image)  # returns: the imports ended
    assert not any(thread.is_alive() for thread in warmup._threads.values())


def test_after_the_wait_the_modules_are_imported() -> None:
    warmup = FrameworkWarmup()
    warmup.start(SKLEARN)
    warmup.wait(SKLEARN)
    assert {"joblib", "sklearn.pipeline", "sklearn.ensemble"} <= set(sys.modules)


def test_waiting_without_a_warmup_returns_at_once() -> None:
    FrameworkWarmup().wait(SKLEARN)


def test_a_module_that_is_not_installed_is_left_to_the_deploy() -> None:
    import_quietly(["vertexkit_no_such_module", "json"])  # no exception: the deploy reports it
    assert "vertexkit_no_such_module" not in sys.modules
