"""The local cloud's KFP v2beta1 API, driven with `kfp.Client` (and, for the request shapes it
never sends, its own `kfp_server_api` clients) only.

Expected values come from KFP's API definition, as kfp-server-api 2.17.3 generates it from
kubeflow/pipelines backend/api/v2beta1/swagger/*.json:
- run states: `kfp_server_api/models/v2beta1_runtime_state.py` (RuntimeState in run.proto:
  PENDING, RUNNING, SUCCEEDED, SKIPPED, FAILED, CANCELING, CANCELED, PAUSED);
- storage states: `v2beta1_run_storage_state.py` (AVAILABLE, ARCHIVED);
- recurring-run status: `v2beta1_recurring_run_status.py` (ENABLED, DISABLED);
- filter operations: `v2beta1_predicate_operation.py` (filter.proto);
- the error body: grpc-gateway's `{error, code, message, details}` with google.rpc.Code values
  (INVALID_ARGUMENT 3, NOT_FOUND 5, FAILED_PRECONDITION 9).
"""

import json
import time
from pathlib import Path

import kfp
import kfp_server_api
import pytest
import requests
from kfp import compiler, dsl

from vertexkit.local import LocalCloud
from vertexkit.local.kfp import triggers

RUNTIME_STATES = {
    "PENDING",
    "RUNNING",
    "SUCCEEDED",
    "SKIPPED",
    "FAILED",
    "CANCELING",
    "CANCELED",
    "PAUSED",
}


@dsl.component(install_kfp_package=False)
def add(a: int, b: int) -> int:
    return a + b


@dsl.component(install_kfp_package=False)
def explode(message: str) -> str:
    raise RuntimeError(message)


@dsl.component(install_kfp_package=False)
def nap(seconds: float) -> float:
    import time

    time.sleep(seconds)
    return seconds


@dsl.pipeline(name="kfp-add")
def add_pipeline(a: int = 1, b: int = 2) -> int:
    return add(a=a, b=b).output


@dsl.pipeline(name="kfp-explode")
def explode_pipeline(message: str = "boom") -> str:
    return explode(message=message).output


@dsl.pipeline(name="kfp-nap")
def nap_pipeline(seconds: float = 60.0) -> float:
    return nap(seconds=seconds).output


@pytest.fixture(scope="module")
def client(local_cloud: LocalCloud) -> kfp.Client:
    return kfp.Client(host=local_cloud.url)


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("kfp-packages")
    paths = {}
    for name, function in (
        ("add", add_pipeline),
        ("explode", explode_pipeline),
        ("nap", nap_pipeline),
    ):
        path = folder / f"{name}.yaml"
        compiler.Compiler().compile(function, str(path))
        paths[name] = str(path)
    return paths


def error_of(raised: pytest.ExceptionInfo) -> dict:
    body = json.loads(raised.value.body)
    assert set(body) == {"error", "code", "message", "details"}  # grpc-gateway's shape
    assert body["error"] == body["message"]
    return body


def wait(client: kfp.Client, run_id: str, timeout: float = 120) -> kfp_server_api.V2beta1Run:
    return client.wait_for_run_completion(run_id, timeout=timeout, sleep_duration=0.2)


def wait_for_state(client: kfp.Client, run_id: str, states: set[str], timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.get_run(run_id)
        if run.state in states:
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} never reached {states}: {run.state}")


def test_healthz_and_the_default_experiment(client: kfp.Client) -> None:
    assert client.get_kfp_healthz().multi_user is False
    default = client.get_experiment(experiment_name="Default")
    assert default.storage_state == "AVAILABLE"


def test_upload_versions_and_a_run_from_a_version(client: kfp.Client, packages: dict) -> None:
    pipeline = client.upload_pipeline(packages["add"], pipeline_name="adder")
    assert client.get_pipeline_id("adder") == pipeline.pipeline_id
    second = client.upload_pipeline_version(
        packages["add"], "adder-v2", pipeline_id=pipeline.pipeline_id
    )
    versions = client.list_pipeline_versions(pipeline.pipeline_id).pipeline_versions
    assert [v.display_name for v in versions] == ["adder", "adder-v2"]
    assert (
        client.get_pipeline_version(pipeline.pipeline_id, second.pipeline_version_id).pipeline_spec[
            "pipelineInfo"
        ]["name"]
        == "kfp-add"
    )
    experiment = client.create_experiment("versions")
    run = client.run_pipeline(
        experiment.experiment_id,
        "from a version",
        params={"a": 5},
        pipeline_id=pipeline.pipeline_id,
        version_id=second.pipeline_version_id,
    )
    done = wait(client, run.run_id)
    assert done.state == "SUCCEEDED"
    assert done.pipeline_version_reference.pipeline_version_id == second.pipeline_version_id
    assert done.experiment_id == experiment.experiment_id
    tasks = {task.display_name: task for task in done.run_details.task_details}
    assert tasks["add"].state == "SUCCEEDED" and tasks["add"].run_id == run.run_id
    assert tasks["add"].parent_task_id == tasks["kfp-add"].task_id
    assert [s.state for s in done.state_history] == ["PENDING", "RUNNING", "SUCCEEDED"]
    assert done.finished_at and done.runtime_config.parameters == {"a": 5}

    with pytest.raises(kfp_server_api.ApiException) as refused:  # versions still there
        client.delete_pipeline(pipeline.pipeline_id)
    assert refused.value.status == 400 and error_of(refused)["code"] == 9
    for version in versions:
        client.delete_pipeline_version(pipeline.pipeline_id, version.pipeline_version_id)
    client.delete_pipeline(pipeline.pipeline_id)
    with pytest.raises(kfp_server_api.ApiException) as missing:
        client.get_pipeline(pipeline.pipeline_id)
    assert missing.value.status == 404 and error_of(missing)["code"] == 5


def test_create_run_from_pipeline_func(client: kfp.Client, local_cloud: LocalCloud) -> None:
    result = client.create_run_from_pipeline_func(
        add_pipeline, arguments={"a": 20, "b": 22}, experiment_name="from-func"
    )
    done = result.wait_for_run_completion(timeout=120)
    assert done.state == "SUCCEEDED"
    assert done.experiment_id == client.get_experiment(experiment_name="from-func").experiment_id
    # The run is a local PipelineJob, labelled with the run's ID, beside every other job.
    context = local_cloud.context()
    label = f'labels.vertexkit-kfp-run="{done.run_id}"'
    jobs = context.pipeline_client().list_pipeline_jobs(
        request={"parent": context.parent, "filter": label}
    )
    [job] = list(jobs)
    assert job.state.name == "PIPELINE_STATE_SUCCEEDED"
    listed = requests.get(f"{local_cloud.url}/console/pipelines", timeout=30).text
    assert job.name.rsplit("/", 1)[-1] in listed  # beside every other pipeline job
    page = requests.get(f"{local_cloud.url}/console/{job.name}", timeout=30).text
    assert f'href="/apis/v2beta1/runs/{done.run_id}"' in page


def test_create_run_from_pipeline_package(client: kfp.Client, packages: dict) -> None:
    result = client.create_run_from_pipeline_package(
        packages["add"], arguments={"b": 40}, run_name="from a package"
    )
    done = wait(client, result.run_id)
    assert done.state == "SUCCEEDED" and done.display_name == "from a package"
    assert done.pipeline_spec["pipelineInfo"]["name"] == "kfp-add"
    assert done.state in RUNTIME_STATES


def test_a_failing_run_reports_its_error(client: kfp.Client, packages: dict) -> None:
    result = client.create_run_from_pipeline_package(
        packages["explode"], arguments={"message": "no penguins"}
    )
    done = wait(client, result.run_id)
    assert done.state == "FAILED"
    assert "explode" in done.error.message
    [task] = [t for t in done.run_details.task_details if t.display_name == "explode"]
    assert task.state == "FAILED" and "no penguins" in task.error.message

    client._run_api.run_service_retry_run(result.run_id)  # retried in place: the same run ID
    again = wait_for_state(client, result.run_id, {"FAILED"}, timeout=120)
    assert again.run_id == result.run_id
    succeeded = client.create_run_from_pipeline_package(packages["add"])
    wait(client, succeeded.run_id)
    with pytest.raises(kfp_server_api.ApiException) as refused:
        client._run_api.run_service_retry_run(succeeded.run_id)
    assert error_of(refused)["code"] == 9 and "SUCCEEDED" in error_of(refused)["message"]


def test_terminate_cancels_the_run(client: kfp.Client, packages: dict) -> None:
    result = client.create_run_from_pipeline_package(packages["nap"], arguments={"seconds": 120})
    wait_for_state(client, result.run_id, {"RUNNING"})
    client.terminate_run(result.run_id)
    done = wait_for_state(client, result.run_id, {"CANCELED"}, timeout=60)
    assert done.finished_at is not None
    client.delete_run(result.run_id)
    with pytest.raises(kfp_server_api.ApiException) as missing:
        client.get_run(result.run_id)
    assert missing.value.status == 404


def test_list_runs_filters_sorts_and_pages(client: kfp.Client, packages: dict) -> None:
    experiment = client.create_experiment("paging")
    ids = []
    for index in range(3):
        run = client.run_pipeline(
            experiment.experiment_id,
            f"page-{index}",
            pipeline_package_path=packages["add"],
            params={"a": index},
        )
        ids.append(run.run_id)
        time.sleep(1.1)  # created_at has one-second resolution, as KFP stores it
    for run_id in ids:
        wait(client, run_id)
    first = client.list_runs(
        experiment_id=experiment.experiment_id, page_size=2, sort_by="created_at desc"
    )
    assert [r.display_name for r in first.runs] == ["page-2", "page-1"]
    assert first.total_size == 3 and first.next_page_token
    second = client.list_runs(
        experiment_id=experiment.experiment_id, page_size=2, page_token=first.next_page_token
    )
    assert [r.display_name for r in second.runs] == ["page-0"] and not second.next_page_token

    def named(predicates: list[dict]) -> list[str]:
        listed = client.list_runs(
            experiment_id=experiment.experiment_id,
            sort_by="display_name",
            filter=json.dumps({"predicates": predicates}),
        )
        return [r.display_name for r in listed.runs or []]

    assert named([{"operation": "EQUALS", "key": "display_name", "string_value": "page-1"}]) == [
        "page-1"
    ]
    assert named(
        [
            {"operation": "IS_SUBSTRING", "key": "display_name", "stringValue": "age-"},
            {"operation": "NOT_EQUALS", "key": "display_name", "stringValue": "page-0"},
        ]
    ) == ["page-1", "page-2"]
    assert named([{"operation": "IN", "key": "run_id", "string_values": {"values": ids[:2]}}]) == [
        "page-0",
        "page-1",
    ]
    assert len(named([{"operation": "EQUALS", "key": "state", "string_value": "SUCCEEDED"}])) == 3
    client.archive_run(ids[0])
    archived = [{"operation": "EQUALS", "key": "storage_state", "string_value": "ARCHIVED"}]
    assert named(archived) == ["page-0"]
    client.unarchive_run(ids[0])
    assert named(archived) == []
    with pytest.raises(kfp_server_api.ApiException) as refused:
        named([{"operation": "EQUALS", "key": "colour", "string_value": "red"}])
    assert error_of(refused)["code"] == 3 and "colour" in error_of(refused)["message"]


def test_a_recurring_run_fires_on_its_interval(client: kfp.Client, packages: dict) -> None:
    experiment = client.create_experiment("recurring")
    recurring = client.create_recurring_run(
        experiment.experiment_id,
        "every two seconds",
        interval_second=2,
        max_concurrency=1,
        pipeline_package_path=packages["add"],
        params={"a": 7},
        no_catchup=True,
    )
    assert recurring.status == "ENABLED" and recurring.trigger.periodic_schedule.interval_second
    mine = json.dumps(
        {
            "predicates": [
                {
                    "operation": "EQUALS",
                    "key": "recurring_run_id",
                    "string_value": recurring.recurring_run_id,
                }
            ]
        }
    )
    deadline = time.monotonic() + 60
    fired = []
    while time.monotonic() < deadline and not fired:
        fired = client.list_runs(experiment_id=experiment.experiment_id, filter=mine).runs or []
        time.sleep(0.3)
    assert fired, "the recurring run never fired"
    assert wait(client, fired[0].run_id).state == "SUCCEEDED"
    assert fired[0].recurring_run_id == recurring.recurring_run_id
    client.disable_recurring_run(recurring.recurring_run_id)
    assert client.get_recurring_run(recurring.recurring_run_id).status == "DISABLED"
    count = client.list_runs(experiment_id=experiment.experiment_id, filter=mine).total_size
    time.sleep(4.5)  # two intervals and more: nothing fires while disabled
    assert client.list_runs(experiment_id=experiment.experiment_id, filter=mine).total_size == count
    client.delete_recurring_run(recurring.recurring_run_id)

    with pytest.raises(kfp_server_api.ApiException) as refused:  # Vertex's five-field cron
        client.create_recurring_run(
            experiment.experiment_id,
            "five fields",
            cron_expression="*/5 * * * *",
            pipeline_package_path=packages["add"],
        )
    assert "trigger.cron_schedule.cron" in error_of(refused)["message"]


def test_every_field_is_honoured_or_refused_by_name(client: kfp.Client, packages: dict) -> None:
    spec = json.loads(json.dumps(__import__("yaml").safe_load(Path(packages["add"]).read_text())))

    def refusal(run: dict) -> str:
        with pytest.raises(kfp_server_api.ApiException) as refused:
            client._run_api.run_service_create_run(run={"display_name": "r", **run})
        assert refused.value.status == 400
        return error_of(refused)["message"]

    assert "run.colour" in refusal({"pipeline_spec": spec, "colour": "red"})
    assert "run.state is output only" in refusal({"pipeline_spec": spec, "state": "SUCCEEDED"})
    assert "run.runtime_config.pipeline_root" in refusal(
        {"pipeline_spec": spec, "runtime_config": {"pipeline_root": "minio://mlpipeline/v2"}}
    )
    assert "run.runtime_config.parameters" in refusal(
        {"pipeline_spec": spec, "runtime_config": {"parameters": {"c": 1}}}
    )
    assert "run.plugins_input" in refusal({"pipeline_spec": spec, "plugins_input": {"mlflow": {}}})
    assert "exactly one of pipeline_spec" in refusal({})
    # no local effect, and said so (docs/kfp.md): kept and answered
    run = client._run_api.run_service_create_run(
        run={
            "display_name": "as someone",
            "pipeline_spec": spec,
            "service_account": "pipeline-runner",
        }
    )
    assert client.get_run(run.run_id).service_account == "pipeline-runner"
    wait(client, run.run_id)
    with pytest.raises(kfp_server_api.ApiException) as unknown:
        client.list_runs(page_size=-1)
    assert error_of(unknown)["code"] == 3


def test_experiments_archive_with_their_runs(client: kfp.Client, packages: dict) -> None:
    experiment = client.create_experiment("to-archive", description="kept")
    with pytest.raises(kfp_server_api.ApiException) as taken:  # unique in its namespace
        client._experiment_api.experiment_service_create_experiment(
            experiment={"display_name": "to-archive"}
        )
    assert taken.value.status == 409 and error_of(taken)["code"] == 6
    run = client.run_pipeline(experiment.experiment_id, "in it", packages["add"])
    wait(client, run.run_id)
    client.archive_experiment(experiment.experiment_id)
    assert client.get_experiment(experiment.experiment_id).storage_state == "ARCHIVED"
    assert client.get_run(run.run_id).storage_state == "ARCHIVED"
    with pytest.raises(kfp_server_api.ApiException) as archived:
        client.run_pipeline(experiment.experiment_id, "too late", packages["add"])
    assert error_of(archived)["code"] == 9
    client.unarchive_experiment(experiment.experiment_id)
    client.delete_experiment(experiment.experiment_id)
    assert client.get_run(run.run_id).experiment_id == experiment.experiment_id  # runs stay
    names = [e.display_name for e in client.list_experiments(page_size=200).experiments]
    assert "to-archive" not in names and "Default" in names


def test_catch_up_and_concurrency_follow_the_clock(
    client: kfp.Client, local_cloud: LocalCloud, packages: dict
) -> None:
    """The firing rules, on a clock the test moves: missed times fire oldest first with
    catch-up, only the latest without; a due time waits while max_concurrency runs are active."""
    service = local_cloud.kfp
    # A second past a whole minute: (start, start + 185] then holds exactly three minute marks
    # (from a start 55 s or more into a minute it held four).
    start = time.time() // 60 * 60 + 1
    now = [start]
    service.clock = lambda: now[0]
    experiment = client.create_experiment("clocked")
    try:
        every_minute = {"cron_expression": "0 * * * * *", "max_concurrency": 10}
        catching_up = client.create_recurring_run(
            experiment.experiment_id,
            "catching up",
            pipeline_package_path=packages["add"],
            no_catchup=False,
            **every_minute,
        )
        latest_only = client.create_recurring_run(
            experiment.experiment_id,
            "latest only",
            pipeline_package_path=packages["add"],
            no_catchup=True,
            **every_minute,
        )
        waiting = client.create_recurring_run(
            experiment.experiment_id,
            "one at a time",
            interval_second=10,
            max_concurrency=1,
            pipeline_package_path=packages["nap"],
            no_catchup=False,
        )
        now[0] = start + 185  # three minutes and more later
        service.tick()

        def fired(recurring: kfp_server_api.V2beta1RecurringRun) -> list:
            mine = json.dumps(
                {
                    "predicates": [
                        {
                            "operation": "EQUALS",
                            "key": "recurring_run_id",
                            "string_value": recurring.recurring_run_id,
                        }
                    ]
                }
            )
            return client.list_runs(filter=mine, sort_by="scheduled_at").runs or []

        caught = fired(catching_up)
        assert len(caught) == 3
        times = [run.scheduled_at for run in caught]
        assert times == sorted(times) and all(t.second == 0 for t in times)
        assert len(fired(latest_only)) == 1
        [napping] = fired(waiting)  # 18 due times; the first is active, the rest wait
        client.disable_recurring_run(catching_up.recurring_run_id)
        client.disable_recurring_run(latest_only.recurring_run_id)
        client.terminate_run(napping.run_id)
        wait_for_state(client, napping.run_id, {"CANCELED"})
        service.tick()
        assert len(fired(waiting)) == 2  # a slot freed: the next due time fires
        for run in [*caught, *fired(latest_only)]:
            wait(client, run.run_id)
    finally:
        for recurring in (
            client.list_recurring_runs(
                experiment_id=experiment.experiment_id, page_size=200
            ).recurring_runs
            or []
        ):
            client.delete_recurring_run(recurring.recurring_run_id)
        service.clock = triggers.utc_now
        for run in (
            client.list_runs(experiment_id=experiment.experiment_id, page_size=200).runs or []
        ):
            if run.state not in {"SUCCEEDED", "FAILED", "CANCELED"}:
                client.terminate_run(run.run_id)


def test_vertexkit_schedule_kfp_host_creates_a_recurring_run_here(
    client: kfp.Client, local_cloud: LocalCloud, packages: dict, tmp_path: Path
) -> None:
    """`vertexkit schedule NAME --kfp-host URL`'s request (`scheduling.create_kfp`), answered by
    the local KFP API: the cron in KFP's six-field dialect, the concurrency as given."""
    from vertexkit import scheduling

    timing = scheduling.Timing(cron="*/5 * * * *", max_concurrent_run_count=2)
    recurring, note = scheduling.create_kfp(
        local_cloud.url, "add", Path(packages["add"]).read_text(), {"a": 3}, timing, tmp_path
    )
    assert "'0 */5 * * * *'" in note
    stored = client.get_recurring_run(recurring.recurring_run_id)
    assert stored.trigger.cron_schedule.cron == "0 */5 * * * *"
    assert stored.max_concurrency == "2" and stored.status == "ENABLED" and stored.no_catchup
    assert stored.runtime_config.parameters == {"a": 3}
    client.delete_recurring_run(recurring.recurring_run_id)
