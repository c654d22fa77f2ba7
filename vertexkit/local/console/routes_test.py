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


def console_session(cloud: LocalCloud) -> tuple[requests.Session, str]:
    """A browser's session: the cookie from a console page and the token in its form."""
    session = requests.Session()
    page = session.get(f"{cloud.url}/console/schedules", timeout=30)
    token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text)
    assert token, "the schedules page carries a CSRF token"
    return session, token.group(1)


def test_pages_forbid_framing_and_foreign_code(local_cloud: LocalCloud) -> None:
    page = requests.get(f"{local_cloud.url}/console/pipelines", timeout=30)
    assert page.status_code == 200
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "httponly" in page.headers["Set-Cookie"].lower()


def act(cloud: LocalCloud, action: str, name: str) -> requests.Response:
    """A console form post as the browser sends it from the console's own page."""
    session, token = console_session(cloud)
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
    answer = act(local_cloud, "cancel", name)
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
    session, token = console_session(local_cloud)
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
