"""compare_models: challenger version vs the current default version (the champion)."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from google_cloud_pipeline_components.types.artifact_types import VertexModel
from kfp.dsl import Input, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def compare_models(
    challenger: Input[VertexModel],
    gcp_resources: OutputPath(str),
    reason: OutputPath(str),
    champion: OutputPath(str),
    metric: str = "accuracy",
    direction: str = "maximize",
    min_improvement: float = 0.0,
    promote: bool = True,
    project: str = "",
    location: str = "us-central1",
) -> bool:
    """Compares the challenger version with the model's `default` version on one metric.

    Both values come from each version's imported evaluation (evaluate_model). The challenger
    wins when it improves the metric in `direction` by at least `min_improvement` (and at all);
    it then becomes `default` (mergeVersionAliases). With no champion yet, the challenger wins.

    Args:
        challenger: The VertexModel from upload_model (resourceName with @version).
        metric: Metric to compare: accuracy, precision, recall, f1 (f1Score), log_loss
            (logLoss), roc_auc (auRoc), pr_auc (auPrc), rmse, mae, mape, r2, or another scalar
            of Vertex's classification or regression metrics schema.
        direction: maximize or minimize.
        min_improvement: Smallest improvement that promotes (>= 0, in the metric's units).
        promote: Move `default` to the challenger when it wins; False only reports.
        project: Google Cloud project; empty means GOOGLE_CLOUD_PROJECT.
        location: Vertex AI region.

    The decision is the component's return value (`task.outputs["Output"]`, a bool), so it can
    drive `dsl.If` on every runner (kfp.local resolves conditions on the `Output` key only).

    Returns:
        Output: Whether the challenger won (and, with promote, is now default).
        reason: The decision in words, with both values.
        champion: The versioned name of the champion it was compared with.
        gcp_resources: GCPC GcpResources JSON (empty: nothing is created).
    """
    from vertexkit.context import CloudContext
    from vertexkit.runtime.gcp_resources import write_empty
    from vertexkit.runtime.models import compare_and_promote

    write_empty(gcp_resources)
    result = compare_and_promote(
        CloudContext.from_env(project or None, location or None),
        challenger.metadata["resourceName"],
        metric,
        direction,
        min_improvement,
        promote,
    )
    print(result.reason)
    with open(reason, "w") as handle:
        handle.write(result.reason)
    with open(champion, "w") as handle:
        handle.write(result.champion)
    return result.promoted
