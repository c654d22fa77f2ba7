"""A local pipeline run read back through the SDK's metadata API, as a Vertex run is: what
`aiplatform.get_pipeline_df` and `get_experiment_df` query is in `run_metadata`'s docstring
(google/cloud/aiplatform/metadata/metadata.py, pipeline_jobs.py `_query_experiment_row`)."""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.
import uuid
from pathlib import Path

import pytest
from google.cloud import aiplatform
from google.cloud.aiplatform import pipeline_jobs
from kfp import compiler, dsl
from kfp.dsl import Metrics, Output

from vertexkit.local import LocalCloud

SERVICE_ACCOUNT = "pipelines@local-project.iam.gserviceaccount.com"


@pytest.fixture(autouse=True)
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline_jobs, "_JOB_WAIT_TIME", 0.2)
    monkeypatch.setattr(pipeline_jobs, "_WAIT_TIME_MULTIPLIER", 1)


@dsl.component(install_kfp_package=False)
def score(epochs: int, rate: float, metrics: Output[Metrics]) -> str:
    metrics.log_metric("accuracy", 0.5 + epochs / 100)
    return f"{epochs}@{rate}"


def scored_pipeline(name: str):
    @dsl.pipeline(name=name)
    def scored(epochs: int = 10, rate: float = 0.1) -> Metrics:
        return score(epochs=epochs, rate=rate).outputs["metrics"]

    return scored


def submitted(
    cloud: LocalCloud, tmp_path: Path, name: str, epochs: int, experiment: str | None = None
) -> aiplatform.PipelineJob:
    path = tmp_path / f"{name}-{epochs}.yaml"
    compiler.Compiler().compile(scored_pipeline(name), str(path))
    cloud.context().init_aiplatform(service_account=SERVICE_ACCOUNT)
    job = aiplatform.PipelineJob(
        display_name=name,
        template_path=str(path),
        pipeline_root=f"gs://pipelines-{uuid.uuid4().hex[:12]}/root",
        parameter_values={"epochs": epochs},
        job_id=f"{name}-{uuid.uuid4().hex[:8]}",  # the SDK's default: the time to the second
        enable_caching=False,
    )
    job.submit(experiment=experiment)
    job.wait()
    return job


def test_get_pipeline_df_has_a_row_per_run_with_its_parameters_and_metrics(
    local_cloud: LocalCloud, tmp_path
):
    name = f"scored-{uuid.uuid4().hex[:8]}"
    jobs = [submitted(local_cloud, tmp_path, name, epochs) for epochs in (10, 30)]
    frame = aiplatform.get_pipeline_df(pipeline=name)
    rows = {row["run_name"]: row for row in frame.to_dict("records")}
    assert set(rows) == {job.job_id for job in jobs}
    first = rows[jobs[0].job_id]
    assert first["pipeline_name"] == name
    # the run execution's metadata: `input:NAME` as given (defaults filled), `output:NAME`
    assert first["param.input:epochs"] == 10 and first["param.input:rate"] == 0.1
    # the pipeline's output artifact (its Metrics) is an output of the run's execution
    assert first["metric.accuracy"] == pytest.approx(0.6)
    assert rows[jobs[1].job_id]["metric.accuracy"] == pytest.approx(0.8)


def test_a_run_submitted_to_an_experiment_is_one_of_its_runs(local_cloud: LocalCloud, tmp_path):
    experiment = f"exp-{uuid.uuid4().hex[:8]}"
    job = submitted(local_cloud, tmp_path, f"scored-{uuid.uuid4().hex[:8]}", 20, experiment)
    # the experiment's context has the run's context as a child
    run_context = job.gca_resource.job_detail.pipeline_run_context
    assert any(p.endswith(f"/contexts/{experiment}") for p in run_context.parent_contexts)
    assert job.get_associated_experiment().name == experiment
    frame = aiplatform.get_experiment_df(experiment)
    assert len(frame) == 1
    row = frame.to_dict("records")[0]
    assert row["run_name"] == job.job_id
    assert row["run_type"] == "system.PipelineRun"
    assert row["state"] == "COMPLETE"
    assert row["param.epochs"] == 20 and row["param.rate"] == 0.1
    assert row["metric.accuracy"] == pytest.approx(0.7)


def test_each_task_names_its_execution_and_artifacts_in_the_store(
    local_cloud: LocalCloud, tmp_path
):
    job = submitted(local_cloud, tmp_path, f"scored-{uuid.uuid4().hex[:8]}", 10)
    task = next(t for t in job.task_details if t.task_name == "score")
    execution = aiplatform.Execution(task.execution.name)
    assert execution.schema_title == "system.ContainerExecution"
    assert execution.metadata["output:Output"] == "10@0.1"
    produced = execution.get_output_artifacts()
    assert [a.schema_title for a in produced] == ["system.Metrics"]
    assert produced[0].resource_name == task.outputs["metrics"].artifacts[0].name
    assert produced[0].metadata["accuracy"] == pytest.approx(0.6)
