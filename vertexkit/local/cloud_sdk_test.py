"""The local cloud's own Cloud SDK configuration, and the seal every process it starts gets."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vertexkit.local import LocalCloud
from vertexkit.local.cloud_sdk import NOT_REDIRECTED, config_dir, sdk_apis, write_config
from vertexkit.local.process_env import sealed

URL = "http://127.0.0.1:9023"
CLOUD = {
    "STORAGE_EMULATOR_HOST": URL,
    "VERTEX_AI_EMULATOR_HOST": URL,
    "BIGQUERY_EMULATOR_HOST": URL,
    "VERTEXKIT_HOME": "/somewhere/.vertexkit",
}
USERS_OWN = {
    "GOOGLE_APPLICATION_CREDENTIALS": "/home/me/key.json",
    "CLOUDSDK_CONFIG": "/home/me/.config/gcloud",
    "CLOUDSDK_CORE_ACCOUNT": "me@example.com",
    "BOTO_PATH": "/home/me/.boto",
}


def test_the_seal_drops_the_users_google_set_up_and_names_the_local_one() -> None:
    env = sealed({**CLOUD, **USERS_OWN, "PATH": "/usr/bin"})
    assert "GOOGLE_APPLICATION_CREDENTIALS" not in env and "CLOUDSDK_CORE_ACCOUNT" not in env
    assert "BOTO_PATH" not in env
    assert env["CLOUDSDK_CONFIG"] == "/somewhere/.vertexkit/cloudsdk"
    assert env["BOTO_CONFIG"] == "/somewhere/.vertexkit/cloudsdk/boto"
    for name in ("GCE_METADATA_HOST", "GCE_METADATA_IP", "GCE_METADATA_ROOT"):
        assert env[name] == "127.0.0.1:9023"
    assert env["CLOUD_STORAGE_EMULATOR_ENDPOINT"] == URL
    assert not Path(env["GOOGLE_GCLOUD_ADC_PATH_OVERRIDE"]).exists()
    assert env["PATH"] == "/usr/bin"


def test_without_a_local_cloud_nothing_is_sealed() -> None:
    assert sealed({**USERS_OWN, "PATH": "/usr/bin"}) == {**USERS_OWN, "PATH": "/usr/bin"}


def test_the_configuration_sends_served_apis_here_and_the_rest_to_a_refusal(
    tmp_path: Path,
) -> None:
    folder = write_config(tmp_path, URL, "my-project")
    assert folder == config_dir(tmp_path)
    parser = configparser.ConfigParser()
    parser.read(folder / "configurations" / "config_vertexkit-local")
    assert parser["core"]["project"] == "my-project"
    assert "account" not in parser["core"]  # credentials only from the metadata server
    overrides = parser["api_endpoint_overrides"]
    assert overrides["storage"] == f"{URL}/storage/v1/" and overrides["bigquery"] == f"{URL}/"
    for api in set(sdk_apis()) - {"storage", "bigquery", "ai", "aiplatform"}:
        assert overrides[api] == f"{URL}{NOT_REDIRECTED}/{api}/"
    assert "use_gcloud_storage = True" in (folder / "boto").read_text()


@pytest.mark.skipif(shutil.which("gcloud") is None, reason="this machine has no Cloud SDK")
def test_an_api_the_local_cloud_does_not_serve_is_refused_at_once(local_cloud: LocalCloud) -> None:
    vertexkit = Path(sys.executable).parent / "vertexkit"
    done = subprocess.run(
        [str(vertexkit), "local", "exec", "--", "gcloud", "compute", "instances", "list"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert "asked the 'compute' API, which the local cloud does not serve" in done.stderr


@pytest.mark.skipif(shutil.which("gcloud") is None, reason="this machine has no Cloud SDK")
def test_gcloud_ai_lists_the_local_vertex_custom_jobs(local_cloud: LocalCloud) -> None:
    context = local_cloud.context()
    job = {
        "display_name": "listed-by-gcloud",
        "job_spec": {"worker_pool_specs": [{
            "machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
            "container_spec": {"image_uri": "python:3.11", "command": ["true"]},
        }]},
    }  # fmt: skip
    context.job_client().create_custom_job(parent=context.parent, custom_job=job)
    vertexkit = Path(sys.executable).parent / "vertexkit"
    done = subprocess.run(
        [str(vertexkit), "local", "exec", "--", "gcloud", "ai", "custom-jobs", "list",
         f"--region={local_cloud.region}", "--format=value(displayName)"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "listed-by-gcloud" in done.stdout.split()
