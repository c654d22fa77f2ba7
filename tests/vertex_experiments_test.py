"""Vertex AI Experiments and TensorBoard through the high-level SDK against the local cloud:
`aiplatform.init(experiment=...)`, `start_run`, `log_params`, `log_metrics`, `end_run`,
`get_experiment_df`; `aiplatform.Tensorboard` and a custom job's event files under one."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, aiplatform_v1

from vertexkit.context import CloudContext


@pytest.fixture
def sdk(cloud_context: CloudContext) -> CloudContext:
    client = cloud_context.storage_client()
    if client.lookup_bucket("vertexkit-staging") is None:
        client.create_bucket("vertexkit-staging")
    cloud_context.init_aiplatform(staging_bucket="gs://vertexkit-staging")
    return cloud_context


def test_an_experiment_with_two_runs_shows_both_in_the_data_frame(sdk: CloudContext) -> None:
    experiment = f"penguins-{uuid.uuid4().hex[:8]}"
    sdk.init_aiplatform(experiment=experiment, experiment_description="two runs")
    for run, (c, accuracy) in {"run-a": (0.1, 0.91), "run-b": (1.0, 0.95)}.items():
        aiplatform.start_run(run)
        aiplatform.log_params({"C": c, "solver": "lbfgs"})
        aiplatform.log_metrics({"accuracy": accuracy})
        aiplatform.end_run()
    frame = aiplatform.get_experiment_df(experiment)
    frame = frame.set_index("run_name")
    assert sorted(frame.index) == ["run-a", "run-b"]
    assert frame.loc["run-a", "param.C"] == 0.1 and frame.loc["run-b", "param.C"] == 1.0
    assert frame.loc["run-b", "param.solver"] == "lbfgs"
    assert frame.loc["run-a", "metric.accuracy"] == 0.91
    assert frame.loc["run-b", "metric.accuracy"] == 0.95
    assert set(frame["state"]) == {"COMPLETE"}


# A trainer that writes a TensorBoard event file (the TFRecord framing of an empty Event) under
# AIP_TENSORBOARD_LOG_DIR/train, as a Keras TensorBoard callback would.
EVENTS_TRAINER = """
import os, struct
from google.cloud import storage
bucket, _, prefix = os.environ["AIP_TENSORBOARD_LOG_DIR"].removeprefix("gs://").partition("/")
record = b"\\x09" + struct.pack("<d", 1.0)  # Event.wall_time = 1.0
framed = struct.pack("<Q", len(record)) + b"\\0" * 4 + record + b"\\0" * 4
blob = storage.Client().bucket(bucket).blob(prefix + "train/events.out.tfevents.1.local")
blob.upload_from_string(framed)
"""


def test_a_jobs_event_files_are_listed_under_its_tensorboard(sdk: CloudContext) -> None:
    tensorboard = aiplatform.Tensorboard.create(display_name="penguins-board")
    assert tensorboard.display_name == "penguins-board"
    assert tensorboard.resource_name in {t.resource_name for t in aiplatform.Tensorboard.list()}
    job = aiplatform.CustomJob(
        display_name="writes-events",
        worker_pool_specs=[{
            "machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
            "container_spec": {
                "image_uri": "python:3.11", "command": ["python", "-c", EVENTS_TRAINER]},
        }],
        base_output_dir="gs://vertexkit-staging/events-job",
    )  # fmt: skip
    job.run(
        tensorboard=tensorboard.resource_name,
        service_account="trainer@local-project.iam.gserviceaccount.com",
    )
    experiments = aiplatform.TensorboardExperiment.list(tensorboard_name=tensorboard.resource_name)
    job_id = job.resource_name.rsplit("/", 1)[1]
    assert [e.name for e in experiments] == [job_id]
    runs = aiplatform.TensorboardRun.list(tensorboard_experiment_name=experiments[0].resource_name)
    assert [run.display_name for run in runs] == ["train"]
    tensorboard.delete()
    assert tensorboard.resource_name not in {t.resource_name for t in aiplatform.Tensorboard.list()}


# -- refused before anything is created --------------------------------------------------------
def gapic(sdk: CloudContext, client_type: type) -> Any:
    return client_type(
        credentials=AnonymousCredentials(), transport="rest",
        client_options=sdk.vertex_client_options(),
    )  # fmt: skip


def store(sdk: CloudContext) -> str:
    return f"{sdk.parent}/metadataStores/default"


def contexts(sdk: CloudContext) -> set[str]:
    client = gapic(sdk, aiplatform_v1.MetadataServiceClient)
    return {c.name for c in client.list_contexts(parent=store(sdk))}


def tensorboards(sdk: CloudContext) -> set[str]:
    client = gapic(sdk, aiplatform_v1.TensorboardServiceClient)
    return {t.name for t in client.list_tensorboards(parent=sdk.parent)}


def create_context(sdk: CloudContext, context: dict, context_id: str = "") -> None:
    client = gapic(sdk, aiplatform_v1.MetadataServiceClient)
    client.create_context(parent=store(sdk), context=context, context_id=context_id)


def create_tensorboard(sdk: CloudContext, tensorboard: dict, parent: str = "") -> None:
    client = gapic(sdk, aiplatform_v1.TensorboardServiceClient)
    client.create_tensorboard(parent=parent or sdk.parent, tensorboard=tensorboard)


EXPERIMENT = {"display_name": "exp", "schema_title": "system.Experiment"}
BAD_REQUESTS = {
    "context without schema": (
        "schemaTitle", exceptions.BadRequest, contexts,
        lambda sdk: create_context(sdk, {"display_name": "no-schema"}),
    ),
    "context id with capitals": (
        "contextId", exceptions.BadRequest, contexts,
        lambda sdk: create_context(sdk, EXPERIMENT, "Bad_Id"),
    ),
    "context id too short": (
        "contextId", exceptions.BadRequest, contexts,
        lambda sdk: create_context(sdk, EXPERIMENT, "ab"),
    ),
    "context with a bad label": (
        "labels", exceptions.BadRequest, contexts,
        lambda sdk: create_context(sdk, {**EXPERIMENT, "labels": {"Bad": "x"}}),
    ),
    "context list filter": (
        "filter", exceptions.BadRequest, contexts,
        lambda sdk: list(gapic(sdk, aiplatform_v1.MetadataServiceClient).list_contexts(
            request={"parent": store(sdk), "filter": 'nonsense_field="x"'})),
    ),
    "tensorboard without a name": (
        "displayName", exceptions.BadRequest, tensorboards,
        lambda sdk: create_tensorboard(sdk, {"display_name": ""}),
    ),
    "tensorboard in no region": (
        "location", exceptions.BadRequest, tensorboards,
        lambda sdk: create_tensorboard(
            sdk, {"display_name": "tb"}, sdk.parent.replace("us-central1", "mars-central1")),
    ),
    "tensorboard with a long name": (
        "displayName", exceptions.BadRequest, tensorboards,
        lambda sdk: create_tensorboard(sdk, {"display_name": "x" * 129}),
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    ("field", "error", "listed", "send"), BAD_REQUESTS.values(), ids=BAD_REQUESTS
)
def test_bad_requests_are_refused_before_anything_is_created(
    sdk: CloudContext, field: str, error: type[Exception], listed: Callable, send: Callable
) -> None:
    before = listed(sdk)
    with pytest.raises(error) as refused:
        send(sdk)
    assert field in refused.value.message
    assert listed(sdk) == before, "a refused request created a resource"


def test_a_run_of_an_unknown_tensorboard_experiment_is_not_found(sdk: CloudContext) -> None:
    tensorboard = aiplatform.Tensorboard.create(display_name="lonely")
    client = gapic(sdk, aiplatform_v1.TensorboardServiceClient)
    with pytest.raises(exceptions.NotFound):
        client.create_tensorboard_run(
            parent=f"{tensorboard.resource_name}/experiments/nope",
            tensorboard_run={"display_name": "r"}, tensorboard_run_id="r",
        )  # fmt: skip
    assert not list(
        aiplatform.TensorboardExperiment.list(tensorboard_name=tensorboard.resource_name)
    )
