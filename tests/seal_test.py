"""What a trainer does with a Vertex VM's everyday tools reaches the local cloud, and only it.

Each tool runs as Google's samples run it, from a custom job's container command (REST through
the aiplatform SDK), from a pipeline task and under `vertexkit local exec`: pandas' default
`gs://` path (pyarrow's own GCS filesystem), `gsutil`, `gcloud storage`, `bq`, and Google's
auth library with the metadata server. Each must answer at once with what the local cloud
holds; before the seal, pandas waited on Google's metadata server until the job's time-out and
the Cloud SDK CLIs went to Google (with the user's account, when one is active).

The Cloud SDK cases need the Cloud SDK installed (this machine's kind has it; a machine without
it skips them, saying so). A custom job's `pip install` goes into the job's own environment,
never vertexkit's: checked by listing vertexkit's environment before and after.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pandas as pd
import pytest
from google.cloud import aiplatform
from google.cloud.aiplatform import jobs as sdk_jobs

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.metadata_server import custom_code_service_agent

BUCKET = "sealed-data"
GREETING = "hello from the local cloud"
# Each tool's command, and what it must print: the numbers 1, 2, 3 summed, the greeting, or
# who the local metadata server says the job runs as (the project's Custom Code Service Agent,
# as a Vertex custom job without `serviceAccount`; Vertex AI's access-control reference).
PYTHON_READS_PARQUET = (
    "import pandas as pd; print(pd.read_parquet('gs://sealed-data/numbers.parquet')['x'].sum())"
)
PYTHON_WRITES_PARQUET = (
    "import pandas as pd; pd.DataFrame({'x': [4, 5]}).to_parquet('gs://sealed-data/w.parquet');"
    " print(pd.read_parquet('gs://sealed-data/w.parquet')['x'].sum())"
)
PYTHON_AUTH = (
    "import google.auth, google.auth.transport.requests as r; "
    "from google.auth import compute_engine; "
    "credentials, project = google.auth.default(); "
    "gce = compute_engine.Credentials(); gce.refresh(r.Request()); "
    "print(project, gce.service_account_email, bool(gce.token))"
)
BQ_SUM = "SELECT SUM(x) AS total FROM `local-project.sealed.numbers`"
TOOLS = {
    "pandas-read-parquet": ([sys.executable, "-c", PYTHON_READS_PARQUET], "6"),
    "pandas-to-parquet": ([sys.executable, "-c", PYTHON_WRITES_PARQUET], "9"),
    "google-auth-and-metadata": ([sys.executable, "-c", PYTHON_AUTH], "{project} {agent} True"),
    "gsutil-cat": (["gsutil", "cat", f"gs://{BUCKET}/greeting.txt"], GREETING),
    "gcloud-storage-cat": (["gcloud", "storage", "cat", f"gs://{BUCKET}/greeting.txt"], GREETING),
    "bq-query": (["bq", "query", "--nouse_legacy_sql", "--format=csv", BQ_SUM], "total\n6"),
}
CLOUD_SDK = ("gsutil", "gcloud", "bq")


def needs(command: list[str]) -> None:
    if command[0] in CLOUD_SDK and shutil.which(command[0]) is None:
        pytest.skip(f"this machine has no Cloud SDK ({command[0]} is not on PATH)")


def expected(text: str, project: str) -> str:
    return text.format(project=project, agent=custom_code_service_agent(project))


def seed(context: CloudContext) -> None:
    """What the tools must read: an object, a Parquet file and a table on the local cloud."""
    storage = context.storage_client()
    if storage.bucket(BUCKET).exists():
        return
    bucket = storage.create_bucket(BUCKET)
    bucket.blob("greeting.txt").upload_from_string(GREETING)
    bucket.blob("numbers.parquet").upload_from_string(pd.DataFrame({"x": [1, 2, 3]}).to_parquet())
    bigquery = context.bigquery_client()
    bigquery.create_dataset("sealed", exists_ok=True)
    bigquery.query("CREATE TABLE sealed.numbers AS SELECT x FROM UNNEST([1, 2, 3]) AS x").result()


@pytest.fixture
def sealed_data(local_cloud: LocalCloud, cloud_context: CloudContext) -> LocalCloud:
    seed(cloud_context)
    return local_cloud


@pytest.fixture
def sdk(cloud_context: CloudContext, monkeypatch: pytest.MonkeyPatch) -> CloudContext:
    monkeypatch.setattr(sdk_jobs, "_JOB_WAIT_TIME", 0.1)  # the SDK polls every 5 s otherwise
    cloud_context.init_aiplatform(staging_bucket="gs://vertexkit-staging")
    return cloud_context


def shell_pool(script: str) -> dict:
    return {
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": 1,
        "container_spec": {
            "image_uri": "us-docker.pkg.dev/my-project/trainers/app:latest",
            "command": ["sh", "-c", script],
        },
    }


def quoted(command: list[str]) -> str:
    return " ".join(shlex.quote(word) for word in command)


# -- from a custom job -------------------------------------------------------------------------
@pytest.mark.parametrize("tool", TOOLS, ids=TOOLS)
def test_a_custom_jobs_tool_reaches_the_local_cloud(
    sealed_data: LocalCloud, sdk: CloudContext, tmp_path: Path, tool: str
) -> None:
    command, answer = TOOLS[tool]
    needs(command)
    out = tmp_path / "out.txt"
    job = aiplatform.CustomJob(
        display_name=f"sealed-{tool}",
        worker_pool_specs=[shell_pool(f"{quoted(command)} > {out} 2>&1")],
    )
    job.run(timeout=120)  # a tool that waits on Google fails here, at the job's time-out
    assert job.state.name == "JOB_STATE_SUCCEEDED", out.read_text()
    assert out.read_text().strip().endswith(expected(answer, sdk.project)), out.read_text()


# -- under `vertexkit local exec` ----------------------------------------------------------------
@pytest.mark.parametrize("tool", TOOLS, ids=TOOLS)
def test_a_tool_under_local_exec_reaches_the_local_cloud(
    sealed_data: LocalCloud, tmp_path: Path, tool: str
) -> None:
    """Exported variables as `local up` prints them; the user's own Google set-up (a key file,
    a Cloud SDK configuration) is in the environment too, and must not be used."""
    command, answer = TOOLS[tool]
    needs(command)
    user_sdk = tmp_path / "users-own-gcloud"
    env = {
        **os.environ,
        **sealed_data.env(),
        "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "users-own-key.json"),
        "CLOUDSDK_CONFIG": str(user_sdk),
    }
    vertexkit = Path(sys.executable).parent / "vertexkit"
    done = subprocess.run(
        [str(vertexkit), "local", "exec", "--", *command],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith(expected(answer, sealed_data.project)), done.stdout
    assert not user_sdk.exists()  # the user's configuration was never opened (nor created)


# -- a job's pip install -----------------------------------------------------------------------
def fake_distribution(folder: Path, name: str, version: str) -> Path:
    """A wheel of `name` at `version`, built here: installing it is what a downgrade does."""
    source = folder / f"{name}-src"
    (source / f"{name}_marker").mkdir(parents=True)
    (source / f"{name}_marker" / "__init__.py").write_text(f"VERSION = {version!r}\n")
    (source / "pyproject.toml").write_text(
        textwrap.dedent(f"""
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "{name}"
        version = "{version}"
    """)
    )
    wheels = folder / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(source)],
        check=True, capture_output=True,
    )  # fmt: skip
    return wheels


def installed_here() -> dict[str, str]:
    return {dist.metadata["Name"].lower(): dist.version for dist in metadata.distributions()}


@pytest.mark.parametrize("pip", ["python3 -m pip", "pip"])
def test_a_jobs_pip_install_leaves_vertexkits_environment_unchanged(
    sdk: CloudContext, tmp_path: Path, pip: str
) -> None:
    """The command of every KFP component wrapped as a custom job: pip install, then run. Here
    it installs an older `six` (vertexkit's environment holds a newer one) and a new package."""
    wheels = fake_distribution(tmp_path, "six", "0.0.1")
    wheels = fake_distribution(tmp_path, "vertexkit-seal-probe", "1.0")
    before = installed_here()
    out = tmp_path / "out.txt"
    script = (
        f"{pip} install -q --no-index --find-links {wheels} six==0.0.1 vertexkit-seal-probe"
        f" && python3 -c 'import six_marker, importlib.metadata as m;"
        f' print(m.version("six"), six_marker.VERSION)\' > {out} 2>&1'
    )
    job = aiplatform.CustomJob(display_name="sealed-pip", worker_pool_specs=[shell_pool(script)])
    job.run(timeout=120)
    assert job.state.name == "JOB_STATE_SUCCEEDED"
    assert out.read_text().split() == ["0.0.1", "0.0.1"]  # the job saw what it installed
    assert installed_here() == before  # and vertexkit's environment did not change


# -- the audit around every test (conftest.py) can fail -------------------------------------------
def test_the_audit_records_a_job_that_reaches_off_the_machine(
    sdk: CloudContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trainer that dials an address off the machine (192.0.2.1: TEST-NET-1, RFC 5737, never
    routed) is refused and recorded. The test points the audit at a log of its own, so the
    attempt it makes on purpose does not fail it."""
    own_log = tmp_path / "audit.log"
    monkeypatch.setenv("VERTEXKIT_OFF_MACHINE_LOG", str(own_log))
    dial = "import socket; socket.create_connection(('192.0.2.1', 443), timeout=5)"
    job = aiplatform.CustomJob(
        display_name="sealed-dial",
        worker_pool_specs=[shell_pool(quoted([sys.executable, "-c", dial]))],
    )
    with pytest.raises(RuntimeError):
        job.run(timeout=60)
    assert "connect ('192.0.2.1', 443)" in own_log.read_text()


@pytest.mark.skipif(shutil.which("gcloud") is None, reason="this machine has no Cloud SDK")
def test_gcloud_storage_cp_uploads_to_the_local_storage(
    sealed_data: LocalCloud, cloud_context: CloudContext, tmp_path: Path
) -> None:
    """`gcloud storage cp` uploads a small file as one multipart request whose boundary the
    Cloud SDK writes in single quotes (`boundary='===...=='`); Cloud Storage takes it, and so
    must the local one. The object is read back through google-cloud-storage."""
    source = tmp_path / "upload.txt"
    source.write_text("uploaded by gcloud")
    done = subprocess.run(
        [str(Path(sys.executable).parent / "vertexkit"), "local", "exec", "--",
         "gcloud", "storage", "cp", str(source), f"gs://{BUCKET}/from-gcloud.txt"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    blob = cloud_context.storage_client().bucket(BUCKET).blob("from-gcloud.txt")
    assert blob.download_as_text() == "uploaded by gcloud"
