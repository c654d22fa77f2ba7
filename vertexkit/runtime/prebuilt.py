"""Loading a model the way Vertex's prebuilt prediction containers load and call it.

Shared by the local cloud's endpoints (which serve prebuilt-image models in-process, there being no
Docker) and by model evaluation, which must predict exactly "the way the model will serve". It lives
in the runtime because components may not import the local cloud.

Rules, as the prebuilt containers apply them: scikit-learn loads exactly one of model.joblib /
model.pkl and answers `model.predict(np.asarray(instances)).tolist()`; XGBoost loads one of
model.bst / model.json / model.joblib / model.pkl as a Booster and answers
`booster.predict(DMatrix(instances)).tolist()`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # numpy loads with the first model served: the local cloud imports this file
    import numpy as np

# Vertex's prebuilt prediction images: `<region>-docker.pkg.dev/vertex-ai/prediction/<fw>-...`
# and the older `gcr.io/cloud-aiplatform/prediction/<fw>-...`.
PREBUILT_IMAGE = re.compile(r"(vertex-ai|cloud-aiplatform)/prediction/(?P<framework>[a-z0-9]+)-")
SKLEARN_FILES = ("model.joblib", "model.pkl")
# What unpickling a typical model of each framework imports (a Pipeline of transformers and an
# ensemble, or a booster); anything else the artifact needs is imported when it is loaded. The
# local cloud warms these before a deploy, a warm task worker before an evaluation.
FRAMEWORK_MODULES: dict[str, tuple[str, ...]] = {
    "sklearn": (
        "joblib",
        "sklearn.pipeline",
        "sklearn.compose",
        "sklearn.preprocessing",
        "sklearn.impute",
        "sklearn.ensemble",
        "sklearn.linear_model",
    ),
    "xgboost": ("joblib", "xgboost"),
}
XGBOOST_FILES = ("model.bst", "model.json", "model.joblib", "model.pkl")


class ServingError(Exception):
    """A model that cannot be served here; `message` says why and what to do instead."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class Predictor(Protocol):
    """Something that answers `predict` the way a Vertex serving container does."""

    def predict(self, instances: list[Any], parameters: Any = None) -> list[Any]: ...


def prebuilt_framework(image_uri: str) -> str | None:
    """'sklearn', 'xgboost', 'tf2', ... for a Vertex prebuilt prediction image, else None."""
    match = PREBUILT_IMAGE.search(image_uri or "")
    return match.group("framework") if match else None


def model_file(framework: str, model_dir: Path, artifact_uri: str) -> Path:
    """The one artifact file the prebuilt container loads; refuses none or several, as Vertex."""
    names = SKLEARN_FILES if framework == "sklearn" else XGBOOST_FILES
    found = [model_dir / name for name in names if (model_dir / name).is_file()]
    if len(found) != 1:
        raise ServingError(
            f"Model directory {artifact_uri} is expected to contain exactly one of: "
            f"[{', '.join(names)}]; found {[path.name for path in found] or 'none'}."
        )
    return found[0]


def servable_framework(image_uri: str) -> str:
    """'sklearn' or 'xgboost': a prebuilt image served here; else the ServingError saying so."""
    framework = prebuilt_framework(image_uri)
    if framework in ("sklearn", "xgboost"):
        return framework
    raise ServingError(
        f"The prebuilt image {image_uri} ({framework or 'unknown framework'}) cannot serve here: "
        "the local cloud serves the scikit-learn and XGBoost prebuilt images in-process. "
        "Use one of those, or a custom container with a Python `command`."
    )


def load_prebuilt(image_uri: str, model_dir: Path, artifact_uri: str | None = None) -> Predictor:
    """Loads the artifact in `model_dir` as the prebuilt image `image_uri` would."""
    framework = servable_framework(image_uri)
    artifact_uri = artifact_uri or str(model_dir)
    if framework == "sklearn":
        return SklearnPredictor(model_file(framework, model_dir, artifact_uri))
    return XGBoostPredictor(model_file(framework, model_dir, artifact_uri))


def feature_matrix(
    instances: list[Any], width: int | None, container: str, numeric: bool = True
) -> np.ndarray:
    """Instances as the 2-D array the prebuilt containers build, checked row by row.

    The scikit-learn container calls `np.asarray(instances)` with no dtype (so a Pipeline may take
    string columns); the XGBoost one builds a DMatrix, which holds numbers only.
    """
    import numpy as np

    for index, instance in enumerate(instances):
        if not isinstance(instance, list):
            kind = "a JSON object" if isinstance(instance, dict) else type(instance).__name__
            raise ServingError(
                f"instances[{index}] is {kind}; the prebuilt {container} container expects each "
                f"instance to be a list of {width or 'N'} numbers."
            )
        if width is not None and len(instance) != width:
            raise ServingError(
                f"instances[{index}] has {len(instance)} values but the model expects "
                f"{width} features."
            )
    if not numeric:
        return np.asarray(instances)
    try:
        return np.asarray(instances, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ServingError(f"instances must be lists of numbers: {exc}") from exc


class SklearnPredictor:
    """The prebuilt scikit-learn container: `model.predict(np.asarray(instances)).tolist()`."""

    def __init__(self, path: Path) -> None:
        import joblib

        self.path = path
        try:
            self.model = joblib.load(path)
        except Exception as exc:
            raise ServingError(f"Failed to load {path.name}: {exc}") from exc
        self.width: int | None = getattr(self.model, "n_features_in_", None)

    def predict(self, instances: list[Any], parameters: Any = None) -> list[Any]:
        import numpy as np

        features = feature_matrix(instances, self.width, "scikit-learn", numeric=False)
        return np.asarray(self.model.predict(features)).tolist()


class XGBoostPredictor:
    """The prebuilt XGBoost container: a Booster's `predict(DMatrix(instances))`, as lists."""

    def __init__(self, path: Path) -> None:
        import xgboost

        self.path = path
        try:
            if path.suffix in (".bst", ".json"):
                booster = xgboost.Booster(model_file=str(path))
            else:
                import joblib

                loaded = joblib.load(path)
                # The container predicts on a DMatrix, so an sklearn-API wrapper answers with
                # its booster's raw output (e.g. class probabilities), not with labels.
                booster = loaded.get_booster() if hasattr(loaded, "get_booster") else loaded
        except Exception as exc:
            raise ServingError(f"Failed to load {path.name}: {exc}") from exc
        self.booster = booster
        self.width = booster.num_features() or None

    def predict(self, instances: list[Any], parameters: Any = None) -> list[Any]:
        import numpy as np
        import xgboost

        features = feature_matrix(instances, self.width, "XGBoost")
        return np.asarray(self.booster.predict(xgboost.DMatrix(features))).tolist()
