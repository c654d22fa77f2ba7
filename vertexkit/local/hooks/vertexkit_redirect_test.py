"""Where the client hook sends Google's URLs and clients; its patches in a fresh process (the
hook is installed at interpreter start, so each check runs a real `python` with it)."""

import json
import os
import subprocess
import sys

import pytest

from vertexkit.local.hooks import HOOKS_DIR
from vertexkit.local.hooks import vertexkit_redirect as redirect
from vertexkit.local.process_env import process_env, with_client_hook

LOCAL = "http://127.0.0.1:9023"
LOCAL_ENV = {
    redirect.VERTEX_ENV: LOCAL,
    redirect.BIGQUERY_ENV: LOCAL,
    redirect.STORAGE_ENV: LOCAL,
    redirect.PROJECT_ENV: "local-project",
}


@pytest.fixture
def local_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in LOCAL_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1"
            "/endpoints/1:rawPredict",
            f"{LOCAL}/v1/projects/p/locations/us-central1/endpoints/1:rawPredict",
        ),
        ("https://aiplatform.googleapis.com/v1/x", f"{LOCAL}/v1/x"),
        ("https://europe-west4-aiplatform.googleapis.com/ui/x?a=1", f"{LOCAL}/ui/x?a=1"),
        (
            "https://www.googleapis.com/bigquery/v2/projects/p/jobs",
            f"{LOCAL}/bigquery/v2/projects/p/jobs",
        ),
        (
            "https://bigquery.googleapis.com/bigquery/v2/projects/p/jobs/j?location=US",
            f"{LOCAL}/bigquery/v2/projects/p/jobs/j?location=US",
        ),
        ("https://storage.googleapis.com/storage/v1/b", f"{LOCAL}/storage/v1/b"),
        ("https://cloudresourcemanager.googleapis.com/v3/projects/p", f"{LOCAL}/v3/projects/p"),
        ("https://oauth2.googleapis.com/token", None),  # nothing local answers it
        ("https://www.googleapis.com/oauth2/v4/token", None),
        ("https://example.com/v1/x", None),
        ("https://notaiplatform.googleapis.com.evil.example/v1/x", None),
        (f"{LOCAL}/v1/x", None),  # already local
    ],
    ids=lambda value: None if value is None else value.split("//")[-1][:40],
)
def test_a_google_url_maps_to_the_local_cloud(
    local_env: None, url: str, expected: str | None
) -> None:
    assert redirect.local_url(url) == expected


@pytest.mark.parametrize(
    ("kwargs", "transport", "endpoint"),
    [
        ({}, "rest", LOCAL),
        ({"transport": "grpc"}, "rest", LOCAL),
        ({"transport": "grpc_asyncio"}, "rest_asyncio", LOCAL),
        (
            {"client_options": {"api_endpoint": "us-central1-aiplatform.googleapis.com"}},
            "rest",
            LOCAL,
        ),
        ({"client_options": {"api_endpoint": "https://aiplatform.googleapis.com"}}, "rest", LOCAL),
        ({"client_options": {"api_endpoint": "vertex.internal.example:443"}}, None, None),
    ],
    ids=["defaults", "grpc", "async-grpc", "regional-host", "global-url", "private-endpoint"],
)
def test_a_gapic_client_is_aimed_at_the_local_cloud(
    local_env: None, kwargs: dict, transport: str | None, endpoint: str | None
) -> None:
    redirected = redirect.redirected_client_kwargs(kwargs)
    if endpoint is None:  # a non-Google endpoint is the caller's choice: left as given
        assert redirected is kwargs
        return
    assert redirected["transport"] == transport
    assert redirected["client_options"].api_endpoint == endpoint
    credentials = redirected["credentials"]
    expected = "google.auth.aio.credentials" if transport == "rest_asyncio" else "vertexkit"
    assert expected in type(credentials).__module__


def test_local_credentials_are_anonymous_and_carry_a_token_for_hand_built_headers() -> None:
    from google.auth.credentials import AnonymousCredentials

    credentials = redirect.local_credentials()
    credentials.refresh(None)  # GCPC refreshes before every request
    assert isinstance(credentials, AnonymousCredentials) and credentials.token
    headers: dict[str, str] = {}
    credentials.apply(headers)
    assert headers == {}  # Google's own libraries send no Authorization header


def test_the_hook_folder_comes_first_on_pythonpath_once() -> None:
    env = with_client_hook({"PYTHONPATH": os.pathsep.join(["/user/lib", str(HOOKS_DIR)])})
    assert env["PYTHONPATH"] == os.pathsep.join([str(HOOKS_DIR), "/user/lib"])
    assert process_env()["PYTHONPATH"].split(os.pathsep)[0] == str(HOOKS_DIR)


PROBE = """
import importlib, json
import google.auth
from google.cloud import aiplatform, aiplatform_v1
from google.cloud.aiplatform import initializer
credentials, project = google.auth.default()
importlib.reload(initializer)
client = aiplatform_v1.EndpointServiceClient(
    client_options={"api_endpoint": "us-central1-aiplatform.googleapis.com"})
print(json.dumps({
    "credentials": type(credentials).__mro__[1].__name__, "project": project,
    "sdk_endpoint": initializer.global_config.api_endpoint,
    "sdk_transport": initializer.global_config._api_transport,
    "client_transport": type(client._transport).__name__, "client_host": client._transport._host,
}))
"""


def run_probe(env: dict[str, str]) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120,
        check=True,
    )  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def test_a_process_the_local_cloud_starts_gets_the_local_cloud_by_default() -> None:
    found = run_probe(process_env(LOCAL_ENV))
    assert found == {
        "credentials": "AnonymousCredentials",
        "project": "local-project",
        "sdk_endpoint": LOCAL,  # after importlib.reload of the initializer
        "sdk_transport": "rest",
        "client_transport": "EndpointServiceRestTransport",
        "client_host": LOCAL,
    }


def test_without_the_local_cloud_variables_the_hook_changes_nothing(tmp_path) -> None:
    env = process_env({"GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "missing.json")})
    done = subprocess.run(
        [sys.executable, "-c", "import google.auth; google.auth.default()"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode != 0 and "missing.json" in done.stderr


@pytest.mark.parametrize(
    ("kwargs", "redirected"),
    [
        ({}, True),
        ({"credentials": object(), "transport": lambda **kw: None}, True),  # bigquery.Client's
        ({"client_options": {"api_endpoint": "bigquerystorage.googleapis.com"}}, True),
        ({"client_options": {"api_endpoint": "storage.internal.example:443"}}, False),
    ],
    ids=["defaults", "bigquery-client", "google-host", "private-endpoint"],
)
def test_a_storage_api_client_gets_a_plaintext_channel_to_the_local_server(
    monkeypatch: pytest.MonkeyPatch, kwargs: dict, redirected: bool
) -> None:
    from google.cloud.bigquery_storage_v1 import BigQueryReadClient

    monkeypatch.setenv(redirect.BIGQUERY_STORAGE_ENV, "127.0.0.1:9024")
    found = redirect.storage_api_client_kwargs(BigQueryReadClient, kwargs)
    if not redirected:
        assert found is kwargs
        return
    transport = found["transport"]
    assert type(transport).__name__ == "BigQueryReadGrpcTransport"
    assert transport._host == "127.0.0.1:9024" and "credentials" not in found


def test_two_copies_of_the_hook_installed_in_one_process_import_without_recursion() -> None:
    """`vertexkit run` under `vertexkit local exec`: sitecustomize installs the hook as
    `vertexkit_redirect`, then `import vertexkit.local` installs its Resource Manager patch
    from `vertexkit.local.hooks.vertexkit_redirect`: two module copies, two finder classes.
    Importing a patched module must find it once (this recursed to a RecursionError)."""
    script = "\n".join([
        "import sys",
        f"sys.path.insert(0, {str(HOOKS_DIR)!r})",
        "import vertexkit_redirect as first",
        "from vertexkit.local.hooks import vertexkit_redirect as second",
        "assert first is not second",
        "first.install()",
        "second.install_sdk_projects()",
        "from google.cloud.aiplatform.utils import resource_manager_utils",
        "print('imported')",
    ])  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "imported"
