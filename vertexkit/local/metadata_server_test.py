"""The metadata server a Vertex VM offers, as the local cloud serves it, read with plain HTTP and
with google-auth's own metadata client. Expected shapes from Google's Compute Engine metadata
server reference: every request needs `Metadata-Flavor: Google` and every answer carries it; the
token endpoint answers `access_token`, `expires_in`, `token_type: Bearer`; `?recursive=true` on
a service account answers its `email`, `scopes` and `aliases`."""

from __future__ import annotations

import google.auth.transport.requests
import pytest
import requests
from google.auth import compute_engine
from google.auth.compute_engine import _metadata

from vertexkit.local import LocalCloud
from vertexkit.local.metadata_server import custom_code_service_agent
from vertexkit.local.projects import project_number

FLAVOR = {"Metadata-Flavor": "Google"}


def get(cloud: LocalCloud, path: str, **kwargs: object) -> requests.Response:
    return requests.get(f"{cloud.url}/computeMetadata/v1/{path}", timeout=10, **kwargs)


def test_every_answer_needs_and_carries_the_flavor_header(local_cloud: LocalCloud) -> None:
    refused = get(local_cloud, "project/project-id")
    assert refused.status_code == 403 and refused.headers["Metadata-Flavor"] == "Google"
    answered = get(local_cloud, "project/project-id", headers=FLAVOR)
    assert answered.status_code == 200 and answered.headers["Metadata-Flavor"] == "Google"
    assert answered.text == local_cloud.project


def test_project_zone_and_account(local_cloud: LocalCloud) -> None:
    number = project_number(local_cloud.project)
    assert get(local_cloud, "project/numeric-project-id", headers=FLAVOR).text == number
    zone = get(local_cloud, "instance/zone", headers=FLAVOR).text
    assert zone == f"projects/{number}/zones/{local_cloud.region}-a"
    account = get(local_cloud, "instance/service-accounts/default/", headers=FLAVOR,
                  params={"recursive": "true"}).json()  # fmt: skip
    agent = custom_code_service_agent(local_cloud.project)
    assert agent == f"service-{number}@gcp-sa-aiplatform-cc.iam.gserviceaccount.com"
    assert account["email"] == agent and "default" in account["aliases"]
    assert "https://www.googleapis.com/auth/cloud-platform" in account["scopes"]
    listed = get(local_cloud, "instance/service-accounts/", headers=FLAVOR).text.split()
    assert listed == ["default/", f"{agent}/"]
    other = "instance/service-accounts/other@x.iam.gserviceaccount.com"
    for what in ("email", "token", "identity?audience=x", ""):  # an account the VM lacks: 404
        assert get(local_cloud, f"{other}/{what}", headers=FLAVOR).status_code == 404, what


def test_tokens(local_cloud: LocalCloud) -> None:
    token = get(local_cloud, "instance/service-accounts/default/token", headers=FLAVOR).json()
    assert set(token) == {"access_token", "expires_in", "token_type"}
    assert token["token_type"] == "Bearer" and 0 < token["expires_in"] <= 3600
    identity = "instance/service-accounts/default/identity"
    assert get(local_cloud, identity, headers=FLAVOR).status_code == 400  # audience required
    jwt = get(local_cloud, identity, headers=FLAVOR, params={"audience": "https://x"}).text
    assert jwt.count(".") == 2


def test_google_auth_finds_it_through_gce_metadata_host(
    local_cloud: LocalCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = local_cloud.url.removeprefix("http://")
    monkeypatch.setenv("GCE_METADATA_HOST", host)
    monkeypatch.setenv("GCE_METADATA_IP", host)
    # google-auth reads GCE_METADATA_HOST when it is imported; a process the local cloud starts
    # has it from its start (the seal_test cases), this one imported google-auth before.
    monkeypatch.setattr(_metadata, "_GCE_METADATA_HOST", host)
    request = google.auth.transport.requests.Request()
    assert _metadata.ping(request)  # google-auth's "am I on Google Compute Engine?"
    assert _metadata.get_project_id(request) == local_cloud.project
    credentials = compute_engine.Credentials()
    credentials.refresh(request)
    assert credentials.token
    assert credentials.service_account_email == custom_code_service_agent(local_cloud.project)
