"""A deployed prebuilt-image model served from a process of its own (`model_process`): the same
predictions and the same refusals as the model loaded in the cloud's process (`load_prebuilt`),
and the process's end when it is stopped or dies."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import joblib
import pytest
from palmerpenguins import load_penguins
from sklearn.tree import DecisionTreeClassifier

from vertexkit.local.processes import ProcessGroups
from vertexkit.local.vertex.registry.model_process import ModelFailure, ModelProcesses
from vertexkit.runtime.prebuilt import ServingError, load_prebuilt

SKLEARN = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest"
TF2 = "us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest"
FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm"]


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    frame = load_penguins().dropna(subset=[*FEATURES, "species"])
    estimator = DecisionTreeClassifier(max_depth=3).fit(frame[FEATURES], frame["species"])
    folder = tmp_path / "model"
    folder.mkdir()
    joblib.dump(estimator, folder / "model.joblib")
    return folder


@pytest.fixture
def processes(tmp_path: Path):
    started = ModelProcesses(ProcessGroups(), tmp_path / "serving")
    yield started
    started.close()


def _refusal(call) -> tuple[str, int]:
    with pytest.raises(ServingError) as caught:
        call()
    return caught.value.message, caught.value.status


def test_it_predicts_and_refuses_as_the_model_loaded_in_process(processes, model_dir) -> None:
    processes.begin_load("d1", SKLEARN, model_dir, "gs://b/model")
    served = processes.take("d1")
    assert served is not None and served.running()
    in_process = load_prebuilt(SKLEARN, model_dir, "gs://b/model")
    try:
        rows = [[39.1, 18.7, 181.0], [46.5, 15.0, 220.0], [None, 17.0, 190.0]]
        assert served.predict(rows) == in_process.predict(rows)  # a missing value too
        for bad in ([[1.0, 2.0]], [{"a": 1}]):
            assert _refusal(lambda b=bad: served.predict(b)) == _refusal(
                lambda b=bad: in_process.predict(b)
            )
        with pytest.raises(ValueError) as failed:  # the model's own error, not a refusal
            in_process.predict([["x", 1.0, 2.0]])
        with pytest.raises(ModelFailure, match=re.escape(f"ValueError: {failed.value}")):
            served.predict([["x", 1.0, 2.0]])
    finally:
        served.stop()
    assert not served.running()
    assert processes.take("d1") is None  # taken once: the next build loads in-process


def test_a_process_spawned_before_its_folder_is_known_loads_the_model_given_later(
    processes, model_dir
) -> None:
    """`spawn` starts the process (it imports the framework meanwhile); `begin_load` gives that
    same process its model, and starts no second one."""
    processes.spawn("d5", SKLEARN)
    [spawned] = processes._spawned.values()
    assert spawned.running()
    processes.begin_load("d5", SKLEARN, model_dir, "gs://b/model")
    served = processes.take("d5")
    assert served is spawned  # the process spawned first, not a new one
    rows = [[39.1, 18.7, 181.0]]
    assert served.predict(rows) == load_prebuilt(SKLEARN, model_dir, "gs://b/model").predict(rows)


def test_a_spawned_process_never_given_a_model_ends_with_the_others(processes) -> None:
    processes.spawn("d6", SKLEARN)
    [spawned] = processes._spawned.values()
    processes.close()
    assert not spawned.running()


def test_a_load_it_refuses_is_the_in_process_refusal(processes, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    processes.begin_load("d2", SKLEARN, empty, "gs://b/empty")
    refused = _refusal(lambda: processes.take("d2"))
    assert refused == _refusal(lambda: load_prebuilt(SKLEARN, empty, "gs://b/empty"))
    assert "found none" in refused[0]


def test_an_image_not_served_here_starts_no_process(processes, model_dir) -> None:
    processes.spawn("d3", TF2)
    assert processes._spawned == {}
    processes.begin_load("d3", TF2, model_dir, "gs://b/model")
    assert processes.take("d3") is None  # its first prediction says why, in-process


def test_a_process_that_died_answers_a_500_naming_its_log(processes, model_dir) -> None:
    processes.begin_load("d4", SKLEARN, model_dir, "gs://b/model")
    served = processes.take("d4")
    assert served is not None
    os.kill(served.group.pid, signal.SIGKILL)
    served.group.process.wait()
    message, status = _refusal(lambda: served.predict([[39.1, 18.7, 181.0]]))
    assert status == 500 and "stopped" in message and str(served.log_path) in message
    assert not served.running()
    served.stop()
