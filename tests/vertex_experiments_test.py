"""Vertex AI Experiments and TensorBoard through the high-level SDK against the local cloud:
`aiplatform.init(experiment=...)`, `start_run`, `log_params`, `log_metrics`, `end_run`,
`get_experiment_df`; `aiplatform.Tensorboard` and a custom job's event files under one."""

from __future__ import annotations

import uuid

import pytest
from google.cloud import aiplatform

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
