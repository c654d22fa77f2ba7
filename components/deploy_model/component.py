"""deploy_model: a Model Registry version onto an endpoint, all traffic or a canary."""

# No `from __future__ import annotations`: KFP reads the parameter annotations as real types.
from google_cloud_pipeline_components.types.artifact_types import VertexEndpoint, VertexModel
from kfp.dsl import Input, Output, OutputPath

from vertexkit.components._base import vertexkit_component


@vertexkit_component
def deploy_model(
    model: Input[VertexModel],
    endpoint_display_name: str,
    endpoint: Output[VertexEndpoint],
    gcp_resources: OutputPath(str),
    deployed_model_display_name: str = "",
    machine_type: str = "n1-standard-2",
    accelerator_type: str = "",
    accelerator_count: int = 0,
    min_replica_count: int = 1,
    max_replica_count: int = 1,
    automatic_resources: bool = False,
    traffic_percentage: int = 100,
    undeploy_superseded: bool = True,
    service_account: str = "",
    project: str = "",
    location: str = "us-central1",
):
    """Gets or creates the endpoint by display name and deploys the model version to it.

    The new version gets `traffic_percentage` of the traffic; the models already deployed share
    the rest in proportion. Other versions of the same model left with no traffic are undeployed.
    The endpoint and the deploy operation go to `gcp_resources`; a retry resumes them.

    Args:
        model: The VertexModel to deploy (resourceName with @version).
        endpoint_display_name: Endpoint to use; created when none has this display name.
        deployed_model_display_name: Display name of the deployment; empty uses the model ID.
        machine_type: Serving machine (dedicated resources), e.g. n1-standard-2.
        accelerator_type: GPU per replica, e.g. NVIDIA_TESLA_T4; empty for none.
        accelerator_count: GPUs per replica.
        min_replica_count: Minimum serving replicas (>= 1).
        max_replica_count: Maximum serving replicas (>= min_replica_count).
        automatic_resources: Use automatic resources instead of a machine type (models that
            support it only).
        traffic_percentage: Share of traffic for this version, 0..100; 100 replaces the others,
            less is a canary.
        undeploy_superseded: Undeploy other versions of this model that are left with 0 %.
        service_account: Service account the deployed model runs as.
        project: Google Cloud project; empty means GOOGLE_CLOUD_PROJECT.
        location: Vertex AI region.

    Returns:
        endpoint: VertexEndpoint (metadata resourceName `projects/.../endpoints/ID`).
        gcp_resources: GCPC GcpResources JSON naming the endpoint and the deploy operation.
    """
    from vertexkit.context import CloudContext
    from vertexkit.runtime.deployment import DeployConfig
    from vertexkit.runtime.deployment import deploy_model as run_deploy

    ctx = CloudContext.from_env(project or None, location or None)
    deployment = run_deploy(
        ctx,
        DeployConfig(
            endpoint_display_name=endpoint_display_name,
            model=model.metadata["resourceName"],
            deployed_model_display_name=deployed_model_display_name,
            machine_type=machine_type,
            accelerator_type=accelerator_type,
            accelerator_count=accelerator_count,
            min_replica_count=min_replica_count,
            max_replica_count=max_replica_count,
            automatic_resources=automatic_resources,
            traffic_percentage=traffic_percentage,
            undeploy_superseded=undeploy_superseded,
            service_account=service_account,
        ),
        gcp_resources,
    )
    endpoint.uri = deployment.uri(ctx.region)
    endpoint.metadata["resourceName"] = deployment.endpoint_name
    endpoint.metadata["deployedModelId"] = deployment.deployed_model_id
    endpoint.metadata["trafficSplit"] = deployment.traffic_split
