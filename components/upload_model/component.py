"""upload_model: a model directory into the Vertex AI Model Registry."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from google_cloud_pipeline_components.types.artifact_types import VertexModel
from kfp.dsl import Input, Model, Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def upload_model(
    display_name: str,
    model_dir: Input[Model],
    model: Output[VertexModel],
    gcp_resources: OutputPath(str),
    project: str = "",
    location: str = "us-central1",
    serving_image_uri: str = "",
    framework: str = "sklearn",
    framework_version: str = "",
    serving_command: list = [],  # noqa: B006 (KFP defaults are data, never mutated)
    serving_args: list = [],  # noqa: B006
    serving_env: dict = {},  # noqa: B006
    serving_port: int = 0,
    predict_route: str = "",
    health_route: str = "",
    description: str = "",
    version_description: str = "",
    labels: dict = {},  # noqa: B006
    version_aliases: list = [],  # noqa: B006
    is_default_version: bool = False,
):
    """Uploads `model_dir` as a new Model, or as a new version of the model with this display name.

    The upload operation goes to `gcp_resources` as soon as it starts; a retried task waits for
    that operation instead of uploading a second version.

    Args:
        display_name: The model's display name; an existing model with this name gets a new
            version (Vertex `parent_model`), else a new model is created.
        model_dir: The trained model directory (`uri` gs://...), e.g. custom_training_job's model.
        project: Google Cloud project; empty means GOOGLE_CLOUD_PROJECT.
        location: Vertex AI region.
        serving_image_uri: A serving container image; empty picks Vertex's prebuilt prediction
            image for `framework` and `framework_version`.
        framework: sklearn, xgboost or tensorflow, for the prebuilt prediction image.
        framework_version: e.g. "1.5"; empty means the newest listed.
        serving_command: Custom container command, e.g. ["python", "-m", "server"].
        serving_args: Custom container arguments.
        serving_env: Custom container environment variables.
        serving_port: Port the custom container listens on (AIP_HTTP_PORT); 0 for Vertex's 8080.
        predict_route: Custom container predict path (AIP_PREDICT_ROUTE).
        health_route: Custom container health path (AIP_HEALTH_ROUTE).
        description: The model's description.
        version_description: This version's description.
        labels: Labels on the model.
        version_aliases: Aliases for this version (not `default`; see is_default_version).
        is_default_version: Move the `default` alias to this version now. Leave False to let
            compare_models decide; the first version of a model is always the default.

    Returns:
        model: VertexModel whose metadata resourceName is `projects/.../models/ID@VERSION`.
        gcp_resources: GCPC GcpResources JSON naming the upload operation.
    """
    from vertexkit.context import CloudContext
    from vertexkit.runtime.models import UploadConfig
    from vertexkit.runtime.models import upload_model as run_upload

    ctx = CloudContext.from_env(project or None, location or None)
    uploaded = run_upload(
        ctx,
        UploadConfig(
            display_name=display_name,
            artifact_uri=model_dir.uri,
            serving_image_uri=serving_image_uri,
            framework=framework,
            framework_version=framework_version,
            serving_command=serving_command,
            serving_args=serving_args,
            serving_env=serving_env,
            serving_port=serving_port,
            predict_route=predict_route,
            health_route=health_route,
            description=description,
            version_description=version_description,
            labels=labels,
            version_aliases=version_aliases,
            is_default_version=is_default_version,
        ),
        gcp_resources,
    )
    model.uri = uploaded.uri(ctx.region)
    model.metadata["resourceName"] = uploaded.versioned_name
