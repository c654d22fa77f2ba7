"""The console on a running local cloud: its headers, and that only its own pages can act.

Each refused action is checked against its control (the same form from the console's own page
is accepted and pauses the schedule), and after a refusal the schedule is unchanged.
"""

# No `from __future__ import annotations`: KFP reads the component's real type annotations.

import re
import time
import uuid
from pathlib import Path

import pytest
import requests
import yaml
from kfp import compiler, dsl

from vertexkit.local import LocalCloud
from vertexkit.local.projects import numbered_name

PARENT = "projects/local-project/locations/us-central1"
SPEC = {
    "pipelineInfo": {"name": "console-test"},
    "root": {"dag": {"tasks": {}}},
    "schemaVersion": "2.1.0",
}


@pytest.fixture
def schedule(local_cloud: LocalCloud) -> str:
    body = {
        "displayName": f"nightly-{uuid.uuid4().hex[:6]}",
        "cron": "0 3 1 1 *",
        "maxConcurrentRunCount": "1",
        "createPipelineJobRequest": {
            "parent": PARENT,
            "pipelineJob": {
                "pipelineSpec": SPEC,
                "runtimeConfig": {"gcsOutputDirectory": "gs://console-test/root"},
            },
        },
    }
    created = requests.post(f"{local_cloud.url}/v1/{PARENT}/schedules", json=body, timeout=30)
    assert created.status_code == 200, created.text
    return created.json()["name"]


def state_of(cloud: LocalCloud, name: str) -> str:
    return requests.get(f"{cloud.url}/v1/{name}", timeout=30).json()["state"]


def console_session(cloud: LocalCloud, page: str = "schedules") -> tuple[requests.Session, str]:
    """A browser's session: the cookie from a console page and the token in its form."""
    session = requests.Session()
    answer = session.get(f"{cloud.url}/console/{page}", timeout=30)
    token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', answer.text)
    assert token, f"the {page} page carries a CSRF token: {answer.status_code} {answer.text[:500]}"
    return session, token.group(1)


def test_pages_forbid_framing_and_foreign_code(local_cloud: LocalCloud) -> None:
    page = requests.get(f"{local_cloud.url}/console/pipelines", timeout=30)
    assert page.status_code == 200
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "httponly" in page.headers["Set-Cookie"].lower()


def act(cloud: LocalCloud, action: str, name: str, page: str = "schedules") -> requests.Response:
    """A console form post as the browser sends it from the console's own page."""
    session, token = console_session(cloud, page)
    return session.post(
        f"{cloud.url}/console/actions/{action}",
        data={"csrf_token": token, "name": name},
        headers={"Origin": cloud.url, "Sec-Fetch-Site": "same-origin"},
        allow_redirects=False,
        timeout=30,
    )


def test_the_console_own_forms_pause_and_resume_a_schedule(
    local_cloud: LocalCloud, schedule: str
) -> None:
    answer = act(local_cloud, "pause", schedule)
    assert answer.status_code == 303, answer.text
    assert state_of(local_cloud, schedule) == "PAUSED"
    assert act(local_cloud, "resume", schedule).status_code == 303
    assert state_of(local_cloud, schedule) == "ACTIVE"


@dsl.component(install_kfp_package=False)
def wait_a_minute(seconds: float) -> float:
    import time

    time.sleep(seconds)
    return seconds


@dsl.pipeline(name="console-cancel")
def slow_pipeline(seconds: float = 60.0) -> float:
    return wait_a_minute(seconds=seconds).output


def test_cancel_button_cancels_a_running_run(local_cloud: LocalCloud, tmp_path: Path) -> None:
    compiler.Compiler().compile(slow_pipeline, str(tmp_path / "slow.yaml"))
    body = {
        "displayName": "console-cancel",
        "pipelineSpec": yaml.safe_load((tmp_path / "slow.yaml").read_text()),
        "runtimeConfig": {"gcsOutputDirectory": f"gs://console-{uuid.uuid4().hex[:8]}/root"},
    }
    created = requests.post(f"{local_cloud.url}/v1/{PARENT}/pipelineJobs", json=body, timeout=30)
    assert created.status_code == 200, created.text
    name = created.json()["name"]
    page = requests.get(f"{local_cloud.url}/console/{name}", timeout=30).text
    assert 'action="/console/actions/cancel"' in page
    answer = act(local_cloud, "cancel", name, page=name)  # the run's page: it has the form
    assert answer.status_code == 303 and answer.headers["location"] == f"/console/{name}"
    deadline = time.monotonic() + 60
    while state_of(local_cloud, name) != "PIPELINE_STATE_CANCELLED":
        assert time.monotonic() < deadline, state_of(local_cloud, name)
        time.sleep(0.2)
    page = requests.get(f"{local_cloud.url}/console/{name}", timeout=30).text
    assert 'action="/console/actions/cancel"' not in page


def test_an_unknown_action_is_refused(local_cloud: LocalCloud, schedule: str) -> None:
    answer = act(local_cloud, "delete", schedule)
    assert answer.status_code == 400
    assert "action" in answer.json()["error"]["message"]
    assert state_of(local_cloud, schedule) == "ACTIVE"


@pytest.mark.parametrize(
    ("origin", "send_token", "send_cookie", "refusal"),
    [
        pytest.param("http://evil.example", True, True, "Origin", id="cross-origin"),
        pytest.param(None, True, True, "Origin", id="no-origin"),
        pytest.param("SELF", False, True, "CSRF", id="no-token"),
        pytest.param("SELF", True, False, "CSRF", id="token-without-its-cookie"),
    ],
)
def test_other_posts_are_refused_and_change_nothing(
    local_cloud: LocalCloud,
    schedule: str,
    origin: str | None,
    send_token: bool,
    send_cookie: bool,
    refusal: str,
) -> None:
    session, token = console_session(local_cloud)
    if not send_cookie:
        session.cookies.clear()
    headers = {"Origin": local_cloud.url if origin == "SELF" else origin} if origin else {}
    form = {"name": schedule, **({"csrf_token": token} if send_token else {})}
    answer = session.post(
        f"{local_cloud.url}/console/actions/pause", data=form, headers=headers, timeout=30
    )
    assert answer.status_code == 403
    assert refusal in answer.json()["error"]["message"]
    assert state_of(local_cloud, schedule) == "ACTIVE"


def test_a_forged_token_is_refused(local_cloud: LocalCloud, schedule: str) -> None:
    session, token = console_session(local_cloud)
    forged = ("0" if token[0] != "0" else "1") + token[1:]
    answer = session.post(
        f"{local_cloud.url}/console/actions/pause",
        data={"csrf_token": forged, "name": schedule},
        headers={"Origin": local_cloud.url},
        timeout=30,
    )
    assert answer.status_code == 403
    assert state_of(local_cloud, schedule) == "ACTIVE"


def test_html_artifact_is_served_sandboxed(local_cloud: LocalCloud) -> None:
    bucket = f"console-{uuid.uuid4().hex[:8]}"
    local_cloud.storage.ensure_bucket(bucket)
    path = local_cloud.storage.gs_uri_to_path(f"gs://{bucket}/report.html")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("<html><script>parent.document.title='owned'</script></html>")
    answer = requests.get(
        f"{local_cloud.url}/console/artifact",
        params={"uri": f"gs://{bucket}/report.html", "type": "html"},
        timeout=30,
    )
    assert answer.status_code == 200
    policy = answer.headers["Content-Security-Policy"]
    assert policy.startswith("sandbox;") and "default-src 'none'" in policy
    assert answer.headers["Content-Type"].startswith("text/html")


@pytest.mark.parametrize(
    "uri",
    [
        pytest.param("gs://b/../../vertex/vertex.sqlite", id="dot-dot"),
        pytest.param("/etc/passwd", id="not-gs"),
    ],
)
def test_artifact_route_reads_only_objects(local_cloud: LocalCloud, uri: str) -> None:
    answer = requests.get(f"{local_cloud.url}/console/artifact", params={"uri": uri}, timeout=30)
    assert answer.status_code in (400, 404)
    assert "sqlite" not in answer.headers.get("Content-Type", "")


@pytest.fixture
def empty_endpoint(local_cloud: LocalCloud) -> str:
    endpoint_id = f"console-{uuid.uuid4().hex[:8]}"
    created = requests.post(
        f"{local_cloud.url}/v1/{PARENT}/endpoints",
        params={"endpointId": endpoint_id},
        json={"displayName": "empty"},
        timeout=30,
    )
    assert created.status_code == 200, created.text
    return f"{PARENT}/endpoints/{endpoint_id}"


@pytest.mark.parametrize(
    ("instances", "message"),
    [
        pytest.param("[[1, 2", "instances: not JSON", id="not-json"),
        pytest.param("[]", "instances must be a non-empty JSON list", id="empty-list"),
        pytest.param("[[1, 2]]", "no deployed model", id="nothing-deployed"),
    ],
)
def test_predict_form_shows_the_endpoint_refusal(
    local_cloud: LocalCloud, empty_endpoint: str, instances: str, message: str
) -> None:
    # The endpoint's own page: its predict form carries the token whatever else exists (the
    # schedules page has forms only once some test made a schedule).
    session, token = console_session(local_cloud, page=empty_endpoint)
    answer = session.post(
        f"{local_cloud.url}/console/actions/predict",
        data={"csrf_token": token, "name": empty_endpoint, "instances": instances},
        headers={"Origin": local_cloud.url},
        timeout=30,
    )
    assert answer.status_code == 400
    assert answer.headers["Content-Security-Policy"].startswith("default-src 'self'")
    assert message in answer.text and 'id="prediction-error"' in answer.text


def test_bigquery_table_page_shows_schema_and_first_rows(local_cloud: LocalCloud) -> None:
    page = requests.get(
        f"{local_cloud.url}/console/bigquery",
        params={"project": "bigquery-public-data", "dataset": "ml_datasets", "table": "penguins"},
        timeout=30,
    ).text
    assert "344 rows" in page
    assert "<td>culmen_length_mm</td><td>FLOAT</td>" in page
    assert page.count("<td>Adelie Penguin (Pygoscelis adeliae)</td>") == 20  # first rows


def test_storage_page_lists_objects_and_downloads_them(local_cloud: LocalCloud) -> None:
    bucket = f"console-{uuid.uuid4().hex[:8]}"
    local_cloud.storage.ensure_bucket(bucket)
    path = local_cloud.storage.gs_uri_to_path(f"gs://{bucket}/data/<i>rows.csv")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("a,b\n1,2\n")
    root = requests.get(f"{local_cloud.url}/console/storage", params={"bucket": bucket}, timeout=30)
    assert "data/" in root.text
    folder = requests.get(
        f"{local_cloud.url}/console/storage",
        params={"bucket": bucket, "prefix": "data/"},
        timeout=30,
    ).text
    assert "&lt;i&gt;rows.csv" in folder and "<i>rows" not in folder
    download = requests.get(
        f"{local_cloud.url}/console/download",
        params={"uri": f"gs://{bucket}/data/<i>rows.csv"},
        timeout=30,
    )
    assert download.content == b"a,b\n1,2\n"
    assert download.headers["Content-Disposition"].startswith("attachment")


# -- compare and retry -------------------------------------------------------------------------
def finished_run(cloud: LocalCloud, threshold: float) -> str:
    """A run of a pipeline with no tasks and one parameter: it ends as soon as it starts."""
    spec = {
        **SPEC,
        "root": {
            "inputDefinitions": {"parameters": {"threshold": {"parameterType": "NUMBER_DOUBLE"}}},
            "dag": {"tasks": {}},
        },
        "components": {},
        "deploymentSpec": {"executors": {}},
    }
    body = {
        "displayName": f"compare-{threshold}",
        "pipelineSpec": spec,
        "runtimeConfig": {
            "gcsOutputDirectory": "gs://console-test/root",
            "parameterValues": {"threshold": threshold},
        },
    }
    created = requests.post(f"{cloud.url}/v1/{PARENT}/pipelineJobs", json=body, timeout=30)
    assert created.status_code == 200, created.text
    name = created.json()["name"]
    deadline = time.monotonic() + 60
    while state_of(cloud, name) != "PIPELINE_STATE_SUCCEEDED":
        assert time.monotonic() < deadline, state_of(cloud, name)
        time.sleep(0.1)
    return name


def test_compare_page_shows_two_runs_parameters_side_by_side(local_cloud: LocalCloud) -> None:
    first, second = finished_run(local_cloud, 0.5), finished_run(local_cloud, 0.7)
    page = requests.get(
        f"{local_cloud.url}/console/compare", params={"run": [first, second]}, timeout=30
    )
    assert page.status_code == 200, page.text
    assert '<tr class="differs"><th scope="row">threshold</th><td>0.5</td><td>0.7</td>' in page.text
    assert page.headers["Content-Security-Policy"].startswith("default-src 'self'")


@pytest.mark.parametrize(
    ("runs", "status", "message"),
    [
        pytest.param(["ONE"], 400, "run: select 2 to 10", id="one-run"),
        pytest.param(["ONE", f"{PARENT}/pipelineJobs/nope"], 404, "nope", id="unknown-run"),
        pytest.param(["ONE", f"{PARENT}/models/1"], 400, "not a pipeline job", id="not-a-run"),
    ],
)
def test_compare_refuses_a_bad_selection(
    local_cloud: LocalCloud, runs: list[str], status: int, message: str
) -> None:
    one = finished_run(local_cloud, 0.1)
    selection = [one if r == "ONE" else r for r in runs]
    page = requests.get(f"{local_cloud.url}/console/compare", params={"run": selection}, timeout=30)
    assert page.status_code == status
    assert message in page.text


def job_names(cloud: LocalCloud) -> set[str]:
    listed = requests.get(f"{cloud.url}/v1/{PARENT}/pipelineJobs", timeout=30).json()
    return {job["name"] for job in listed.get("pipelineJobs", [])}


@pytest.fixture
def cancelled_run(local_cloud: LocalCloud, tmp_path: Path) -> str:
    compiler.Compiler().compile(slow_pipeline, str(tmp_path / "slow.yaml"))
    body = {
        "displayName": "console-retry",
        "pipelineSpec": yaml.safe_load((tmp_path / "slow.yaml").read_text()),
        "runtimeConfig": {
            "gcsOutputDirectory": f"gs://console-{uuid.uuid4().hex[:8]}/root",
            "parameterValues": {"seconds": 60.0},
        },
    }
    created = requests.post(f"{local_cloud.url}/v1/{PARENT}/pipelineJobs", json=body, timeout=30)
    assert created.status_code == 200, created.text
    name = created.json()["name"]
    cancel_and_wait(local_cloud, name)
    return name


def cancel_and_wait(cloud: LocalCloud, name: str) -> None:
    requests.post(f"{cloud.url}/v1/{name}:cancel", json={}, timeout=30)
    deadline = time.monotonic() + 60
    while state_of(cloud, name) != "PIPELINE_STATE_CANCELLED":
        assert time.monotonic() < deadline, state_of(cloud, name)
        time.sleep(0.2)


def test_retry_creates_a_new_run_from_the_same_spec_and_config(
    local_cloud: LocalCloud, cancelled_run: str
) -> None:
    page = requests.get(f"{local_cloud.url}/console/{cancelled_run}", timeout=30).text
    assert 'action="/console/actions/retry"' in page
    before = job_names(local_cloud)
    answer = act(local_cloud, "retry", cancelled_run, page=cancelled_run)
    assert answer.status_code == 303, answer.text
    (retried,) = job_names(local_cloud) - before
    # The console links by the store's key (the project ID); the REST list names by number.
    assert numbered_name(answer.headers["location"].removeprefix("/console/")) == retried
    old = requests.get(f"{local_cloud.url}/v1/{cancelled_run}", timeout=30).json()
    new = requests.get(f"{local_cloud.url}/v1/{retried}", timeout=30).json()
    assert new["pipelineSpec"] == old["pipelineSpec"]
    assert new["runtimeConfig"] == old["runtimeConfig"]
    assert new["displayName"] == "console-retry"
    cancel_and_wait(local_cloud, retried)


@pytest.mark.parametrize(
    ("origin", "send_token", "status", "refusal"),
    [
        pytest.param("http://evil.example", True, 403, "Origin", id="cross-origin"),
        pytest.param("SELF", False, 403, "CSRF", id="no-token"),
    ],
)
def test_retry_from_elsewhere_is_refused_and_creates_nothing(
    local_cloud: LocalCloud,
    cancelled_run: str,
    origin: str,
    send_token: bool,
    status: int,
    refusal: str,
) -> None:
    session, token = console_session(local_cloud, page=cancelled_run)
    before = job_names(local_cloud)
    form = {"name": cancelled_run, **({"csrf_token": token} if send_token else {})}
    answer = session.post(
        f"{local_cloud.url}/console/actions/retry",
        data=form,
        headers={"Origin": local_cloud.url if origin == "SELF" else origin},
        allow_redirects=False,
        timeout=30,
    )
    assert answer.status_code == status
    assert refusal in answer.json()["error"]["message"]
    assert job_names(local_cloud) == before


@pytest.mark.parametrize(
    ("target", "message"),
    [
        pytest.param("SUCCEEDED", "can be retried", id="a-succeeded-run"),
        pytest.param(f"{PARENT}/models/1", "is not a pipeline job", id="not-a-run"),
    ],
)
def test_retry_of_a_run_that_did_not_fail_is_refused(
    local_cloud: LocalCloud, schedule: str, target: str, message: str
) -> None:
    del schedule  # its page hands out the session's token
    name = finished_run(local_cloud, 0.2) if target == "SUCCEEDED" else target
    before = job_names(local_cloud)
    answer = act(local_cloud, "retry", name)
    assert answer.status_code == 400
    assert answer.json()["error"]["message"].startswith("name: ")
    assert message in answer.json()["error"]["message"]
    assert job_names(local_cloud) == before
