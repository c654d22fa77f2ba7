"""The local KFP API's state lives under the home and survives a restart; a run the stop
interrupted is not left RUNNING (its PipelineJob is failed by the restart, as every job is)."""

import time
from pathlib import Path

import kfp
from kfp import compiler, dsl

from vertexkit.local import LocalCloud


@dsl.component(install_kfp_package=False)
def linger(seconds: float) -> float:
    import time

    time.sleep(seconds)
    return seconds


@dsl.pipeline(name="kfp-linger")
def linger_pipeline(seconds: float = 120.0) -> float:
    return linger(seconds=seconds).output


def test_state_survives_a_restart_and_no_run_stays_running(tmp_path: Path) -> None:
    package = tmp_path / "linger.yaml"
    compiler.Compiler().compile(linger_pipeline, str(package))
    home = tmp_path / "home"
    with LocalCloud(home=home) as cloud:
        client = kfp.Client(host=cloud.url)
        pipeline = client.upload_pipeline(str(package), pipeline_name="lingerer")
        experiment = client.create_experiment("kept")
        run = client.run_pipeline(experiment.experiment_id, "interrupted", str(package))
        deadline = time.monotonic() + 60
        while client.get_run(run.run_id).state != "RUNNING" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert client.get_run(run.run_id).state == "RUNNING"
    with LocalCloud(home=home) as cloud:
        client = kfp.Client(host=cloud.url)
        assert client.get_pipeline(pipeline.pipeline_id).display_name == "lingerer"
        assert client.get_experiment(experiment_name="kept").experiment_id == (
            experiment.experiment_id
        )
        after = client.get_run(run.run_id)
        assert after.state == "FAILED" and after.error.message
        assert [e.display_name for e in client.list_experiments().experiments].count("Default") == 1
