"""`vertexkit local up` as a user runs it: prints exports, serves, stops on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

EXPECTED = {
    "GOOGLE_CLOUD_PROJECT",
    "STORAGE_EMULATOR_HOST",
    "BIGQUERY_EMULATOR_HOST",
    "VERTEX_AI_EMULATOR_HOST",
}


def test_local_up_prints_exports_first_then_serves_until_sigterm(tmp_path: Path) -> None:
    home = tmp_path / "home"
    command = [sys.executable, "-m", "vertexkit.cli", "local", "up", "--home", str(home)]
    process = subprocess.Popen(
        [*command, "--port", "0"], stdout=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    try:
        exports = {}
        while not exports.keys() >= EXPECTED:
            line = process.stdout.readline()
            assert line.startswith("export "), f"expected export lines first, got {line!r}"
            name, _, value = line.removeprefix("export ").strip().partition("=")
            exports[name] = value
        assert exports["STORAGE_EMULATOR_HOST"].startswith("http://127.0.0.1:")
        console = process.stdout.readline().strip()
        while console.startswith("export "):
            console = process.stdout.readline().strip()
        assert console == f"# console: {exports['STORAGE_EMULATOR_HOST']}/console/"
        client = storage.Client(
            project=exports["GOOGLE_CLOUD_PROJECT"],
            credentials=AnonymousCredentials(),
            client_options={"api_endpoint": exports["STORAGE_EMULATOR_HOST"]},
        )
        client.create_bucket("made-through-local-up")
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    assert (home / "storage" / "made-through-local-up").is_dir()  # state kept under --home
