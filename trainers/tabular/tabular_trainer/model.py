"""The model: preprocessing + estimator in one scikit-learn Pipeline that serves raw rows.

Vertex's prebuilt sklearn/xgboost serving images unpickle `model.joblib` and call
`model.predict(instances)` with the request's instances (a list of lists, which numpy turns into
a string or object array). So the pipeline is built ONLY from scikit-learn/xgboost classes (no
function of this package, which the serving image does not have) and selects columns by
position: a ColumnTransformer with integer indices, in the order written to
`feature_columns.json`. Numeric columns are imputed (median) and scaled; categorical ones
(island, sex, ...) imputed with "missing" and one-hot encoded, unknown values ignored.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

MODEL_TYPES = {
    "sklearn": ("random_forest", "gradient_boosting", "logistic"),
    "xgboost": ("gbtree", "dart"),
}
DEFAULT_MODEL_TYPE = {"sklearn": "random_forest", "xgboost": "gbtree"}
# Ensembles grow round by round, so they can checkpoint and resume part-way.
INCREMENTAL_MODEL_TYPES = ("random_forest", "gradient_boosting", "gbtree", "dart")


@dataclass(frozen=True)
class Hyperparameters:
    n_estimators: int = 100
    max_depth: int | None = None
    learning_rate: float = 0.1
    C: float = 1.0
    min_samples_leaf: int = 1
    subsample: float = 1.0
    max_iter: int = 1000


@dataclass(frozen=True)
class FeatureSchema:
    columns: list[str]
    numeric: list[str]
    categorical: list[str]


def infer_schema(frame: pd.DataFrame, label: str, exclude: list[str]) -> FeatureSchema:
    columns = [c for c in frame.columns if c != label and c not in exclude]
    numeric = [
        c
        for c in columns
        if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
    ]
    categorical = [c for c in columns if c not in numeric]
    return FeatureSchema(columns=columns, numeric=numeric, categorical=categorical)


def to_instances(frame: pd.DataFrame, schema: FeatureSchema) -> np.ndarray:
    """Rows as the serving image sees them: an object array, None where a value is missing."""
    values = frame[schema.columns].astype(object)
    return values.where(values.notna(), None).to_numpy()


def build_preprocessor(schema: FeatureSchema, scale: bool = True) -> ColumnTransformer:
    """Impute (+ scale) numeric columns, one-hot categorical ones; columns picked by position."""
    index = {name: i for i, name in enumerate(schema.columns)}
    numeric_steps: list[tuple[str, Any]] = [("impute", SimpleImputer(strategy="median"))]
    if scale:  # trees do not need it, and a booster's encoded inputs should stay readable
        numeric_steps.append(("scale", StandardScaler()))
    numeric = Pipeline(numeric_steps)
    categorical = Pipeline(
        [
            (
                "impute",
                SimpleImputer(missing_values=None, strategy="constant", fill_value="missing"),
            ),
            ("onehot", OneHotEncoder(handle_unknown="ignore")),
        ]
    )
    transformers = []
    if schema.numeric:
        transformers.append(("numeric", numeric, [index[c] for c in schema.numeric]))
    if schema.categorical:
        transformers.append(("categorical", categorical, [index[c] for c in schema.categorical]))
    return ColumnTransformer(transformers, sparse_threshold=0.0)


def encoded_feature_names(preprocessor: ColumnTransformer, schema: FeatureSchema) -> list[str]:
    """Names of the preprocessor's output columns: numeric names, then `column=category`."""
    names = list(schema.numeric)
    if schema.categorical:
        encoder = preprocessor.named_transformers_["categorical"].named_steps["onehot"]
        for column, categories in zip(schema.categorical, encoder.categories_):  # noqa: B905
            names.extend(f"{column}={category}" for category in categories)
    return names


def categories_of(preprocessor: ColumnTransformer, schema: FeatureSchema) -> dict[str, list]:
    if not schema.categorical:
        return {}
    encoder = preprocessor.named_transformers_["categorical"].named_steps["onehot"]
    pairs = zip(schema.categorical, encoder.categories_)  # noqa: B905 (runs on Python 3.9)
    return {column: [str(v) for v in values] for column, values in pairs}


def build_estimator(framework: str, model_type: str, params: Hyperparameters, seed: int) -> Any:
    if framework == "xgboost":
        from xgboost import XGBClassifier

        return XGBClassifier(
            booster=model_type,
            n_estimators=params.n_estimators,
            max_depth=params.max_depth or 6,
            learning_rate=params.learning_rate,
            subsample=params.subsample,
            random_state=seed,
            n_jobs=1,
        )
    if model_type == "random_forest":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(
            n_estimators=params.n_estimators,
            max_depth=params.max_depth,
            min_samples_leaf=params.min_samples_leaf,
            random_state=seed,
            warm_start=True,
            n_jobs=1,
        )
    if model_type == "gradient_boosting":
        from sklearn.ensemble import GradientBoostingClassifier

        return GradientBoostingClassifier(
            n_estimators=params.n_estimators,
            max_depth=params.max_depth or 3,
            learning_rate=params.learning_rate,
            subsample=params.subsample,
            min_samples_leaf=params.min_samples_leaf,
            random_state=seed,
            warm_start=True,
        )
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=params.C, max_iter=params.max_iter, random_state=seed)


def rounds_done(estimator: Any, framework: str) -> int:
    if framework == "xgboost":
        try:
            return estimator.get_booster().num_boosted_rounds()
        except Exception:  # not fitted yet
            return 0
    return len(getattr(estimator, "estimators_", []))


def train_in_rounds(
    pipeline: Pipeline,
    instances: np.ndarray,
    labels: np.ndarray,
    framework: str,
    model_type: str,
    total_rounds: int,
    chunk: int,
    on_checkpoint: Callable[[Pipeline, int], None],
) -> Pipeline:
    """Fits the estimator `chunk` rounds at a time, calling `on_checkpoint` after each chunk.

    The preprocessor is fitted once (it is deterministic); a pipeline restored from a checkpoint
    arrives here with its rounds already done and continues from there.
    """
    preprocessor, estimator = pipeline.steps[0][1], pipeline.steps[-1][1]
    if not hasattr(preprocessor, "transformers_"):
        preprocessor.fit(instances)
    features = preprocessor.transform(instances)
    if model_type not in INCREMENTAL_MODEL_TYPES:
        estimator.fit(features, labels)
        on_checkpoint(pipeline, 1)
        return pipeline
    done = rounds_done(estimator, framework)
    while done < total_rounds:
        target = min(total_rounds, done + chunk)
        if framework == "xgboost":
            previous = estimator.get_booster() if done else None
            estimator.set_params(n_estimators=target - done)
            estimator.fit(features, labels, xgb_model=previous)
        else:
            estimator.set_params(n_estimators=target)
            estimator.fit(features, labels)
        done = rounds_done(estimator, framework)
        on_checkpoint(pipeline, done)
    if framework == "xgboost":
        estimator.set_params(n_estimators=done)  # the booster holds every round
    return pipeline


def default_chunk(total_rounds: int) -> int:
    return max(1, math.ceil(total_rounds / 10))
