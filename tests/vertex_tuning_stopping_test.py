"""Tuning jobs' stopping fields through `JobServiceClient` against the local cloud: automated
early stopping of trials on their hypertune curves, studyStoppingConfig, and the fields the
local engine refuses with a 400 naming them.

Expected behaviour is Google's, from the StudySpec reference (aiplatform_v1 `study.py`):
MedianAutomatedStoppingSpec "stops a pending Trial if the Trial's best objective_value is
strictly below the median 'performance' of all completed Trials reported up to the Trial's
last measurement"; DecayCurveAutomatedStoppingSpec stops a trial with "very low probability
to exceed the optimal value found so far"; StudyStoppingConfig.maxNumTrials "If there are more
than this many trials, stop the study"; maxNumTrialsNoProgress "If the objective value has not
improved for this many consecutive trials, stop the study". Trial.measurements: "used for
early stopping computations".
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform_v1

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud

TESTDATA = Path(__file__).parents[1] / "vertexkit/local/vertex/training/testdata"
JobState = aiplatform_v1.JobState
STEPS = 6


@pytest.fixture
def client(local_cloud: LocalCloud) -> aiplatform_v1.JobServiceClient:
    return aiplatform_v1.JobServiceClient(
        credentials=AnonymousCredentials(),
        transport="rest",
        client_options={"api_endpoint": local_cloud.url},
    )


@pytest.fixture
def parent(cloud_context: CloudContext) -> str:
    return f"projects/{cloud_context.project}/locations/{cloud_context.region}"


def tuning_job(
    study: dict[str, Any], *args: str, trials: int = 4, parallel: int = 2
) -> dict[str, Any]:
    """A job over one unscored parameter `x`, the curve trainer as its trial."""
    study_spec = {
        "metrics": [{"metric_id": "score", "goal": "MAXIMIZE"}],
        "parameters": [{"parameter_id": "x", "double_value_spec": {"max_value": 1.0}}],
        "algorithm": "RANDOM_SEARCH",
        **study,
    }
    pool = {
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": 1,
        "container_spec": {
            "image_uri": "us-docker.pkg.dev/my-project/trainers/app:latest",
            "command": [sys.executable, str(TESTDATA / "curve.py"), f"--steps={STEPS}", *args],
        },
    }
    return {
        "display_name": "tune-stopping",
        "study_spec": study_spec,
        "max_trial_count": trials,
        "parallel_trial_count": parallel,
        "trial_job_spec": {"worker_pool_specs": [pool]},
    }


def run(client: aiplatform_v1.JobServiceClient, parent: str, body: dict) -> Any:
    job = client.create_hyperparameter_tuning_job(parent=parent, hyperparameter_tuning_job=body)
    deadline = time.monotonic() + 60
    while job.state not in (JobState.JOB_STATE_SUCCEEDED, JobState.JOB_STATE_FAILED):
        assert time.monotonic() < deadline, f"job still {job.state.name}"
        time.sleep(0.1)
        job = client.get_hyperparameter_tuning_job(name=job.name)
    return job


def by_id(job: Any) -> dict[str, Any]:
    return {trial.id: trial for trial in job.trials}


@pytest.mark.parametrize("rule", ["median_automated_stopping_spec", "decay_curve_stopping_spec"])
def test_a_bad_curve_is_stopped_early_and_good_ones_finish(
    client: aiplatform_v1.JobServiceClient, parent: str, rule: str, local_cloud: LocalCloud
) -> None:
    # Trials 1 and 2 climb to the end; in the second round trial 3 reports a flat bad curve.
    job = run(client, parent, tuning_job({rule: {}}, "--bad_trials=3"))
    assert job.state == JobState.JOB_STATE_SUCCEEDED
    trials = by_id(job)
    assert len(trials["3"].measurements) < STEPS
    assert trials["3"].state == aiplatform_v1.Trial.State.SUCCEEDED
    last = trials["3"].measurements[-1]
    assert trials["3"].final_measurement.step_count == last.step_count
    for good in ("1", "2", "4"):
        assert trials[good].state == aiplatform_v1.Trial.State.SUCCEEDED
        assert len(trials[good].measurements) == STEPS
        assert trials[good].final_measurement.step_count == STEPS
    log = local_cloud.home / "vertex" / "training" / job.name.rsplit("/", 1)[1] / "job.log"
    assert f"trial 3 stopped early: studySpec.{camel(rule)}" in log.read_text()


def camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(word.title() for word in rest)


def test_without_a_stopping_spec_every_trial_runs_to_its_end(
    client: aiplatform_v1.JobServiceClient, parent: str
) -> None:
    job = run(client, parent, tuning_job({}, "--bad_trials=3", "--sleep=0.05"))
    assert all(len(t.measurements) == STEPS for t in job.trials)


def test_median_rule_on_elapsed_duration(
    client: aiplatform_v1.JobServiceClient, parent: str
) -> None:
    study = {"median_automated_stopping_spec": {"use_elapsed_duration": True}}
    job = run(client, parent, tuning_job(study, "--bad_trials=3"))
    trials = by_id(job)
    assert len(trials["3"].measurements) < STEPS
    assert all(len(trials[t].measurements) == STEPS for t in ("1", "2", "4"))


def test_max_num_trials_caps_the_study(
    client: aiplatform_v1.JobServiceClient, parent: str
) -> None:
    study = {"study_stopping_config": {"max_num_trials": 3}}
    job = run(client, parent, tuning_job(study, "--steps=1", "--sleep=0", trials=6))
    assert job.state == JobState.JOB_STATE_SUCCEEDED
    assert len(job.trials) == 3


def test_max_num_trials_no_progress_stops_a_flat_study(
    client: aiplatform_v1.JobServiceClient, parent: str
) -> None:
    # Every trial scores the same: trial 1 sets the best, trials 2 and 3 bring no progress.
    study = {"study_stopping_config": {"max_num_trials_no_progress": 2}}
    job = run(client, parent, tuning_job(study, "--sleep=0", trials=8, parallel=1))
    assert len(job.trials) == 3


@pytest.mark.parametrize("asap", [True, False])
def test_maximum_runtime_ends_the_study_and_asap_its_trials(
    client: aiplatform_v1.JobServiceClient, parent: str, asap: bool
) -> None:
    # Trials take ~1.8 s; the study may run 1 s: no second round either way, and with
    # shouldStopAsap ("interrupt on-going evaluations of Trials") the first round is cut short.
    config = {"maximum_runtime_constraint": {"max_duration": "1s"}, "should_stop_asap": asap}
    job = run(client, parent, tuning_job({"study_stopping_config": config}, "--sleep=0.3"))
    assert len(job.trials) == 2
    assert all((len(t.measurements) < STEPS) == asap for t in job.trials)


def test_min_num_trials_holds_off_max_num_trials(
    client: aiplatform_v1.JobServiceClient, parent: str
) -> None:
    # "If there are fewer than this many COMPLETED trials, do not stop the study", checked
    # before maxNumTrials: the study runs until 3 trials are done.
    config = {"min_num_trials": 3, "max_num_trials": 1}
    study = {"study_stopping_config": config}
    job = run(client, parent, tuning_job(study, "--steps=1", "--sleep=0", trials=6, parallel=1))
    assert len(job.trials) == 3


def test_minimum_runtime_holds_off_max_num_trials(
    client: aiplatform_v1.JobServiceClient, parent: str
) -> None:
    # "If the specified time or duration has not passed, do not stop the study".
    # Each trial sleeps 0.5 s: a loaded machine still ends the first in well under 4 s, so a
    # second one starts; 60 of them take 30 s, far past the 4 s, so the study stops before.
    config = {"minimum_runtime_constraint": {"max_duration": "4s"}, "max_num_trials": 1}
    study = {"study_stopping_config": config}
    job = run(client, parent, tuning_job(study, "--steps=1", "--sleep=0.5", trials=60, parallel=1))
    assert 2 <= len(job.trials) < 60


def test_max_duration_no_progress_stops_a_flat_study(
    client: aiplatform_v1.JobServiceClient, parent: str
) -> None:
    # Every trial scores the same, so nothing improves after trial 1.
    study = {"study_stopping_config": {"max_duration_no_progress": "1s"}}
    job = run(client, parent, tuning_job(study, "--steps=1", "--sleep=0.1", trials=60, parallel=1))
    assert 2 <= len(job.trials) < 60  # 60 trials of 0.1 s at least take 6 s, far past 1 s


@pytest.mark.parametrize(
    ("study", "field"),
    [
        ({"convex_automated_stopping_spec": {"max_step_count": 10}},
         "studySpec.convexAutomatedStoppingSpec"),
        ({"observation_noise": "HIGH"}, "studySpec.observationNoise"),
        ({"metrics": [{"metric_id": "score", "goal": "MAXIMIZE"},
                      {"metric_id": "loss", "goal": "MINIMIZE"}],
          "study_stopping_config": {"max_num_trials_no_progress": 2}},
         "studySpec.studyStoppingConfig.maxNumTrialsNoProgress"),
        ({"study_stopping_config": {"max_num_trials": -1}},
         "studySpec.studyStoppingConfig.maxNumTrials"),
    ],
)  # fmt: skip
def test_unhonoured_fields_are_a_400_naming_them(
    client: aiplatform_v1.JobServiceClient, parent: str, study: dict, field: str
) -> None:
    before = len(list(client.list_hyperparameter_tuning_jobs(parent=parent)))
    with pytest.raises(exceptions.BadRequest, match=field):
        client.create_hyperparameter_tuning_job(
            parent=parent, hyperparameter_tuning_job=tuning_job(study)
        )
    assert len(list(client.list_hyperparameter_tuning_jobs(parent=parent))) == before
