"""Every serving field of a Model upload (`containerSpec`), a deploy (`DeployedModel`) and a batch
prediction job (`generateExplanation`) has a local meaning: honoured, noted as having no local
effect, or refused with a 400 naming it before anything is created. Through the real
`google.cloud.aiplatform` SDK and GAPIC clients against the local cloud."""

# ruff: noqa: F811

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import requests
from google.api_core import exceptions
from google.cloud import aiplatform, aiplatform_v1
from google.protobuf import json_format
from google.protobuf.struct_pb2 import Value
from sklearn.linear_model import LinearRegression

from tests.vertex_registry_test import (  # noqa: F401 (fixtures)
    BUCKET,
    REPO_ROOT,
    artifact,
    classifier,
    penguins,
    sdk,
    storage_of,
    upload,
    write_artifact,
)
from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud

MACHINE = "n1-standard-2"
CUSTOM_IMAGE = "europe-docker.pkg.dev/my-project/serving/penguins:1"
SERVER = ["python", "-m", "trainers.custom_serving"]
INSTANCE = [39.1, 18.7, 181.0, 3750.0]  # an Adelie penguin
FAIL = [sys.executable, "-c", "raise SystemExit(1)"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def custom(artifact_uri: str, **kwargs: Any) -> aiplatform.Model:
    return upload(
        artifact_uri,
        display_name="custom-serving",
        serving_container_image_uri=CUSTOM_IMAGE,
        serving_container_command=SERVER,
        serving_container_environment_variables={"PYTHONPATH": str(REPO_ROOT)},
        serving_container_predict_route="/predict",
        serving_container_health_route="/health",
        **kwargs,
    )


def gapic_upload(ctx: CloudContext, artifact_uri: str, container: dict[str, Any]) -> str:
    """A custom-container Model uploaded through the GAPIC client (for probe kinds the SDK's
    upload cannot send); its resource name."""
    spec = {"imageUri": CUSTOM_IMAGE, "command": SERVER, "predictRoute": "/predict",
            "healthRoute": "/health", "env": [{"name": "PYTHONPATH", "value": str(REPO_ROOT)}],
            **container}  # fmt: skip
    model = {"displayName": "gapic-serving", "artifactUri": artifact_uri, "containerSpec": spec}
    operation = ctx.model_client().upload_model(
        parent=ctx.parent, model=aiplatform_v1.Model.from_json(json.dumps(model))
    )
    return operation.result().model


def model_count() -> int:
    return len(aiplatform.Model.list())


# -- ports -------------------------------------------------------------------------------------
def test_declared_port_is_the_serving_port_and_a_taken_one_fails_the_deploy(
    sdk: CloudContext, artifact: str
) -> None:
    # ModelContainerSpec.ports: "Vertex AI sends any prediction requests that it receives to the
    # first port on this list" (and sets AIP_HTTP_PORT to it).
    port = free_port()
    model = custom(artifact, serving_container_ports=[port])
    endpoint = model.deploy(machine_type=MACHINE)
    assert requests.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200
    assert endpoint.predict(instances=[INSTANCE]).predictions == ["Adelie"]
    endpoint.undeploy_all()

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = custom(artifact, serving_container_ports=[taken.getsockname()[1]])
        target = aiplatform.Endpoint.create(display_name="busy-port")
        with pytest.raises(exceptions.GoogleAPICallError, match=r"ports\[0\].containerPort"):
            busy.deploy(endpoint=target, machine_type=MACHINE)
    assert aiplatform.Endpoint(target.resource_name).list_models() == []


# -- probes and the deployment timeout ---------------------------------------------------------
def test_a_failing_startup_probe_fails_the_deploy(sdk: CloudContext, artifact: str) -> None:
    # Probe.failureThreshold "Defaults to 3": three failed tries a period (1 s) apart.
    model = custom(
        artifact,
        serving_container_startup_probe_exec=FAIL,
        serving_container_startup_probe_period_seconds=1,
    )
    endpoint = aiplatform.Endpoint.create(display_name="failing-probe")
    with pytest.raises(exceptions.GoogleAPICallError, match="startupProbe failed 3 times"):
        model.deploy(endpoint=endpoint, machine_type=MACHINE)
    assert aiplatform.Endpoint(endpoint.resource_name).list_models() == []


def test_http_and_tcp_probes_pass_on_the_declared_port(sdk: CloudContext, artifact: str) -> None:
    port = free_port()
    name = gapic_upload(
        sdk,
        artifact,
        {
            "ports": [{"containerPort": port}],
            # The server imports scikit-learn first: a second a try, up to 30 tries.
            "startupProbe": {
                "tcpSocket": {"port": port},
                "periodSeconds": 1,
                "failureThreshold": 30,
            },
            "healthProbe": {"httpGet": {"path": "/health", "port": port}, "periodSeconds": 1},
        },
    )
    endpoint = aiplatform.Model(name).deploy(machine_type=MACHINE)
    assert endpoint.predict(instances=[INSTANCE]).predictions == ["Adelie"]
    endpoint.undeploy_all()


def test_deployment_timeout_fails_a_container_never_ready(sdk: CloudContext, artifact: str) -> None:
    model = upload(
        artifact,
        serving_container_image_uri=CUSTOM_IMAGE,
        serving_container_command=[sys.executable, "-c", "import time; time.sleep(60)"],
        serving_container_deployment_timeout=1,
    )
    endpoint = aiplatform.Endpoint.create(display_name="slow")
    with pytest.raises(exceptions.GoogleAPICallError, match="deploymentTimeout"):
        model.deploy(endpoint=endpoint, machine_type=MACHINE)
    assert aiplatform.Endpoint(endpoint.resource_name).list_models() == []


# -- refusals ----------------------------------------------------------------------------------
def test_fields_the_local_cloud_cannot_serve_are_refused_at_upload(
    sdk: CloudContext, artifact: str
) -> None:
    before = model_count()
    with pytest.raises(exceptions.BadRequest, match=r"containerSpec\.grpcPorts"):
        custom(artifact, serving_container_grpc_ports=[8500])
    with pytest.raises(exceptions.BadRequest, match=r"containerSpec\.invokeRoutePrefix"):
        upload(
            artifact,
            serving_container_image_uri=CUSTOM_IMAGE,
            serving_container_command=SERVER,
            serving_container_invoke_route_prefix="/*",
        )
    for probe, field in (
        ({"grpc": {"port": 8080}}, "startupProbe.grpc"),
        ({"httpGet": {"path": "/", "host": "example.com"}}, "healthProbe.httpGet.host"),
    ):
        kind = field.split(".")[0]
        with pytest.raises(exceptions.BadRequest, match=field):
            gapic_upload(sdk, artifact, {kind: probe})
    assert model_count() == before


# -- no local effect, said in the deploy operation ---------------------------------------------
def test_replica_and_spot_fields_are_noted_in_the_deploy_operation(
    sdk: CloudContext, artifact: str
) -> None:
    model = upload(artifact, serving_container_shared_memory_size_mb=256)
    endpoint = aiplatform.Endpoint.create(display_name="noted")
    deployed = {
        "model": model.resource_name,
        "dedicatedResources": {
            "machineSpec": {"machineType": MACHINE},
            "minReplicaCount": 2,
            "maxReplicaCount": 4,
            "spot": True,
        },
    }
    operation = sdk.endpoint_client().deploy_model(
        endpoint=endpoint.resource_name,
        deployed_model=aiplatform_v1.DeployedModel.from_json(json.dumps(deployed)),
        traffic_split={"0": 100},
    )
    operation.result()
    notes = [f.message for f in operation.metadata.generic_metadata.partial_failures]
    for field in ("minReplicaCount", "maxReplicaCount", "spot", "sharedMemorySizeMb"):
        assert any(field in note for note in notes), (field, notes)
    assert endpoint.predict(instances=[INSTANCE]).predictions == ["Adelie"]
    endpoint.undeploy_all()


# -- batch prediction explanations -------------------------------------------------------------
REGRESSION_FEATURES = slice(0, 3)  # bill length, bill depth, flipper length -> body mass
BASELINE = [44.0, 17.0, 200.0]


@pytest.fixture(scope="module")
def regressor(penguins: tuple[np.ndarray, np.ndarray]) -> LinearRegression:
    features, _ = penguins
    return LinearRegression().fit(features[:, REGRESSION_FEATURES], features[:, 3])


def explained_model(local_cloud: LocalCloud, regressor: LinearRegression) -> aiplatform.Model:
    return upload(
        write_artifact(local_cloud, "models/batch-explained", regressor),
        display_name="batch-explained",
        explanation_metadata=aiplatform.explain.ExplanationMetadata(
            inputs={"features": {"input_baselines": [json_format.ParseDict(BASELINE, Value())]}},
            outputs={"body_mass_g": {}},
        ),
        explanation_parameters=aiplatform.explain.ExplanationParameters(
            {"sampled_shapley_attribution": {"path_count": 5}}
        ),
    )


def result_lines(job: aiplatform.BatchPredictionJob) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for blob in job.iter_outputs():
        if blob.name.rsplit("/", 1)[1].startswith("prediction.results-"):
            lines += [json.loads(line) for line in blob.download_as_text().splitlines()]
    return lines


def test_batch_prediction_writes_explanations(
    sdk: CloudContext,
    local_cloud: LocalCloud,
    regressor: LinearRegression,
    penguins: tuple[np.ndarray, np.ndarray],
) -> None:
    model = explained_model(local_cloud, regressor)
    instances = penguins[0][:3, REGRESSION_FEATURES].tolist()
    text = "".join(json.dumps(row) + "\n" for row in instances)
    storage_of(local_cloud).write_object(BUCKET, "explain/in.jsonl", text.encode())
    job = model.batch_predict(
        gcs_source=f"gs://{BUCKET}/explain/in.jsonl",
        gcs_destination_prefix=f"gs://{BUCKET}/explain-out",
        instances_format="jsonl",
        generate_explanation=True,
        machine_type=MACHINE,
    )
    assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
    lines = result_lines(job)
    assert len(lines) == len(instances)
    for line in lines:
        # BatchPredictionJob.generate_explanation: jsonl lines get "an additional entry keyed
        # explanation", an Explanation object.
        [attribution] = line["explanation"]["attributions"]
        assert line["prediction"] == pytest.approx(regressor.predict([line["instance"]])[0])
        # Shapley's definition for an additive model: w_i * (x_i - b_i).
        expected = regressor.coef_ * (np.asarray(line["instance"]) - np.asarray(BASELINE))
        assert attribution["featureAttributions"]["features"] == pytest.approx(expected.tolist())
        assert attribution["baselineOutputValue"] == pytest.approx(regressor.predict([BASELINE])[0])


def test_batch_explanation_refusals(sdk: CloudContext, artifact: str) -> None:
    plain = upload(artifact)  # no explanation_spec
    client = sdk.job_client()

    def create(**fields: Any) -> None:
        body = {
            "displayName": "refused",
            "model": plain.resource_name,
            "dedicatedResources": {"machineSpec": {"machineType": MACHINE}},
            "inputConfig": {"instancesFormat": "jsonl",
                            "gcsSource": {"uris": [f"gs://{BUCKET}/none.jsonl"]}},
            "outputConfig": {"predictionsFormat": "jsonl",
                             "gcsDestination": {"outputUriPrefix": f"gs://{BUCKET}/o"}},
            **fields,
        }  # fmt: skip
        client.create_batch_prediction_job(
            parent=sdk.parent,
            batch_prediction_job=aiplatform_v1.BatchPredictionJob.from_json(json.dumps(body)),
        )

    before = len(aiplatform.BatchPredictionJob.list())
    shapley = {"parameters": {"sampledShapleyAttribution": {"pathCount": 5}}}
    with pytest.raises(exceptions.BadRequest, match="generateExplanation"):
        create(generateExplanation=True)
    with pytest.raises(exceptions.BadRequest, match="explanationSpec"):
        create(explanationSpec=shapley)
    with pytest.raises(exceptions.BadRequest, match="integratedGradientsAttribution"):
        create(generateExplanation=True,
               explanationSpec={"parameters": {"integratedGradientsAttribution": {}}})  # fmt: skip
    assert len(aiplatform.BatchPredictionJob.list()) == before


# -- readiness after the deploy, and replicas ------------------------------------------------------
def serving_processes(deployed_model_id: str) -> list[int]:
    """The local processes serving a deployed model: those whose environment carries its
    AIP_DEPLOYED_MODEL_ID (the variable Vertex gives every serving container)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if f"AIP_DEPLOYED_MODEL_ID={deployed_model_id}".encode() in environ:
            found.append(int(entry.name))
    return found


def wait_until(check: Any, seconds: float = 20.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.2)


def test_a_failing_health_probe_after_the_deploy_makes_predictions_unavailable(
    sdk: CloudContext, artifact: str, tmp_path: Path
) -> None:
    # ModelContainerSpec.healthProbe (REST reference): "Specification for Kubernetes readiness
    # probe"; Kubernetes runs it every periodSeconds for the container's life, and a container
    # failing it failureThreshold times receives no traffic until it passes successThreshold.
    flag = tmp_path / "unhealthy"
    # Ready while the flag file is absent and the server answers its health route.
    script = (
        f"import os, sys, urllib.request; os.path.exists({str(flag)!r}) and sys.exit(1); "
        "port = os.environ['AIP_HTTP_PORT']; "
        "urllib.request.urlopen(f'http://127.0.0.1:{port}/health')"
    )
    check = [sys.executable, "-c", script]
    name = gapic_upload(sdk, artifact, {"healthProbe": {
        "exec": {"command": check}, "periodSeconds": 1, "failureThreshold": 1}})  # fmt: skip
    endpoint = aiplatform.Model(name).deploy(machine_type=MACHINE)

    def answers() -> bool:
        try:
            return endpoint.predict(instances=[INSTANCE]).predictions == ["Adelie"]
        except exceptions.ServiceUnavailable:
            return False

    assert answers()
    flag.write_text("")
    assert wait_until(lambda: not answers()), "still answered with a failing healthProbe"
    with pytest.raises(exceptions.ServiceUnavailable, match="healthProbe failed"):
        endpoint.predict(instances=[INSTANCE])
    flag.unlink()
    assert wait_until(answers), "no answer once the healthProbe passed again"
    endpoint.undeploy_all()


def test_min_replica_count_starts_that_many_servers_behind_the_endpoint(
    sdk: CloudContext, artifact: str
) -> None:
    # DedicatedResources.minReplicaCount (REST reference): "The minimum number of machine
    # replicas that will be always deployed on." Two replicas: one dying leaves one answering.
    name = gapic_upload(sdk, artifact, {})
    endpoint = aiplatform.Endpoint.create(display_name="replicas")
    resources = {"machineSpec": {"machineType": MACHINE}, "minReplicaCount": 2,
                 "maxReplicaCount": 2}  # fmt: skip
    deployed = {"model": name, "dedicatedResources": resources}
    sdk.endpoint_client().deploy_model(
        endpoint=endpoint.resource_name,
        deployed_model=aiplatform_v1.DeployedModel.from_json(json.dumps(deployed)),
        traffic_split={"0": 100},
    ).result()
    deployed_id = endpoint.list_models()[0].id
    assert endpoint.predict(instances=[INSTANCE]).predictions == ["Adelie"]
    replicas = serving_processes(deployed_id)
    assert len(replicas) == 2, replicas
    os.kill(replicas[0], signal.SIGKILL)
    for _ in range(4):  # every request is answered, by the replica left
        assert endpoint.predict(instances=[INSTANCE]).predictions == ["Adelie"]
    endpoint.undeploy_all()
    assert wait_until(lambda: serving_processes(deployed_id) == [])
