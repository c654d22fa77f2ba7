"""`vertexkit local exec -- pytest FILE`: a user's test file written for Vertex AI (Google's
clients with their defaults only) runs on the local cloud, and nothing tries to reach Google.

The harness gives the command an unreachable proxy and a pytest plugin that records (and
refuses) every connection or name lookup off this machine; `GOOGLE_APPLICATION_CREDENTIALS`
names a missing file, so default credentials found any other way than the local cloud's hook
would fail. A control file that does reach for Google shows the guard catches it.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "local_exec"
UNREACHABLE_PROXY = "http://127.0.0.1:9"
CLOUD_VARIABLES = (
    "VERTEX_AI_EMULATOR_HOST",
    "BIGQUERY_EMULATOR_HOST",
    "BIGQUERY_STORAGE_EMULATOR_HOST",
    "STORAGE_EMULATOR_HOST",
    "GOOGLE_CLOUD_PROJECT",
    "VERTEXKIT_HOME",
    "PYTHONPATH",
    "VERTEXKIT_OFF_MACHINE_LOG",  # this harness has its own guard; its control reaches out
)


def run_under_local_exec(user_file: str, work: Path) -> tuple[subprocess.CompletedProcess, str]:
    shutil.copy(DATA / user_file, work / f"test_{user_file}")
    shutil.copy(DATA / "connection_guard.py", work / "connection_guard.py")
    connections = work / "connections.txt"
    connections.write_text("")
    env = {k: v for k, v in os.environ.items() if k not in CLOUD_VARIABLES}
    env.update(
        {name: UNREACHABLE_PROXY for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy",
                                               "http_proxy", "grpc_proxy")},
        NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
        GOOGLE_APPLICATION_CREDENTIALS=str(work / "no-such-key.json"),
        CONNECTIONS_FILE=str(connections), PYTHONPATH=str(work),
    )  # fmt: skip
    vertexkit = Path(sys.executable).parent / "vertexkit"
    done = subprocess.run(
        [str(vertexkit), "local", "exec", "--home", str(work / "home"), "--",
         "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "connection_guard",
         f"test_{user_file}"],
        cwd=work, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    return done, connections.read_text()


def test_user_sdk_code_runs_on_the_local_cloud_and_nothing_reaches_google(
    tmp_path: Path,
) -> None:
    done, connections = run_under_local_exec("sdk_defaults_user.py", tmp_path)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    assert "8 passed" in done.stdout, done.stdout[-2000:]
    assert connections == "", connections


def test_the_guard_catches_code_that_reaches_for_google(tmp_path: Path) -> None:
    done, connections = run_under_local_exec("reaches_google_user.py", tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    recorded = connections.splitlines()
    assert any(line.startswith(("connect", "lookup")) for line in recorded), connections
    assert any(line.startswith("grpc ") for line in recorded), connections


@pytest.mark.parametrize("args", [["--"], []], ids=["dashes-only", "nothing"])
def test_local_exec_without_a_command_is_refused(tmp_path: Path, args: list[str]) -> None:
    vertexkit = Path(sys.executable).parent / "vertexkit"
    done = subprocess.run(
        [str(vertexkit), "local", "exec", "--home", str(tmp_path / "home"), *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "CMD" in done.stderr, done.stderr
    assert not (tmp_path / "home").exists()  # refused before a local cloud started
