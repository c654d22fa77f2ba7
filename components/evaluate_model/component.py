"""evaluate_model: metrics of a Model Registry version on the test split, as it will serve."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from google_cloud_pipeline_components.types.artifact_types import VertexModel
from kfp.dsl import HTML, ClassificationMetrics, Dataset, Input, Metrics, Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def evaluate_model(
    model: Input[VertexModel],
    test_data: Input[Dataset],
    metrics: Output[Metrics],
    classification_metrics: Output[ClassificationMetrics],
    report: Output[HTML],
    gcp_resources: OutputPath(str),
    label_column: str = "species",
    task: str = "classification",
    data_format: str = "",
    project: str = "",
    location: str = "us-central1",
):
    """Predicts the test split with the uploaded version and records the metrics.

    Predictions come from the version's artifact loaded the way its prebuilt serving image loads
    it, through the same predict call. Metrics: classification (accuracy, precision, recall, F1,
    log loss, ROC AUC, PR AUC, confusion matrix) or regression (RMSE, MAE, MAPE, R2). They are
    written as KFP Metrics/ClassificationMetrics, as an HTML report with plots, and imported into
    the Model Registry as the version's evaluation (what compare_models reads).

    Args:
        model: The VertexModel from upload_model (resourceName with @version).
        test_data: Test split (`uri` gs:// file, directory or glob of Parquet/CSV/JSONL).
        label_column: The column holding the true label or target.
        task: classification or regression.
        data_format: parquet, csv or jsonl; empty means by file extension.
        project: Google Cloud project; empty means GOOGLE_CLOUD_PROJECT.
        location: Vertex AI region.

    Returns:
        metrics: Scalar metrics, named as in Vertex's evaluation schemas (f1Score, logLoss,
            auRoc, auPrc, rootMeanSquaredError, ...) plus accuracy, precision, recall.
        classification_metrics: Confusion matrix and ROC curve (classification only).
        report: HTML report with the metrics and plots.
        gcp_resources: GCPC GcpResources JSON naming the imported ModelEvaluation.
    """
    from vertexkit.context import CloudContext
    from vertexkit.runtime.evaluation import evaluate_model as run_evaluation
    from vertexkit.runtime.kfp_outputs import write_json

    evaluation, html = run_evaluation(
        CloudContext.from_env(project or None, location or None),
        model.metadata["resourceName"],
        test_data.uri,
        label_column,
        task,
        data_format,
        gcp_resources,
    )
    for name, value in evaluation.metrics.items():
        metrics.log_metric(name, value)
    if evaluation.confusion_matrix:
        classification_metrics.log_confusion_matrix(evaluation.classes, evaluation.confusion_matrix)
    if evaluation.roc_curve:
        curve = evaluation.roc_curve
        classification_metrics.log_roc_curve(curve["fpr"], curve["tpr"], curve["thresholds"])
    with open(report.path, "w") as handle:
        handle.write(html)
    write_json(metrics.path, evaluation.metrics)
    write_json(classification_metrics.path, classification_metrics.metadata)
