from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

import joblib
import numpy as np
import pytest
import xgboost
from palmerpenguins import load_penguins
from sklearn.tree import DecisionTreeClassifier

from vertexkit.local.processes import group_alive
from vertexkit.local.vertex.registry.serving import (
    ContainerServer,
    ServingError,
    expand,
    load_prebuilt,
    prebuilt_framework,
    runnable_command,
)

FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm"]


@pytest.fixture(scope="module")
def penguins() -> tuple[np.ndarray, np.ndarray]:
    frame = load_penguins().dropna(subset=[*FEATURES, "species", "body_mass_g"])
    return frame[FEATURES].to_numpy(), frame


@pytest.mark.parametrize(
    ("image", "framework"),
    [
        ("us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest", "sklearn"),
        ("europe-docker.pkg.dev/vertex-ai/prediction/xgboost-cpu.2-1:latest", "xgboost"),
        ("gcr.io/cloud-aiplatform/prediction/sklearn-cpu.0-24:latest", "sklearn"),
        ("us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest", "tf2"),
        ("gcr.io/my-project/sklearn-server:1", None),
    ],
)
def test_prebuilt_framework(image: str, framework: str | None) -> None:
    assert prebuilt_framework(image) == framework


def test_sklearn_prebuilt_predicts_like_the_estimator(tmp_path: Path, penguins: tuple) -> None:
    features, frame = penguins
    estimator = DecisionTreeClassifier(max_depth=3).fit(features, frame["species"])
    joblib.dump(estimator, tmp_path / "model.joblib")
    predictor = load_prebuilt(
        "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest", tmp_path
    )
    rows = features[:7].tolist()
    assert predictor.predict(rows) == estimator.predict(features[:7]).tolist()
    with pytest.raises(ServingError, match=r"instances\[1\] has 2 values .* expects 3"):
        predictor.predict([rows[0], [1.0, 2.0]])
    with pytest.raises(ServingError, match="JSON object"):
        predictor.predict([{"bill_length_mm": 39.1}])


def test_prebuilt_needs_exactly_one_model_file(tmp_path: Path) -> None:
    image = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest"
    with pytest.raises(ServingError, match="exactly one of"):
        load_prebuilt(image, tmp_path)
    (tmp_path / "model.joblib").write_bytes(b"x")
    (tmp_path / "model.pkl").write_bytes(b"x")
    with pytest.raises(ServingError, match=r"found \['model.joblib', 'model.pkl'\]"):
        load_prebuilt(image, tmp_path)


def test_xgboost_prebuilt_loads_a_booster(tmp_path: Path, penguins: tuple) -> None:
    features, frame = penguins
    booster = xgboost.train(
        {"max_depth": 3}, xgboost.DMatrix(features, label=frame["body_mass_g"]), 10
    )
    booster.save_model(str(tmp_path / "model.bst"))
    predictor = load_prebuilt(
        "us-docker.pkg.dev/vertex-ai/prediction/xgboost-cpu.2-1:latest", tmp_path
    )
    expected = booster.predict(xgboost.DMatrix(features[:5]))
    assert predictor.predict(features[:5].tolist()) == pytest.approx(expected.tolist())


def test_unserved_prebuilt_framework_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ServingError, match="cannot serve here"):
        load_prebuilt("us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest", tmp_path)


def test_runnable_command() -> None:
    with pytest.raises(ServingError, match="no `command`"):
        runnable_command({"imageUri": "gcr.io/p/server:1"})
    with pytest.raises(ServingError, match="not an executable"):
        runnable_command({"imageUri": "gcr.io/p/server:1", "command": ["/opt/app/serve"]})
    command = runnable_command({"command": ["python", "-m", "app"]})
    assert command == [sys.executable, "-m", "app"]


def test_expand_substitutes_known_variables_only() -> None:
    assert expand("--port=$(AIP_HTTP_PORT) $(NOPE)", {"AIP_HTTP_PORT": "9"}) == "--port=9 $(NOPE)"


def test_stop_ends_the_container_and_its_children_ignoring_sigterm(tmp_path: Path) -> None:
    script = Path(__file__).parents[1] / "training/testdata/stubborn_server.py"
    pids_file = tmp_path / "pids"
    routes = {"AIP_PREDICT_ROUTE": "/predict", "AIP_HEALTH_ROUTE": "/health"}
    spec = {"imageUri": "gcr.io/p/server:1", "command": ["python", str(script), str(pids_file)]}
    server = ContainerServer(spec, routes, tmp_path / "server.log", startup_seconds=30)
    server.start()
    pids = [int(pid) for pid in pids_file.read_text().split()]
    try:
        assert server.stop() == -signal.SIGTERM
        assert not group_alive(pids[0])  # the server's group: the child that ignored SIGTERM too
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
