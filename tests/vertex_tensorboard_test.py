"""TensorBoard time series data against the local cloud, through Google's clients: the
high-level SDK's `log_time_series_metrics` and `get_experiment_df`, and
`aiplatform_v1.TensorboardServiceClient` over REST for write, read, batchRead, readBlobData,
export, readSize, readUsage, the batch creates and the time series patch.

Expected values come from the REST reference (cloud.google.com/vertex-ai/docs/reference/rest/
v1/projects.locations.tensorboards...) and the SDK's docstrings, named beside each check."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, aiplatform_v1
from google.cloud.aiplatform.metadata import metadata

from vertexkit.context import CloudContext

SCALAR = aiplatform_v1.TensorboardTimeSeries.ValueType.SCALAR
BLOB_SEQUENCE = aiplatform_v1.TensorboardTimeSeries.ValueType.BLOB_SEQUENCE


@pytest.fixture
def sdk(cloud_context: CloudContext) -> CloudContext:
    cloud_context.init_aiplatform()
    return cloud_context


@pytest.fixture
def client(sdk: CloudContext) -> aiplatform_v1.TensorboardServiceClient:
    return aiplatform_v1.TensorboardServiceClient(
        credentials=AnonymousCredentials(), transport="rest",
        client_options=sdk.vertex_client_options(),
    )  # fmt: skip


@pytest.fixture
def run(sdk: CloudContext, client: aiplatform_v1.TensorboardServiceClient) -> str:
    """A fresh TensorBoard with one experiment and one run; the run's name."""
    board = client.create_tensorboard(parent=sdk.parent, tensorboard={"display_name": "b"})
    experiment = client.create_tensorboard_experiment(
        parent=board.result().name, tensorboard_experiment={}, tensorboard_experiment_id="exp"
    )
    return client.create_tensorboard_run(
        parent=experiment.name, tensorboard_run={"display_name": "r"}, tensorboard_run_id="r"
    ).name


def tensorboard_of(name: str) -> str:
    return name.split("/experiments/")[0]


def experiment_of(run: str) -> str:
    return run.split("/runs/")[0]


def make_series(client: Any, run: str, series_id: str, value_type: Any) -> str:
    created = client.batch_create_tensorboard_time_series(
        parent=experiment_of(run),
        requests=[{"parent": run, "tensorboard_time_series_id": series_id,
                   "tensorboard_time_series": {"display_name": series_id,
                                               "value_type": value_type}}],
    )  # fmt: skip
    return created.tensorboard_time_series[0].name


def scalars(series_id: str, values: dict[int, float]) -> dict:
    points = [
        {"step": step, "scalar": {"value": value}, "wall_time": {"seconds": 1_700_000_000 + step}}
        for step, value in values.items()
    ]
    return {"tensorboard_time_series_id": series_id, "value_type": SCALAR, "values": points}


def read(client: Any, series: str, **options: Any) -> list[tuple[int, float]]:
    request = {"tensorboard_time_series": series, **options}
    data = client.read_tensorboard_time_series_data(request=request)
    return [(point.step, point.scalar.value) for point in data.time_series_data.values]


# -- the high-level SDK ------------------------------------------------------------------------
@pytest.fixture
def global_tensorboard_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """`init(experiment_tensorboard=...)` makes a process-wide TensorBoard the SDK offers no
    way to unset, and every later `init(experiment=...)` then calls google.auth.default()
    (metadata._ExperimentTracker._get_global_tensorboard): put the old value back after."""
    tracker = metadata._experiment_tracker
    monkeypatch.setattr(tracker, "_global_tensorboard", tracker._global_tensorboard)


@pytest.mark.usefixtures("global_tensorboard_restored")
def test_logged_time_series_metrics_reach_the_experiment_data_frame(sdk: CloudContext) -> None:
    board = aiplatform.Tensorboard.create(display_name="curves")
    experiment = f"curves-{uuid.uuid4().hex[:8]}"
    sdk.init_aiplatform(experiment=experiment, experiment_tensorboard=board)
    aiplatform.start_run("run-1")
    aiplatform.log_time_series_metrics({"loss": 0.5}, step=1)
    aiplatform.log_time_series_metrics({"loss": 0.25, "accuracy": 0.8}, step=2)
    steps = aiplatform.ExperimentRun("run-1", experiment).get_time_series_data_frame()
    aiplatform.end_run()
    # get_experiment_df: one `time_series_metric.<name>` column per series, holding its latest
    # value (ExperimentRun._get_latest_time_series_metric_columns reads `values[-1]`).
    frame = aiplatform.get_experiment_df(experiment).set_index("run_name")
    assert frame.loc["run-1", "time_series_metric.loss"] == 0.25
    assert frame.loc["run-1", "time_series_metric.accuracy"] == 0.8
    # get_time_series_data_frame: one row per step with each series' value at it.
    assert list(steps["step"]) == [1, 2] and list(steps["loss"]) == [0.5, 0.25]


def test_the_sdk_system_tests_scalar_write_is_read_back(sdk: CloudContext) -> None:
    # The flow of python-aiplatform's tests/system/aiplatform/test_tensorboard.py.
    board = aiplatform.Tensorboard.create(display_name="system")
    experiment = aiplatform.TensorboardExperiment.create(
        tensorboard_experiment_id="vertex-sdk-e2e-test-experiment",
        tensorboard_name=board.resource_name, description="Vertex SDK Integration test.",
    )  # fmt: skip
    tb_run = aiplatform.TensorboardRun.create(
        tensorboard_run_id="test-run", tensorboard_experiment_name=experiment.resource_name
    )
    series = aiplatform.TensorboardTimeSeries.create(
        display_name="test-time-series", tensorboard_run_name=tb_run.resource_name
    )
    tb_run.write_tensorboard_scalar_data(time_series_data={series.display_name: 1.0}, step=1)
    # TensorboardRun.read_time_series_data: "print(time_series_data['loss'].values[-1]
    # .scalar.value)", keyed by display name.
    data = tb_run.read_time_series_data()["test-time-series"]
    assert [(p.step, p.scalar.value) for p in data.values] == [(1, 1.0)]


# -- write and read ----------------------------------------------------------------------------
def test_a_rewritten_step_is_overwritten_and_max_data_points_keeps_the_last(
    client: Any, run: str
) -> None:
    series = make_series(client, run, "loss", SCALAR)
    client.write_tensorboard_run_data(
        tensorboard_run=run, time_series_data=[scalars("loss", {s: s / 10 for s in range(5)})]
    )
    # "Repeated writes to the same step will overwrite the existing value for that step."
    client.write_tensorboard_run_data(
        tensorboard_run=run, time_series_data=[scalars("loss", {2: 9.0})]
    )
    assert read(client, series) == [(0, 0.0), (1, 0.1), (2, 9.0), (3, 0.3), (4, 0.4)]
    sampled = read(client, series, max_data_points=2)
    assert len(sampled) == 2 and sampled[-1] == (4, 0.4)
    # TensorboardTimeSeriesMetadata.maxStep: "Max step index of all data points".
    assert client.get_tensorboard_time_series(name=series).metadata.max_step == 4


def test_batch_read_answers_each_series_named(client: Any, run: str) -> None:
    loss, accuracy = (make_series(client, run, n, SCALAR) for n in ("loss", "accuracy"))
    client.write_tensorboard_run_data(
        tensorboard_run=run,
        time_series_data=[scalars("loss", {1: 0.5}), scalars("accuracy", {1: 0.7})],
    )
    answer = client.batch_read_tensorboard_time_series_data(
        request={"tensorboard": tensorboard_of(run), "time_series": [loss, accuracy]}
    )
    values = {
        d.tensorboard_time_series_id: d.values[0].scalar.value for d in answer.time_series_data
    }
    assert values == {"loss": 0.5, "accuracy": 0.7}


def test_experiment_write_reaches_every_run(client: Any, run: str) -> None:
    other = client.create_tensorboard_run(
        parent=experiment_of(run), tensorboard_run={"display_name": "o"}, tensorboard_run_id="o"
    ).name
    first, second = (
        make_series(client, run, "loss", SCALAR),
        make_series(client, other, "loss", SCALAR),
    )
    client.write_tensorboard_experiment_data(
        tensorboard_experiment=experiment_of(run),
        write_run_data_requests=[
            {"tensorboard_run": run, "time_series_data": [scalars("loss", {1: 0.1})]},
            {"tensorboard_run": other, "time_series_data": [scalars("loss", {1: 0.2})]},
        ],
    )
    assert read(client, first) == [(1, 0.1)] and read(client, second) == [(1, 0.2)]


# -- refused before anything is stored ---------------------------------------------------------
def test_a_scalar_sent_to_a_blob_sequence_series_is_refused(client: Any, run: str) -> None:
    images = make_series(client, run, "images", BLOB_SEQUENCE)
    with pytest.raises(exceptions.BadRequest, match="valueType"):
        client.write_tensorboard_run_data(
            tensorboard_run=run, time_series_data=[scalars("images", {1: 0.5})]
        )
    mislabelled = {**scalars("images", {1: 0.5}), "value_type": BLOB_SEQUENCE}
    with pytest.raises(exceptions.BadRequest, match=r"values\[0\]\.scalar"):
        client.write_tensorboard_run_data(tensorboard_run=run, time_series_data=[mislabelled])
    assert client.read_tensorboard_time_series_data(tensorboard_time_series=images) \
        .time_series_data.values == []  # fmt: skip


def test_data_for_a_series_that_does_not_exist_is_not_found(client: Any, run: str) -> None:
    series = make_series(client, run, "loss", SCALAR)
    with pytest.raises(exceptions.NotFound, match=f"{run}/timeSeries/nope"):
        client.write_tensorboard_run_data(
            tensorboard_run=run,
            time_series_data=[scalars("loss", {1: 0.5}), scalars("nope", {1: 0.5})],
        )
    assert read(client, series) == []  # the good half of the request was not stored either


def test_more_than_ten_thousand_points_is_a_bad_request(client: Any, run: str) -> None:
    series = make_series(client, run, "loss", SCALAR)
    # timeSeries.read: max_data_points "can't be greater than 10k".
    with pytest.raises(exceptions.BadRequest, match="maxDataPoints"):
        read(client, series, max_data_points=10_001)


# -- blobs, export -----------------------------------------------------------------------------
def test_blobs_written_inline_are_read_back_by_id(client: Any, run: str) -> None:
    series = make_series(client, run, "images", BLOB_SEQUENCE)
    blobs = {"values": [{"id": "png-1", "data": b"\x89PNG"}]}
    client.write_tensorboard_run_data(tensorboard_run=run, time_series_data=[
        {"tensorboard_time_series_id": "images", "value_type": BLOB_SEQUENCE,
         "values": [{"step": 1, "blobs": blobs}]}])  # fmt: skip
    # TensorboardBlob.data: "not present unless it's returned by the ReadTensorboardBlobData".
    point = client.read_tensorboard_time_series_data(tensorboard_time_series=series)
    assert [(b.id, b.data) for b in point.time_series_data.values[0].blobs.values] == [
        ("png-1", b"")
    ]
    answers = list(client.read_tensorboard_blob_data(request=blob_request(series, "png-1")))
    assert [(b.id, b.data) for b in answers[0].blobs] == [("png-1", b"\x89PNG")]
    with pytest.raises(exceptions.NotFound, match="png-2"):
        list(client.read_tensorboard_blob_data(request=blob_request(series, "png-2")))


def blob_request(series: str, blob_id: str) -> dict:
    return {"time_series": series, "blob_ids": [blob_id]}


def test_export_pages_through_every_point_in_the_order_asked(client: Any, run: str) -> None:
    series = make_series(client, run, "loss", SCALAR)
    client.write_tensorboard_run_data(
        tensorboard_run=run, time_series_data=[scalars("loss", {s: s / 10 for s in range(5)})]
    )
    request = {"tensorboard_time_series": series, "page_size": 2, "order_by": "step desc"}
    pager = client.export_tensorboard_time_series_data(request=request)
    assert [point.step for point in pager] == [4, 3, 2, 1, 0]
    first_page = next(iter(client.export_tensorboard_time_series_data(request=request).pages))
    assert len(first_page.time_series_data_points) == 2 and first_page.next_page_token


# -- size and usage ----------------------------------------------------------------------------
def test_size_grows_with_what_is_written_and_reads_are_counted(client: Any, run: str) -> None:
    board = tensorboard_of(run)
    assert client.read_tensorboard_size(tensorboard=board).storage_size_byte == 0
    series = make_series(client, run, "loss", SCALAR)
    client.write_tensorboard_run_data(
        tensorboard_run=run, time_series_data=[scalars("loss", {1: 1})]
    )
    one = client.read_tensorboard_size(tensorboard=board).storage_size_byte
    client.write_tensorboard_run_data(
        tensorboard_run=run, time_series_data=[scalars("loss", {2: 1})]
    )
    assert 0 < one < client.read_tensorboard_size(tensorboard=board).storage_size_byte
    read(client, series)
    read(client, series)
    # ReadTensorboardUsageResponse.monthlyUsageData: "Maps year-month (YYYYMM) string to per
    # month usage data"; viewCount: "Number of times the user has read data".
    usage = client.read_tensorboard_usage(tensorboard=board).monthly_usage_data
    month = datetime.now(timezone.utc).strftime("%Y%m")
    assert sum(u.view_count for u in usage[month].user_usage_data) == 2


# -- batch creates, patch ----------------------------------------------------------------------
def test_runs_are_created_in_a_batch_or_not_at_all(client: Any, run: str) -> None:
    experiment = experiment_of(run)
    created = client.batch_create_tensorboard_runs(parent=experiment, requests=[
        {"tensorboard_run": {"display_name": "a"}, "tensorboard_run_id": "a"},
        {"tensorboard_run": {"display_name": "b"}, "tensorboard_run_id": "b"}])  # fmt: skip
    assert [r.name for r in created.tensorboard_runs] == [
        f"{experiment}/runs/a",
        f"{experiment}/runs/b",
    ]
    with pytest.raises(exceptions.Conflict):
        client.batch_create_tensorboard_runs(parent=experiment, requests=[
            {"tensorboard_run": {"display_name": "c"}, "tensorboard_run_id": "c"},
            {"tensorboard_run": {"display_name": "a"}, "tensorboard_run_id": "a"}])  # fmt: skip
    names = {r.name.rsplit("/", 1)[1] for r in client.list_tensorboard_runs(parent=experiment)}
    assert names == {"r", "a", "b"}


def test_a_time_series_patch_changes_what_the_mask_names_only(client: Any, run: str) -> None:
    series = make_series(client, run, "loss", SCALAR)
    patched = client.update_tensorboard_time_series(
        tensorboard_time_series={"name": series, "display_name": "Loss", "description": "d"},
        update_mask={"paths": ["display_name"]},
    )
    assert (patched.display_name, patched.description) == ("Loss", "")
    # TensorboardTimeSeries.valueType: "Required. Immutable."
    with pytest.raises(exceptions.BadRequest, match="valueType"):
        client.update_tensorboard_time_series(
            tensorboard_time_series={"name": series, "value_type": BLOB_SEQUENCE},
            update_mask={"paths": ["value_type"]},
        )
