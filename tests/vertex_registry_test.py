"""Model Registry, endpoints and online prediction through the real `google.cloud.aiplatform` SDK
against the local cloud: a scikit-learn model trained on the penguins data, uploaded, versioned,
evaluated, deployed, canaried and served, plus every refusal Vertex makes."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

import joblib
import numpy as np
import pytest
import requests
from google.api_core import exceptions
from google.cloud import aiplatform, aiplatform_v1
from palmerpenguins import load_penguins
from scipy.stats import binom
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.projects import DEFAULT_PROJECT
from vertexkit.local.storage.routes import StorageService
from vertexkit.local.vertex.backend import VertexState
from vertexkit.local.vertex.registry.model_process import ModelProcess
from vertexkit.local.vertex.registry.routes import RegistryArea

SKLEARN_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest"
FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
REPO_ROOT = Path(__file__).resolve().parents[1]
BUCKET = "registry-test"


@pytest.fixture(scope="module")
def penguins() -> tuple[np.ndarray, np.ndarray]:
    frame = load_penguins().dropna(subset=[*FEATURES, "species"])
    return frame[FEATURES].to_numpy(), frame["species"].to_numpy()


@pytest.fixture(scope="module")
def classifier(penguins: tuple[np.ndarray, np.ndarray]) -> Pipeline:
    features, labels = penguins
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(features, labels)


def storage_of(cloud: LocalCloud) -> StorageService:
    return next(s for s in cloud.services if isinstance(s, StorageService))


def write_artifact(cloud: LocalCloud, prefix: str, estimator: object) -> str:
    """Saves model.joblib as gs://BUCKET/prefix/model.joblib on the local Cloud Storage."""
    with tempfile.TemporaryDirectory() as scratch:
        local_file = Path(scratch) / "model.joblib"
        joblib.dump(estimator, local_file)
        storage_of(cloud).write_object(BUCKET, f"{prefix}/model.joblib", local_file)
    return f"gs://{BUCKET}/{prefix}"


@pytest.fixture
def sdk(cloud_context: CloudContext) -> CloudContext:
    cloud_context.init_aiplatform()
    return cloud_context


@pytest.fixture
def artifact(local_cloud: LocalCloud, classifier: Pipeline, request: pytest.FixtureRequest) -> str:
    return write_artifact(local_cloud, f"models/{request.node.name}", classifier)


def upload(artifact_uri: str, **kwargs: object) -> aiplatform.Model:
    kwargs.setdefault("display_name", "penguins")
    kwargs.setdefault("serving_container_image_uri", SKLEARN_IMAGE)
    return aiplatform.Model.upload(artifact_uri=artifact_uri, **kwargs)


def deploy_split_bounds(trials: int, share: float) -> tuple[int, int]:
    """Counts outside these bounds happen with probability < 1e-6 if routing is right."""
    return int(binom.ppf(5e-7, trials, share)), int(binom.isf(5e-7, trials, share))


# -- registry ----------------------------------------------------------------------------------
def test_versions_aliases_and_default(sdk: CloudContext, artifact: str) -> None:
    first = upload(artifact, labels={"team": "birds"})
    assert first.version_id == "1" and list(first.version_aliases) == ["default"]
    assert aiplatform_v1.Model.DeploymentResourcesType.DEDICATED_RESOURCES in (
        first.supported_deployment_resources_types
    )
    second = upload(
        artifact,
        parent_model=first.resource_name,
        version_aliases=["challenger"],
        is_default_version=False,
    )
    assert second.resource_name == first.resource_name
    assert second.version_id == "2" and list(second.version_aliases) == ["challenger"]

    model_id = first.name
    assert aiplatform.Model(model_id).version_id == "1"  # bare ID -> default
    assert aiplatform.Model(f"{model_id}@2").version_id == "2"
    assert aiplatform.Model(f"{first.resource_name}@challenger").version_id == "2"
    assert aiplatform.Model(first.resource_name, version="1").version_id == "1"

    # Listing shows each model's default version (labels are per version).
    listed = aiplatform.Model.list(filter='labels.team="birds"')
    assert first.resource_name in [m.resource_name for m in listed]
    assert first.resource_name not in [
        m.resource_name for m in aiplatform.Model.list(filter='labels.team="fish"')
    ]

    registry = first.versioning_registry
    registry.add_version_aliases(["default"], version="2")  # move `default`
    versions = {v.version_id: list(v.version_aliases) for v in registry.list_versions()}
    assert versions == {"1": [], "2": ["challenger", "default"]}  # in the order given
    assert aiplatform.Model(model_id).version_id == "2"

    registry.add_version_aliases(["challenger"], version="1")  # an alias moves, never doubles
    versions = {v.version_id: sorted(v.version_aliases) for v in registry.list_versions()}
    assert versions == {"1": ["challenger"], "2": ["default"]}


def test_version_aliases_keep_the_order_given(sdk: CloudContext, artifact: str) -> None:
    first = upload(artifact, display_name="ordered", version_aliases=["zeta", "alpha"])
    assert list(first.version_aliases) == ["zeta", "alpha", "default"]  # the SDK adds default
    assert list(aiplatform.Model(first.resource_name).version_aliases) == [
        "zeta", "alpha", "default"
    ]  # fmt: skip
    first.versioning_registry.add_version_aliases(["omega", "beta"], version="1")
    again = aiplatform.Model(first.resource_name, version="1")
    assert list(again.version_aliases) == ["zeta", "alpha", "default", "omega", "beta"]


def test_parallel_uploads_never_lose_or_duplicate_a_version(
    sdk: CloudContext, artifact: str
) -> None:
    parent = upload(artifact, display_name="parallel")
    version_ids: list[str] = []
    errors: list[BaseException] = []

    def upload_versions() -> None:
        try:
            for _ in range(3):
                model = upload(artifact, parent_model=parent.resource_name, display_name="p")
                version_ids.append(model.version_id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=upload_versions) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(version_ids, key=int) == [str(n) for n in range(2, 20)]
    listed = [v.version_id for v in parent.versioning_registry.list_versions()]
    assert listed == [str(n) for n in range(1, 20)]


def test_model_list_pages(sdk: CloudContext, artifact: str) -> None:
    for _ in range(3):
        upload(artifact, display_name="paged-model")
    client = sdk.model_client()
    request = aiplatform_v1.ListModelsRequest(
        parent=sdk.parent, filter='display_name="paged-model"', page_size=2
    )
    pages = list(client.list_models(request=request).pages)
    assert [len(page.models) for page in pages] == [2, 1]


def test_evaluation_import_get_and_list(sdk: CloudContext, artifact: str) -> None:
    model = upload(artifact)
    second = upload(artifact, parent_model=model.resource_name, is_default_version=False)
    schema = "gs://google-cloud-aiplatform/schema/modelevaluation/classification_metrics_1.0.0.yaml"
    imported = sdk.model_client().import_model_evaluation(
        parent=second.versioned_resource_name,
        model_evaluation={"metrics_schema_uri": schema, "metrics": {"auPrc": 0.97}},
    )
    evaluations = second.list_model_evaluations()
    assert [e.resource_name for e in evaluations] == [imported.name]
    assert evaluations[0].metrics["auPrc"] == pytest.approx(0.97)
    fetched = second.get_model_evaluation(imported.name.rsplit("/", 1)[1])
    assert fetched.metrics["auPrc"] == pytest.approx(0.97)
    assert model.list_model_evaluations() == []  # evaluations belong to their version

    with pytest.raises(exceptions.BadRequest, match="metrics_schema_uri"):
        sdk.model_client().import_model_evaluation(
            parent=second.versioned_resource_name, model_evaluation={"metrics": {"a": 1}}
        )


# -- endpoints and prediction ------------------------------------------------------------------
def test_deploy_canary_predict_and_undeploy(
    sdk: CloudContext, artifact: str, penguins: tuple[np.ndarray, np.ndarray], classifier: Pipeline
) -> None:
    features, _ = penguins
    v1 = upload(artifact, display_name="canary")
    v2 = upload(artifact, parent_model=v1.resource_name, version_aliases=["candidate"])
    endpoint = aiplatform.Endpoint.create(display_name="canary-endpoint")
    endpoint.deploy(aiplatform.Model(v1.resource_name, version="1"), machine_type="n1-standard-2")
    response = endpoint.predict(instances=features[:5].tolist())
    assert response.predictions == classifier.predict(features[:5]).tolist()
    assert response.model_version_id == "1"
    assert response.model_resource_name == v1.resource_name

    endpoint.deploy(v2, traffic_percentage=20, machine_type="n1-standard-2")
    ids_by_version = {d.model_version_id: d.id for d in endpoint.list_models()}
    assert endpoint.traffic_split == {ids_by_version["1"]: 80, ids_by_version["2"]: 20}

    trials = 400
    counts = Counter(
        endpoint.predict(instances=features[:1].tolist()).model_version_id for _ in range(trials)
    )
    low, high = deploy_split_bounds(trials, 0.2)
    assert low <= counts["2"] <= high, counts
    assert counts["1"] + counts["2"] == trials

    with pytest.raises(exceptions.BadRequest, match="deployed"):
        v2.versioning_registry.delete_version("2")
    endpoint.undeploy(ids_by_version["2"])
    assert endpoint.traffic_split == {ids_by_version["1"]: 100}
    assert {
        endpoint.predict(instances=features[:1].tolist()).model_version_id for _ in range(20)
    } == {"1"}
    endpoint.undeploy_all()
    endpoint.delete()


def test_predict_response_fields_and_raw_predict(
    sdk: CloudContext, local_cloud: LocalCloud, artifact: str
) -> None:
    model = upload(artifact, display_name="raw-model")
    endpoint = model.deploy(machine_type="n1-standard-2")
    response = sdk.prediction_client().predict(
        endpoint=endpoint.resource_name, instances=[[39.1, 18.7, 181.0, 3750.0]]
    )
    assert list(response.predictions) == ["Adelie"]
    assert response.model_display_name == "raw-model"
    assert response.deployed_model_id == endpoint.list_models()[0].id
    # The SDK's raw_predict always dials Google's host, so plain HTTP reaches the local one.
    raw = requests.post(
        f"{local_cloud.url}/v1/{endpoint.resource_name}:rawPredict",
        json={"instances": [[39.1, 18.7, 181.0, 3750.0]]},
        timeout=30,
    )
    assert raw.status_code == 200 and raw.json() == {"predictions": ["Adelie"]}
    assert raw.headers["X-Vertex-AI-Model"] == model.resource_name
    endpoint.undeploy_all()


def test_custom_serving_container(sdk: CloudContext, artifact: str) -> None:
    model = upload(
        artifact,
        display_name="custom-serving",
        serving_container_image_uri="europe-docker.pkg.dev/my-project/serving/penguins:1",
        serving_container_command=["python", "-m", "trainers.custom_serving"],
        serving_container_environment_variables={"PYTHONPATH": str(REPO_ROOT)},
        serving_container_predict_route="/predict",
        serving_container_health_route="/health",
    )
    endpoint = model.deploy(machine_type="n1-standard-2")
    response = endpoint.predict(
        instances=[[39.1, 18.7, 181.0, 3750.0]], parameters={"probabilities": True}
    )
    [prediction] = response.predictions
    assert prediction["label"] == "Adelie"
    assert sum(prediction["probabilities"].values()) == pytest.approx(1.0)
    assert response.deployed_model_id == endpoint.list_models()[0].id
    endpoint.undeploy_all()


INSTANCE = [[39.1, 18.7, 181.0, 3750.0]]  # an Adelie penguin


def deploy_and_stop(home: Path, classifier: Pipeline, prefix: str) -> tuple[str, str]:
    """A model deployed on a local cloud at `home`, stopped since: (endpoint, deployed ID)."""
    with LocalCloud(home=home) as cloud:
        cloud.context().init_aiplatform()
        endpoint = upload(write_artifact(cloud, prefix, classifier)).deploy(
            machine_type="n1-standard-2"
        )
        return endpoint.resource_name, endpoint.list_models()[0].id


def registry_of(cloud: LocalCloud) -> RegistryArea:
    return next(area for area in cloud.vertex.areas if isinstance(area, RegistryArea))


def join_warm_up() -> None:
    """The cloud's warm-up (its services' `warm` runs after `start` returns), then the thread
    it starts to load the deployed models."""
    for name in ("vertexkit-warm-up", "warm-deployed"):
        for thread in threading.enumerate():
            if thread.name == name:
                thread.join()


def test_deployed_models_serve_again_after_restart_loaded_before_the_first_prediction(
    tmp_path: Path, classifier: Pipeline, cloud_context: CloudContext
) -> None:
    endpoint_name, deployed_id = deploy_and_stop(tmp_path, classifier, "warm")
    try:
        with LocalCloud(home=tmp_path) as cloud:
            join_warm_up()
            servers = registry_of(cloud).endpoints.pool._servers
            assert list(servers) == [deployed_id]  # loaded with no prediction asked
            served = servers[deployed_id]
            assert isinstance(served, ModelProcess) and served.running()  # started with the cloud
            cloud.context().init_aiplatform()
            predicted = aiplatform.Endpoint(endpoint_name).predict(instances=INSTANCE)
            assert predicted.predictions == ["Adelie"]
        assert not served.running()  # ended with the cloud
    finally:
        cloud_context.init_aiplatform()


def test_opening_vertexs_state_alone_starts_the_deployed_models_processes(
    tmp_path: Path, classifier: Pipeline
) -> None:
    """The process of a model deployed before a restart starts when Vertex's state is opened,
    the local cloud's first step (`VertexState`), before any service is built: its framework
    imports on the other core while the cloud imports its services."""
    _, deployed_id = deploy_and_stop(tmp_path, classifier, "ahead")
    state = VertexState(tmp_path / "vertex", DEFAULT_PROJECT)
    try:
        spawned = state.model_processes._spawned[deployed_id]
        assert spawned.running() and spawned.framework == "sklearn"
        assert [deployed["id"] for _, deployed, _ in state.deployed_at_start] == [deployed_id]
    finally:
        state.close()
    assert not spawned.running()


def test_a_deployed_model_whose_process_died_serves_again(
    tmp_path: Path, classifier: Pipeline, cloud_context: CloudContext
) -> None:
    """Vertex restarts a deployed model's container that crashed; here the next request after
    the failed one loads the model again and answers as before."""
    endpoint_name, deployed_id = deploy_and_stop(tmp_path, classifier, "crash")
    try:
        with LocalCloud(home=tmp_path) as cloud:
            join_warm_up()
            served = registry_of(cloud).endpoints.pool._servers[deployed_id]
            os.kill(served.group.pid, signal.SIGKILL)
            served.group.process.wait()
            cloud.context().init_aiplatform()
            endpoint = aiplatform.Endpoint(endpoint_name)
            with pytest.raises(exceptions.GoogleAPICallError):
                endpoint.predict(instances=INSTANCE)
            assert endpoint.predict(instances=INSTANCE).predictions == ["Adelie"]
    finally:
        cloud_context.init_aiplatform()


def test_a_deployed_model_that_no_longer_loads_fails_its_prediction_not_the_restart(
    tmp_path: Path, classifier: Pipeline, cloud_context: CloudContext
) -> None:
    endpoint_name, _ = deploy_and_stop(tmp_path, classifier, "gone")
    (tmp_path / "storage" / BUCKET / "gone" / "model.joblib").unlink()
    try:
        with LocalCloud(home=tmp_path) as cloud:
            join_warm_up()
            assert registry_of(cloud).endpoints.pool._servers == {}
            cloud.context().init_aiplatform()
            with pytest.raises(exceptions.BadRequest, match=r"found none"):
                aiplatform.Endpoint(endpoint_name).predict(instances=INSTANCE)
    finally:
        cloud_context.init_aiplatform()


# -- refusals ----------------------------------------------------------------------------------
def test_upload_refusals(sdk: CloudContext, local_cloud: LocalCloud, artifact: str) -> None:
    with pytest.raises(exceptions.BadRequest, match="does not exist"):
        upload(f"gs://{BUCKET}/no/such/dir")
    with pytest.raises(exceptions.BadRequest, match="gs://"):
        sdk.model_client().upload_model(
            parent=sdk.parent,
            model={
                "display_name": "x",
                "artifact_uri": "s3://elsewhere/model",
                "container_spec": {"image_uri": SKLEARN_IMAGE},
            },
        )
    storage_of(local_cloud).write_object(BUCKET, "empty-model/README", b"no model here")
    with pytest.raises(exceptions.BadRequest, match="exactly one of"):
        upload(f"gs://{BUCKET}/empty-model")
    with pytest.raises(exceptions.BadRequest, match="invalid alias"):
        upload(artifact, version_aliases=["Not_Valid"])
    response = requests.post(
        f"{local_cloud.url}/v1/{sdk.parent}/models:upload",
        json={"model": {"displayName": "x", "colour": "red"}},
        timeout=30,
    )
    assert response.status_code == 400 and "colour" in response.text


def test_registry_refusals(sdk: CloudContext, artifact: str) -> None:
    model = upload(artifact)
    registry = model.versioning_registry
    with pytest.raises(exceptions.BadRequest, match="default"):
        registry.delete_version("1")
    with pytest.raises(exceptions.BadRequest, match="default alias cannot be removed"):
        registry.remove_version_aliases(["default"], version="1")
    with pytest.raises(exceptions.NotFound):
        aiplatform.Model(model.resource_name, version="7")
    with pytest.raises(exceptions.NotFound):
        aiplatform.Model(model.resource_name, version="nosuchalias")
    second = upload(artifact, parent_model=model.resource_name, is_default_version=False)
    registry.delete_version(second.version_id)
    assert [v.version_id for v in registry.list_versions()] == ["1"]
    model.delete()
    with pytest.raises(exceptions.NotFound):
        aiplatform.Model(model.resource_name)


def test_endpoint_refusals(sdk: CloudContext, local_cloud: LocalCloud, artifact: str) -> None:
    model = upload(artifact)
    endpoint = model.deploy(machine_type="n1-standard-2")
    [deployed] = endpoint.list_models()
    endpoints = sdk.endpoint_client()

    def deploy(traffic_split: dict[str, int], **deployed_model: object) -> None:
        deployed_model.setdefault("model", model.resource_name)
        deployed_model.setdefault(
            "dedicated_resources",
            {"machine_spec": {"machine_type": "n1-standard-2"}, "min_replica_count": 1},
        )
        endpoints.deploy_model(
            endpoint=endpoint.resource_name,
            deployed_model=deployed_model,
            traffic_split=traffic_split,
        ).result()

    with pytest.raises(exceptions.BadRequest, match="sum to 90"):
        deploy({"0": 30, deployed.id: 60})
    with pytest.raises(exceptions.BadRequest, match="not a deployed model"):
        deploy({"0": 50, "12345": 50})
    with pytest.raises(exceptions.BadRequest, match="AUTOMATIC_RESOURCES"):
        deploy({"0": 100}, dedicated_resources=None, automatic_resources={"min_replica_count": 1})
    with pytest.raises(exceptions.BadRequest, match="min_replica_count"):
        deploy({"0": 100}, dedicated_resources={"machine_spec": {"machine_type": "n1-standard-2"}})
    with pytest.raises(exceptions.BadRequest, match="machineType"):
        deploy(
            {"0": 100},
            dedicated_resources={
                "machine_spec": {"machine_type": "n1-galactic-9000"},
                "min_replica_count": 1,
            },
        )
    with pytest.raises(exceptions.BadRequest, match="has deployed models"):
        endpoint.delete()
    with pytest.raises(exceptions.BadRequest, match="deployed"):
        model.delete()

    deploy({"0": 50, deployed.id: 50})
    other = next(d.id for d in endpoint.list_models() if d.id != deployed.id)
    with pytest.raises(exceptions.BadRequest, match="receives 50%"):
        endpoints.undeploy_model(endpoint=endpoint.resource_name, deployed_model_id=other).result()
    endpoints.undeploy_model(
        endpoint=endpoint.resource_name,
        deployed_model_id=other,
        traffic_split={deployed.id: 100, other: 0},
    ).result()

    with pytest.raises(exceptions.BadRequest, match="expects 4 features"):
        endpoint.predict(instances=[[1.0, 2.0]])
    with pytest.raises(exceptions.BadRequest, match="payload size exceeds"):
        endpoint.predict(instances=[[1.0, 2.0, 3.0, 4.0]] * 60_000)
    not_a_list = requests.post(
        f"{local_cloud.url}/v1/{endpoint.resource_name}:predict",
        json={"instances": {"bill_length_mm": 39.1}},
        timeout=30,
    )
    assert not_a_list.status_code == 400 and "non-empty JSON list" in not_a_list.text
    endpoint.undeploy_all()
    endpoint.delete()


def test_unrunnable_container_is_refused_at_deploy(sdk: CloudContext, artifact: str) -> None:
    model = upload(artifact, serving_container_image_uri="gcr.io/my-project/java-server:1")
    with pytest.raises(exceptions.BadRequest, match="no `command`"):
        model.deploy(machine_type="n1-standard-2")


def test_failing_custom_container_fails_the_deploy(sdk: CloudContext, artifact: str) -> None:
    model = upload(
        artifact,
        serving_container_image_uri="gcr.io/my-project/broken:1",
        serving_container_command=[sys.executable, "-c", "raise SystemExit(3)"],
    )
    endpoint = aiplatform.Endpoint.create(display_name="broken")
    with pytest.raises(exceptions.GoogleAPICallError, match="exited with code 3"):
        model.deploy(endpoint=endpoint, machine_type="n1-standard-2")
    endpoint = aiplatform.Endpoint(endpoint.resource_name)
    assert endpoint.list_models() == [] and endpoint.traffic_split == {}
    endpoint.delete()
