"""The local cloud answers only its own clients: no web page can drive it, no job sees secrets.

Each refusal is checked against its control: the same request from a real client is accepted
(so the refused one would have done harm), and after the refusal nothing exists and nothing ran.
"""

from __future__ import annotations

import http.client
import json
import os
import sys
import time
from pathlib import Path

import pytest
from google.cloud import aiplatform

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.guard import MAX_JSON_BYTES

TESTDATA = Path(__file__).parents[1] / "vertexkit/local/vertex/training/testdata"
JOBS = "/v1/projects/local-project/locations/us-central1/customJobs"
EVIL = "http://evil.example"


def send(
    cloud: LocalCloud, method: str, path: str, body: bytes = b"", **headers: str
) -> tuple[int, dict]:
    """One raw HTTP request, headers exactly as given (browsers' names with `_` for `-`)."""
    connection = http.client.HTTPConnection("127.0.0.1", cloud.port, timeout=30)
    names = {name.replace("_", "-"): value for name, value in headers.items()}
    names.setdefault("Host", f"127.0.0.1:{cloud.port}")
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for name, value in {**names, "Content-Length": str(len(body))}.items():
        connection.putheader(name, value)
    connection.endheaders(body)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, json.loads(data) if data else {}


def job_body(marker: Path, display_name: str) -> bytes:
    """A custom job whose command writes `marker`: proof that it ran."""
    command = ["python", "-c", f"open({str(marker)!r}, 'w').write('ran')"]
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/app:1", "command": command},
    }
    return json.dumps(
        {"displayName": display_name, "jobSpec": {"workerPoolSpecs": [pool]}}
    ).encode()


def job_names(cloud: LocalCloud) -> list[str]:
    status, listing = send(cloud, "GET", JOBS)
    assert status == 200
    return [job["displayName"] for job in listing.get("customJobs", [])]


def wait_for(path: Path, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not path.exists():
        time.sleep(0.05)
    return path.exists()


@pytest.mark.parametrize(
    ("case", "headers"),
    [
        ("cross-site text/plain", {"Content-Type": "text/plain", "Origin": EVIL}),
        ("cross-site form", {"Content-Type": "application/x-www-form-urlencoded", "Origin": EVIL}),
        ("cross-site json", {"Content-Type": "application/json", "Origin": EVIL}),
        ("null origin", {"Content-Type": "text/plain", "Origin": "null"}),
        ("other local port", {"Content-Type": "text/plain", "Origin": "http://localhost:3000"}),
        (
            "fetch metadata only",
            {"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"},
        ),
        ("same-site page", {"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}),
        ("text/plain, no origin", {"Content-Type": "text/plain"}),
        ("no content type", {}),
    ],
)
def test_foreign_job_request_creates_nothing_and_runs_nothing(
    local_cloud: LocalCloud, tmp_path: Path, case: str, headers: dict[str, str]
) -> None:
    marker = tmp_path / "ran"
    status, answer = send(local_cloud, "POST", JOBS, job_body(marker, case), **headers)
    assert status in (400, 403), answer
    assert answer["error"]["status"] in ("PERMISSION_DENIED", "INVALID_ARGUMENT")
    assert case not in job_names(local_cloud)
    time.sleep(0.5)  # a job that had been created would start within this
    assert not marker.exists()


def test_the_same_job_from_a_client_runs(local_cloud: LocalCloud, tmp_path: Path) -> None:
    """The control: the request the browser cases send does run when a real client sends it."""
    marker = tmp_path / "ran"
    body = job_body(marker, "from a client")
    status, answer = send(local_cloud, "POST", JOBS, body, Content_Type="application/json")
    assert status == 200, answer
    assert wait_for(marker)


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "192.168.1.20:{port}", "0.0.0.0:{port}"]
)
def test_foreign_host_is_refused(local_cloud: LocalCloud, host: str) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 with its own name in Host: it reads nothing."""
    status, answer = send(local_cloud, "GET", JOBS, Host=host.format(port=local_cloud.port))
    assert status == 403
    assert "Host" in answer["error"]["message"]


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}"])
def test_loopback_hosts_are_served(local_cloud: LocalCloud, host: str) -> None:
    status, _ = send(local_cloud, "GET", JOBS, Host=host.format(port=local_cloud.port))
    assert status == 200


def test_own_origin_is_served(local_cloud: LocalCloud) -> None:
    """The console is served from the cloud's own origin: its requests pass."""
    origin = f"http://127.0.0.1:{local_cloud.port}"
    status, _ = send(local_cloud, "GET", JOBS, Origin=origin, Sec_Fetch_Site="same-origin")
    assert status == 200


def test_no_cors_is_offered(local_cloud: LocalCloud) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", local_cloud.port, timeout=10)
    connection.request(
        "OPTIONS", JOBS, headers={"Origin": EVIL, "Access-Control-Request-Method": "POST"}
    )
    response = connection.getresponse()
    response.read()
    assert response.getheader("Access-Control-Allow-Origin") is None
    assert response.status == 403


def test_cross_site_object_upload_writes_nothing(local_cloud: LocalCloud) -> None:
    bucket = "security-upload"
    assert (
        send(
            local_cloud,
            "POST",
            "/storage/v1/b?project=p",
            json.dumps({"name": bucket}).encode(),
            Content_Type="application/json",
        )[0]
        == 200
    )
    path = f"/upload/storage/v1/b/{bucket}/o?uploadType=media&name=page.txt"
    status, _ = send(
        local_cloud, "POST", path, b"from a page", Content_Type="text/plain", Origin=EVIL
    )
    assert status == 403
    assert send(local_cloud, "GET", f"/storage/v1/b/{bucket}/o/page.txt")[0] == 404
    status, _ = send(local_cloud, "POST", path, b"from a client", Content_Type="text/plain")
    assert status == 200  # media uploads keep their own content types


def test_form_encoded_bigquery_query_is_refused(local_cloud: LocalCloud) -> None:
    path = "/bigquery/v2/projects/local-project/queries"
    body = json.dumps({"query": "SELECT 1", "useLegacySql": False}).encode()
    status, answer = send(local_cloud, "POST", path, body, Content_Type="text/plain")
    assert status == 400
    assert "application/json" in answer["error"]["message"]
    assert send(local_cloud, "POST", path, body, Content_Type="application/json")[0] == 200


def test_oversized_body_is_refused_before_anything_exists(local_cloud: LocalCloud) -> None:
    padding = "x" * (MAX_JSON_BYTES + 1)
    body = json.dumps({"displayName": "oversized", "labels": {"pad": padding}}).encode()
    status, answer = send(local_cloud, "POST", JOBS, body, Content_Type="application/json")
    assert status == 413
    assert str(MAX_JSON_BYTES) in answer["error"]["message"]
    assert "oversized" not in job_names(local_cloud)


def test_job_sees_none_of_the_servers_secrets(
    cloud_context: CloudContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERTEXKIT_TEST_SECRET", "s3cret")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/home/me/key.json")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    cloud_context.init_aiplatform(staging_bucket="gs://vertexkit-staging")
    out = tmp_path / "env.json"
    container = {
        "image_uri": "us-docker.pkg.dev/p/r/app:1",
        "command": ["python", str(TESTDATA / "env_dump.py"), str(out)],
        "env": [{"name": "MY_SETTING", "value": "mine"}],
    }
    pool = {
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": 1,
        "container_spec": container,
    }
    aiplatform.CustomJob(display_name="env-check", worker_pool_specs=[pool]).run(timeout=60)
    env = json.loads(out.read_text())["all"]
    assert not {"VERTEXKIT_TEST_SECRET", "GOOGLE_APPLICATION_CREDENTIALS", "HTTPS_PROXY"} & set(env)
    assert env["MY_SETTING"] == "mine"
    assert env["CLOUD_ML_JOB_ID"]
    assert env["VERTEX_AI_EMULATOR_HOST"] == cloud_context.vertex_endpoint
    # First the job's own Python (execution.job_python), then this environment's tools.
    own, ours = env["PATH"].split(os.pathsep)[:2]
    assert own.endswith("/python/bin") and ours == str(Path(sys.executable).parent)


SERVER = """
import os
from http.server import BaseHTTPRequestHandler, HTTPServer

class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()

HTTPServer(({host!r}, int(os.environ["AIP_HTTP_PORT"])), Health).serve_forever()
"""


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="no /proc/net/tcp (not Linux)")
def test_serving_container_on_every_interface_is_refused(tmp_path: Path) -> None:
    from vertexkit.local.vertex.registry.serving import ContainerServer, ServingError

    env = {"AIP_PREDICT_ROUTE": "/predict", "AIP_HEALTH_ROUTE": "/health"}
    spec = {"imageUri": "us-docker.pkg.dev/p/r/server:1", "command": ["python", "-c"]}
    exposed = ContainerServer(
        {**spec, "args": [SERVER.format(host="0.0.0.0")]}, env, tmp_path / "exposed.log"
    )
    with pytest.raises(ServingError, match=r"listens on 0\.0\.0\.0 .*127\.0\.0\.1"):
        exposed.start()
    assert exposed.process is not None and exposed.process.returncode() is not None
    loopback = ContainerServer(
        {**spec, "args": [SERVER.format(host="127.0.0.1")]}, env, tmp_path / "loopback.log"
    )
    loopback.start()  # the control: the same server on loopback is served
    try:
        assert loopback.healthy()
    finally:
        loopback.stop()
