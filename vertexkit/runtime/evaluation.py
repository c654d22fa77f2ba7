"""Evaluating a Model Registry version on the test split, the way the model will serve.

The version's artifact is loaded with the same rules its prebuilt serving image applies
(`vertexkit.runtime.prebuilt`), predictions come from the same `predict()` call, and the metrics go
three places: KFP metrics artifacts (drawn by the Vertex console), an HTML report with plots, and
the Model Registry as the version's ModelEvaluation (what `compare_models` reads).
"""

from __future__ import annotations

import base64
import io
import json
import logging
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vertexkit.context import CloudContext
from vertexkit.runtime import gcs_io
from vertexkit.runtime.gapic import aiplatform_v1
from vertexkit.runtime.gcp_resources import find_vertex_resource, record_vertex_resource
from vertexkit.runtime.prebuilt import load_prebuilt
from vertexkit.specs import SpecError
from vertexkit.specs.inputs import check_component_inputs

if TYPE_CHECKING:  # numpy and pandas load when a function needs them, not on import
    import numpy as np
    import pandas as pd

log = logging.getLogger(__name__)

SCHEMA_ROOT = "gs://google-cloud-aiplatform/schema/modelevaluation/"
METRICS_SCHEMAS = {
    "classification": SCHEMA_ROOT + "classification_metrics_1.0.0.yaml",
    "regression": SCHEMA_ROOT + "regression_metrics_1.0.0.yaml",
}
DATA_FORMATS = {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl"}
EVALUATION_RESOURCE_TYPE = "ModelEvaluation"


@dataclass
class Evaluation:
    task: str
    metrics: dict[str, float]
    classes: list[str] = field(default_factory=list)
    confusion_matrix: list[list[int]] = field(default_factory=list)
    roc_curve: dict[str, list[float]] = field(default_factory=dict)
    pr_curve: dict[str, list[float]] = field(default_factory=dict)
    residuals: list[float] = field(default_factory=list)
    predictions: list[float] = field(default_factory=list)
    row_count: int = 0


# ---------------------------------------------------------------- inputs


def read_table(ctx: CloudContext, uri: str, data_format: str = "") -> pd.DataFrame:
    """A gs:// file, directory or `*` glob of Parquet/CSV/JSONL as one DataFrame."""
    import pandas as pd

    fs = ctx.gcs_filesystem()
    if "*" in uri:
        paths = sorted(fs.glob(uri))
    elif fs.isdir(uri):
        paths = sorted(p for p in fs.find(uri) if not p.endswith("/"))
    else:
        paths = [uri]
    if not paths:
        raise SpecError("test_data", f"no files match {uri}")
    frames = []
    for path in paths:
        kind = data_format or DATA_FORMATS.get(Path(path).suffix.lower())
        if kind is None:
            raise SpecError(
                "data_format", f"cannot tell the format of {path}; give one of parquet, csv, jsonl"
            )
        with fs.open(path, "rb") as handle:
            if kind == "parquet":
                frames.append(pd.read_parquet(handle))
            elif kind == "csv":
                frames.append(pd.read_csv(handle))
            else:
                frames.append(pd.read_json(handle, lines=True))
    return pd.concat(frames, ignore_index=True)


def _instances(frame: pd.DataFrame, columns: list[str]) -> list[list[Any]]:
    # JSON has no NaN: a serving request carries null, so the model sees None.
    rows = frame[columns].astype(object).where(frame[columns].notna(), None)
    return rows.values.tolist()


def feature_columns(model_dir: Path, frame: pd.DataFrame, label_column: str) -> list[str]:
    recorded = model_dir / "feature_columns.json"
    if recorded.is_file():
        columns = json.loads(recorded.read_text())
        missing = [c for c in columns if c not in frame.columns]
        if not missing:
            return columns
        log.info("feature_columns.json names encoded columns %s: using raw columns", missing[:3])
        metadata = model_dir / "model_metadata.json"
        if metadata.is_file():
            return json.loads(metadata.read_text())["raw_feature_columns"]
    return [c for c in frame.columns if c != label_column]


# ---------------------------------------------------------------- metrics


def classification_metrics(
    y_true: list[Any], y_pred: list[Any], probabilities: np.ndarray | None, classes: list[Any]
) -> Evaluation:
    import numpy as np
    from sklearn import metrics as m

    truth = np.asarray([str(v) for v in y_true])
    predicted = np.asarray([str(v) for v in y_pred])
    labels = [str(c) for c in classes]
    average = "binary" if len(labels) == 2 else "macro"
    positive = {"pos_label": labels[1]} if average == "binary" else {}
    scores = {
        "accuracy": m.accuracy_score(truth, predicted),
        "precision": m.precision_score(
            truth, predicted, average=average, zero_division=0, **positive
        ),
        "recall": m.recall_score(truth, predicted, average=average, zero_division=0, **positive),
        "f1Score": m.f1_score(truth, predicted, average=average, zero_division=0, **positive),
    }
    evaluation = Evaluation("classification", {}, classes=labels, row_count=len(truth))
    evaluation.confusion_matrix = m.confusion_matrix(truth, predicted, labels=labels).tolist()
    if probabilities is not None:
        onehot = (truth[:, None] == np.asarray(labels)[None, :]).astype(int)
        scores["logLoss"] = m.log_loss(truth, probabilities, labels=labels)
        if len(labels) == 2:
            scores["auRoc"] = m.roc_auc_score(onehot[:, 1], probabilities[:, 1])
            scores["auPrc"] = m.average_precision_score(onehot[:, 1], probabilities[:, 1])
            flat_truth, flat_scores = onehot[:, 1], probabilities[:, 1]
        else:  # one-vs-rest, macro-averaged, as Vertex reports multi-class AUCs
            scores["auRoc"] = m.roc_auc_score(
                onehot, probabilities, average="macro", multi_class="ovr"
            )
            scores["auPrc"] = m.average_precision_score(onehot, probabilities, average="macro")
            flat_truth, flat_scores = onehot.ravel(), probabilities.ravel()  # micro curves
        fpr, tpr, thresholds = m.roc_curve(flat_truth, flat_scores)
        precision, recall, _ = m.precision_recall_curve(flat_truth, flat_scores)
        finite = np.clip(thresholds, 0.0, 1.0)  # sklearn's first threshold is +inf
        evaluation.roc_curve = {
            "fpr": fpr.tolist(),
            "tpr": tpr.tolist(),
            "thresholds": finite.tolist(),
        }
        evaluation.pr_curve = {"precision": precision.tolist(), "recall": recall.tolist()}
    evaluation.metrics = {k: float(v) for k, v in scores.items()}
    return evaluation


def regression_metrics(y_true: list[float], y_pred: list[float]) -> Evaluation:
    import numpy as np
    from sklearn import metrics as m

    truth = np.asarray(y_true, dtype=float)
    predicted = np.asarray(y_pred, dtype=float).reshape(len(truth))
    scores = {
        "rootMeanSquaredError": math.sqrt(m.mean_squared_error(truth, predicted)),
        "meanAbsoluteError": m.mean_absolute_error(truth, predicted),
        "meanAbsolutePercentageError": 100.0 * m.mean_absolute_percentage_error(truth, predicted),
        "rSquared": m.r2_score(truth, predicted),
    }
    return Evaluation(
        "regression",
        {k: float(v) for k, v in scores.items()},
        residuals=(truth - predicted).tolist(),
        predictions=predicted.tolist(),
        row_count=len(truth),
    )


def _class_outputs(predictor: Any, instances: list[list[Any]], raw: list[Any], truth: list[Any]):
    """Labels as served, and probabilities where the model can give them."""
    import numpy as np

    model = getattr(predictor, "model", None)
    if raw and isinstance(raw[0], list):  # a booster answering class probabilities
        classes = sorted({str(v) for v in truth})
        probabilities = np.asarray(raw, dtype=float)
        return [classes[i] for i in probabilities.argmax(axis=1)], probabilities, classes
    if model is not None and hasattr(model, "predict_proba") and hasattr(model, "classes_"):
        # Labels come from the served predict(); probabilities from the same loaded model.
        from vertexkit.runtime.prebuilt import feature_matrix

        features = feature_matrix(instances, None, "scikit-learn", numeric=False)
        return raw, np.asarray(model.predict_proba(features)), [str(c) for c in model.classes_]
    return raw, None, sorted({str(v) for v in [*truth, *raw]})


def evaluate_frame(
    predictor: Any, frame: pd.DataFrame, columns: list[str], label_column: str, task: str
) -> Evaluation:
    if label_column not in frame.columns:
        raise SpecError("label_column", f"{label_column!r} is not a column of the test data")
    instances = _instances(frame, columns)
    truth = frame[label_column].tolist()
    served = predictor.predict(instances)
    if task == "regression":
        return regression_metrics(truth, [p[0] if isinstance(p, list) else p for p in served])
    labels, probabilities, classes = _class_outputs(predictor, instances, served, truth)
    return classification_metrics(truth, labels, probabilities, classes)


# ---------------------------------------------------------------- registry


def registry_metrics(evaluation: Evaluation) -> dict[str, Any]:
    """The evaluation in Vertex's metrics-schema field names (plus our extra scalars)."""
    metrics: dict[str, Any] = dict(evaluation.metrics)
    if evaluation.task == "classification":
        metrics["confusionMatrix"] = {
            "annotationSpecs": [{"displayName": c} for c in evaluation.classes],
            "rows": [[float(v) for v in row] for row in evaluation.confusion_matrix],
        }
    if evaluation.task == "classification" and evaluation.roc_curve:
        metrics["confidenceMetrics"] = confidence_metrics(evaluation.roc_curve)
    return metrics


def confidence_metrics(roc: dict[str, list[float]], most: int = 200) -> list[dict[str, float]]:
    """The ROC curve as Vertex's classification schema lists it (at most `most` points, the
    first and the last always kept): what the console's model page draws."""
    count = len(roc["fpr"])
    step = max(1, -(-count // most))
    keep = sorted({*range(0, count, step), count - 1})
    return [
        {
            "confidenceThreshold": float(roc["thresholds"][i]),
            "recall": float(roc["tpr"][i]),
            "falsePositiveRate": float(roc["fpr"][i]),
        }
        for i in keep
    ]


def import_evaluation(
    ctx: CloudContext, model: str, evaluation: Evaluation, gcp_resources: str | None
) -> str:
    """Imports the evaluation as the version's ModelEvaluation (once, even on a retry)."""
    existing = find_vertex_resource(gcp_resources, EVALUATION_RESOURCE_TYPE)
    if existing:
        return existing
    body = {
        "displayName": f"vertexkit-{evaluation.task}",
        "metricsSchemaUri": METRICS_SCHEMAS[evaluation.task],
        "metrics": registry_metrics(evaluation),
    }
    message = aiplatform_v1.ModelEvaluation.from_json(json.dumps(body))
    created = ctx.model_client().import_model_evaluation(parent=model, model_evaluation=message)
    record_vertex_resource(gcp_resources, EVALUATION_RESOURCE_TYPE, ctx.region, created.name)
    return created.name


# ---------------------------------------------------------------- report


def _figure_png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode()


def _plots(evaluation: Evaluation) -> list[tuple[str, str]]:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots = []
    if evaluation.task == "classification":
        fig, ax = plt.subplots(figsize=(4.5, 4))
        ax.imshow(evaluation.confusion_matrix, cmap="Blues")
        ax.set_xticks(range(len(evaluation.classes)), evaluation.classes, rotation=45)
        ax.set_yticks(range(len(evaluation.classes)), evaluation.classes)
        for (i, j), value in np.ndenumerate(np.asarray(evaluation.confusion_matrix)):
            ax.text(j, i, str(value), ha="center", va="center")
        ax.set(xlabel="predicted", ylabel="actual", title="Confusion matrix")
        plots.append(("Confusion matrix", _figure_png(fig)))
        if evaluation.roc_curve:
            fig, ax = plt.subplots(figsize=(4.5, 4))
            ax.plot(evaluation.roc_curve["fpr"], evaluation.roc_curve["tpr"])
            ax.plot([0, 1], [0, 1], linestyle="--", color="grey")
            ax.set(xlabel="false positive rate", ylabel="true positive rate", title="ROC curve")
            plots.append(("ROC curve", _figure_png(fig)))
            fig, ax = plt.subplots(figsize=(4.5, 4))
            ax.plot(evaluation.pr_curve["recall"], evaluation.pr_curve["precision"])
            ax.set(xlabel="recall", ylabel="precision", title="Precision-recall curve")
            plots.append(("Precision-recall curve", _figure_png(fig)))
    else:
        fig, ax = plt.subplots(figsize=(4.5, 4))
        ax.scatter(evaluation.predictions, evaluation.residuals, s=8)
        ax.axhline(0, color="grey", linestyle="--")
        ax.set(xlabel="predicted", ylabel="actual - predicted", title="Residuals")
        plots.append(("Residuals", _figure_png(fig)))
    plt.close("all")
    return plots


def html_report(evaluation: Evaluation, model: str) -> str:
    rows = "".join(
        f"<tr><td>{name}</td><td>{value:.4f}</td></tr>"
        for name, value in evaluation.metrics.items()
    )
    images = "".join(
        f'<figure><img alt="{title}" src="data:image/png;base64,{png}"><figcaption>{title}'
        "</figcaption></figure>"
        for title, png in _plots(evaluation)
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Model evaluation</title>"
        "<style>body{font-family:sans-serif}td{padding:2px 12px}figure{display:inline-block}"
        "</style></head><body>"
        f"<h1>Model evaluation</h1><p>{model} &middot; {evaluation.task} &middot; "
        f"{evaluation.row_count} test rows</p><table>{rows}</table>{images}</body></html>"
    )


# ---------------------------------------------------------------- the one entry point


def evaluate_model(
    ctx: CloudContext,
    model: str,
    test_data_uri: str,
    label_column: str,
    task: str = "classification",
    data_format: str = "",
    gcp_resources: str | None = None,
) -> tuple[Evaluation, str]:
    """Predicts the test split with the version as served; returns metrics and the HTML report.

    `model` is a versioned model name (`projects/.../models/ID@VERSION`). The evaluation is also
    imported into the Model Registry under that version.
    """
    check_component_inputs("evaluate_model", {"task": task})
    if "@" not in model:
        raise SpecError("model", f"expected a versioned model name (...@VERSION), got {model!r}")
    registered = ctx.model_client().get_model(name=model)
    frame = read_table(ctx, test_data_uri, data_format)
    with tempfile.TemporaryDirectory() as scratch:
        model_dir = Path(scratch)
        gcs_io.download_prefix(ctx, registered.artifact_uri, model_dir)
        predictor = load_prebuilt(
            registered.container_spec.image_uri, model_dir, registered.artifact_uri
        )
        columns = feature_columns(model_dir, frame, label_column)
        evaluation = evaluate_frame(predictor, frame, columns, label_column, task)
    import_evaluation(ctx, model, evaluation, gcp_resources)
    return evaluation, html_report(evaluation, model)
