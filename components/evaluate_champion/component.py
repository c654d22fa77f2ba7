"""evaluate_champion: the serving (default) version scored on the challenger's test window."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from kfp.dsl import Dataset, Input, Metrics, Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def evaluate_champion(
    model_display_name: str,
    test_data: Input[Dataset],
    metrics: Output[Metrics],
    champion: OutputPath(str),
    gcp_resources: OutputPath(str),
    label_column: str = "species",
    task: str = "classification",
    project: str = "",
    location: str = "us-central1",
):
    """Evaluates the model's current `default` version on `test_data`, as evaluate_model does.

    The evaluation is imported into the Model Registry as the champion's newest, so
    compare_models then compares champion and challenger on identical rows. Run it before the
    challenger is uploaded. No model with this display name yet: nothing is evaluated.

    Args:
        model_display_name: The model whose default version is the champion.
        test_data: The test window (`uri` gs:// file, directory or glob).
        label_column: The column holding the true label or target.
        task: classification or regression.
        project: Google Cloud project; empty means GOOGLE_CLOUD_PROJECT.
        location: Vertex AI region.

    Returns:
        metrics: The champion's metrics on the window (empty without a champion).
        champion: The champion's versioned name (`...models/ID@VERSION`), or empty.
        gcp_resources: GCPC GcpResources JSON naming the imported ModelEvaluation.
    """
    from vertexkit.context import CloudContext
    from vertexkit.runtime.gcp_resources import write_empty
    from vertexkit.runtime.kfp_outputs import write_json
    from vertexkit.runtime.retraining import evaluate_champion as run_evaluation

    write_empty(gcp_resources)
    name, values = run_evaluation(
        CloudContext.from_env(project or None, location or None),
        model_display_name,
        test_data.uri,
        label_column,
        task,
        gcp_resources,
    )
    print(f"champion {name or '(none)'}: {values}")
    for key, value in values.items():
        metrics.log_metric(key, value)
    write_json(metrics.path, values)
    with open(champion, "w") as handle:
        handle.write(name)
