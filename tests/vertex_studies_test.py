"""Vertex AI Vizier through `aiplatform_v1.VizierServiceClient` (REST) against the local cloud.

Expected behaviour is Google's, from the VizierService reference and the aiplatform.v1
proto docs: the source is named beside each check.
"""

from __future__ import annotations

import pathlib

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.projects import numbered_name

Spec = aiplatform_v1.StudySpec
LOW, HIGH = -5.0, 5.0


@pytest.fixture
def vizier(cloud_context: CloudContext) -> aiplatform_v1.VizierServiceClient:
    return cloud_context._gapic(aiplatform_v1.VizierServiceClient)


def quadratic_spec(**extra: object) -> Spec:
    """Maximise y = -(x - 1)^2 over x in [LOW, HIGH]."""
    return Spec(
        metrics=[Spec.MetricSpec(metric_id="y", goal=Spec.MetricSpec.GoalType.MAXIMIZE)],
        parameters=[
            Spec.ParameterSpec(
                parameter_id="x",
                double_value_spec=Spec.ParameterSpec.DoubleValueSpec(min_value=LOW, max_value=HIGH),
            )
        ],
        **extra,
    )


def new_study(vizier: aiplatform_v1.VizierServiceClient, parent: str, name: str,
              spec: Spec | None = None) -> aiplatform_v1.Study:  # fmt: skip
    study = aiplatform_v1.Study(display_name=name, study_spec=spec or quadratic_spec())
    return vizier.create_study(parent=parent, study=study)


def suggest(vizier: aiplatform_v1.VizierServiceClient, study: str, client: str = "c1",
            count: int = 1) -> aiplatform_v1.SuggestTrialsResponse:  # fmt: skip
    request = aiplatform_v1.SuggestTrialsRequest(
        parent=study, suggestion_count=count, client_id=client
    )
    return vizier.suggest_trials(request=request).result(timeout=30)


def measurement(value: float, step: int = 0) -> aiplatform_v1.Measurement:
    metric = aiplatform_v1.Measurement.Metric(metric_id="y", value=value)
    return aiplatform_v1.Measurement(step_count=step, metrics=[metric])


def test_suggest_complete_loop_and_optimal_trial(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    study = new_study(vizier, cloud_context.parent, "quadratic")
    # Study reference: name is projects/{p}/locations/{l}/studies/{study}; state ACTIVE.
    assert study.name.startswith(f"{numbered_name(cloud_context.parent)}/studies/")
    assert study.state == aiplatform_v1.Study.State.ACTIVE and study.create_time
    values = {}
    for _ in range(8):
        response = suggest(vizier, study.name)
        (trial,) = response.trials
        # Trial.State reference: ACTIVE "indicates that the Trial has been suggested".
        assert trial.state == aiplatform_v1.Trial.State.ACTIVE and trial.client_id == "c1"
        x = trial.parameters[0].value
        assert trial.parameters[0].parameter_id == "x" and LOW <= x <= HIGH
        done = vizier.complete_trial(
            request={"name": trial.name, "final_measurement": measurement(-((x - 1) ** 2))}
        )
        assert done.state == aiplatform_v1.Trial.State.SUCCEEDED and done.end_time
        values[trial.name] = -((x - 1) ** 2)
    assert len(set(values.values())) == 8  # eight different points of the range
    assert len(values) == 8  # a completed trial gives way to a new one (SuggestTrialsRequest)
    optimal = vizier.list_optimal_trials(request={"parent": study.name}).optimal_trials
    # ListOptimalTrialsResponse: "the optimal trial for single objective Study".
    assert [t.name for t in optimal] == [max(values, key=values.get)]
    listed = vizier.list_trials(parent=study.name)
    assert len(list(listed)) == 8


def test_the_same_client_gets_its_pending_trial_again(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    study = new_study(vizier, cloud_context.parent, "client-ids")
    first = suggest(vizier, study.name, "a").trials[0]
    # SuggestTrialsRequest.client_id: "the identical suggested Trial if the Trial is pending".
    assert suggest(vizier, study.name, "a").trials[0].name == first.name
    other = suggest(vizier, study.name, "b").trials[0]
    assert other.name != first.name
    vizier.complete_trial(request={"name": first.name, "final_measurement": measurement(1.0)})
    # ... "and provide a new Trial if the last suggested Trial was completed."
    assert suggest(vizier, study.name, "a").trials[0].name not in (first.name, other.name)


def test_lookup_by_display_name(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    study = new_study(vizier, cloud_context.parent, "look-me-up")
    found = vizier.lookup_study(request={"parent": cloud_context.parent,
                                         "display_name": "look-me-up"})  # fmt: skip
    assert found.name == study.name
    with pytest.raises(exceptions.NotFound):
        vizier.lookup_study(request={"parent": cloud_context.parent, "display_name": "nope"})
    # A taken displayName is ALREADY_EXISTS (HTTP 409, which api_core's REST mapping names
    # Conflict): the SDK's Study.create_or_load then looks the study up.
    with pytest.raises(exceptions.Conflict, match="already exists"):
        new_study(vizier, cloud_context.parent, "look-me-up")
    vizier.delete_study(name=study.name)
    with pytest.raises(exceptions.NotFound):
        vizier.get_study(name=study.name)


def test_a_bad_study_spec_is_a_400_naming_the_field(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    spec = quadratic_spec()
    spec.parameters[0].double_value_spec.min_value = 10.0  # above maxValue
    with pytest.raises(exceptions.BadRequest, match="maxValue"):
        new_study(vizier, cloud_context.parent, "bad-range", spec)
    with pytest.raises(exceptions.BadRequest, match="displayName"):
        vizier.create_study(parent=cloud_context.parent,
                            study=aiplatform_v1.Study(study_spec=quadratic_spec()))  # fmt: skip
    assert not [s for s in vizier.list_studies(parent=cloud_context.parent)
                if s.display_name == "bad-range"]  # fmt: skip


def test_measurements_complete_without_final_and_stop(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    study = new_study(vizier, cloud_context.parent, "measured")
    trial = suggest(vizier, study.name).trials[0]
    for step, value in ((1, 0.5), (2, 0.25)):
        vizier.add_trial_measurement(
            request={"trial_name": trial.name, "measurement": measurement(value, step)}
        )
    done = vizier.complete_trial(request={"name": trial.name})
    # CompleteTrialRequest: without final_measurement the service "auto-selects a previously
    # reported measurement"; MeasurementSelectionType's default is the last one.
    assert done.final_measurement.metrics[0].value == 0.25 and len(done.measurements) == 2
    with pytest.raises(exceptions.BadRequest):  # FAILED_PRECONDITION: already SUCCEEDED
        vizier.complete_trial(request={"name": trial.name})
    empty = suggest(vizier, study.name).trials[0]
    # Trial.State.INFEASIBLE: "when it's done but missing the final_measurement".
    assert vizier.complete_trial(request={"name": empty.name}).state == (
        aiplatform_v1.Trial.State.INFEASIBLE
    )
    pending = suggest(vizier, study.name).trials[0]
    assert vizier.stop_trial(request={"name": pending.name}).state == (
        aiplatform_v1.Trial.State.STOPPING
    )


def test_median_rule_stops_a_trial_below_the_completed_ones(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    median = Spec.MedianAutomatedStoppingSpec()
    study = new_study(vizier, cloud_context.parent, "median",
                      quadratic_spec(median_automated_stopping_spec=median))  # fmt: skip
    for value in (1.0, 2.0, 3.0):
        trial = suggest(vizier, study.name, f"good-{value}").trials[0]
        vizier.add_trial_measurement(request={"trial_name": trial.name,
                                              "measurement": measurement(value, 1)})  # fmt: skip
        vizier.complete_trial(request={"name": trial.name})
    good, bad = (suggest(vizier, study.name, c).trials[0] for c in ("good", "bad"))
    for trial, value in ((good, 2.5), (bad, 0.5)):
        vizier.add_trial_measurement(request={"trial_name": trial.name,
                                              "measurement": measurement(value, 1)})  # fmt: skip

    # MedianAutomatedStoppingSpec: stop when the best value is strictly below the median (2.0).
    def should_stop(trial: aiplatform_v1.Trial) -> bool:
        operation = vizier.check_trial_early_stopping_state(request={"trial_name": trial.name})
        return operation.result(timeout=30).should_stop

    assert not should_stop(good)
    assert should_stop(bad)
    assert vizier.get_trial(name=bad.name).state == aiplatform_v1.Trial.State.STOPPING


def test_grid_search_runs_out_and_the_study_completes(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    spec = Spec(
        metrics=[Spec.MetricSpec(metric_id="y", goal=Spec.MetricSpec.GoalType.MINIMIZE)],
        parameters=[Spec.ParameterSpec(parameter_id="n", integer_value_spec=(
            Spec.ParameterSpec.IntegerValueSpec(min_value=1, max_value=3)))],
        algorithm=Spec.Algorithm.GRID_SEARCH,
    )  # fmt: skip
    study = new_study(vizier, cloud_context.parent, "grid", spec)
    response = suggest(vizier, study.name, count=5)
    assert sorted(t.parameters[0].value for t in response.trials) == [1, 2, 3]
    # Study.State.COMPLETED: "the service exhausts the parameter search space".
    assert response.study_state == aiplatform_v1.Study.State.COMPLETED
    with pytest.raises(exceptions.BadRequest, match="contexts"):
        contexts = [{"description": "weekday"}]
        vizier.suggest_trials(request={"parent": study.name, "suggestion_count": 1,
                                       "client_id": "x", "contexts": contexts})  # fmt: skip


def test_a_user_trial_is_checked_against_the_spec(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    study = new_study(vizier, cloud_context.parent, "user-trials")
    outside = aiplatform_v1.Trial(parameters=[{"parameter_id": "x", "value": 99.0}])
    with pytest.raises(exceptions.BadRequest, match=r"parameters\[0\].value"):
        vizier.create_trial(parent=study.name, trial=outside)
    inside = aiplatform_v1.Trial(parameters=[{"parameter_id": "x", "value": 1.0}],
                                 final_measurement=measurement(0.0))  # fmt: skip
    created = vizier.create_trial(parent=study.name, trial=inside)
    assert created.state == aiplatform_v1.Trial.State.SUCCEEDED
    optimal = vizier.list_optimal_trials(request={"parent": study.name}).optimal_trials
    assert [t.name for t in optimal] == [created.name]


def test_optimal_trials_of_two_metrics_are_the_pareto_set(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    goal = Spec.MetricSpec.GoalType
    spec = quadratic_spec()
    spec.metrics = [Spec.MetricSpec(metric_id="y", goal=goal.MAXIMIZE),
                    Spec.MetricSpec(metric_id="cost", goal=goal.MINIMIZE)]  # fmt: skip
    study = new_study(vizier, cloud_context.parent, "pareto", spec)
    names = {}
    for label, y, cost in (("best-y", 3.0, 3.0), ("cheapest", 1.0, 1.0), ("dominated", 0.5, 2.0)):
        metrics = [{"metric_id": "y", "value": y}, {"metric_id": "cost", "value": cost}]
        trial = aiplatform_v1.Trial(parameters=[{"parameter_id": "x", "value": 0.0}],
                                    final_measurement={"metrics": metrics})  # fmt: skip
        names[vizier.create_trial(parent=study.name, trial=trial).name] = label
    optimal = vizier.list_optimal_trials(request={"parent": study.name}).optimal_trials
    # ListOptimalTrialsResponse: "the pareto-optimal Trials for multiple objective Study";
    # "dominated" is worse than "cheapest" on both metrics.
    assert sorted(names[t.name] for t in optimal) == ["best-y", "cheapest"]


def test_a_requested_trial_is_suggested_before_new_ones(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    study = new_study(vizier, cloud_context.parent, "requested")
    wanted = aiplatform_v1.Trial(parameters=[{"parameter_id": "x", "value": 2.0}])
    asked = vizier.create_trial(parent=study.name, trial=wanted)
    # Trial.State.REQUESTED: "requested, but it has not yet been suggested by the service".
    assert asked.state == aiplatform_v1.Trial.State.REQUESTED
    (given,) = suggest(vizier, study.name, "worker").trials
    assert given.name == asked.name and given.state == aiplatform_v1.Trial.State.ACTIVE


def test_stopping_rules_not_run_locally_are_refused(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    decay = Spec.DecayCurveAutomatedStoppingSpec(use_elapsed_duration=False)
    with pytest.raises(exceptions.BadRequest, match="decayCurveStoppingSpec"):
        new_study(vizier, cloud_context.parent, "decay",
                  quadratic_spec(decay_curve_stopping_spec=decay))  # fmt: skip


def test_a_restarted_local_cloud_keeps_the_study_and_goes_on_suggesting(
    tmp_path: pathlib.Path,
) -> None:
    home = tmp_path / "home"
    cloud = LocalCloud(home=home).start()
    try:
        vizier = cloud.context()._gapic(aiplatform_v1.VizierServiceClient)
        study = new_study(vizier, cloud.context().parent, "restart")
        first = suggest(vizier, study.name).trials[0]
        vizier.complete_trial(request={"name": first.name, "final_measurement": measurement(1)})
    finally:
        cloud.stop()
    cloud = LocalCloud(home=home).start()
    try:
        vizier = cloud.context()._gapic(aiplatform_v1.VizierServiceClient)
        assert vizier.get_trial(name=first.name).state == aiplatform_v1.Trial.State.SUCCEEDED
        second = suggest(vizier, study.name).trials[0]
        assert second.name.endswith("/trials/2")  # trial IDs go on counting in the study
        assert second.parameters[0].value != first.parameters[0].value
    finally:
        cloud.stop()


def test_max_num_trials_ends_the_study(
    vizier: aiplatform_v1.VizierServiceClient, cloud_context: CloudContext
) -> None:
    stopping = Spec.StudyStoppingConfig(max_num_trials=2)
    study = new_study(vizier, cloud_context.parent, "budget",
                      quadratic_spec(study_stopping_config=stopping))  # fmt: skip
    response = suggest(vizier, study.name, count=3)
    # StudyStoppingConfig.max_num_trials: "If there are more than this many trials, stop the
    # study"; Study.State.COMPLETED: "max_trial_count is reached".
    assert len(response.trials) == 2
    assert response.study_state == aiplatform_v1.Study.State.COMPLETED
