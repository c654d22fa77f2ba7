"""BigQuery's warm imports pandas for a cloud whose run's tasks are about to run (a standby
driver, not LAZY), and not for a rerun expected from the cache (`standby.LAZY`) or a cloud with
no run coming (`local up`), whose requests may never need it. In a fresh interpreter: this test
process has imported pandas long ago."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vertexkit.local.vertex.pipelines.standby import LAZY, WARM

CODE = """
import sys, threading
from vertexkit.local import LocalCloud
standby = sys.argv[3] == "standby"
with LocalCloud(home=sys.argv[1], standby_driver=standby, standby_workers=sys.argv[2]):
    for thread in threading.enumerate():
        if thread.name == "vertexkit-warm-up":
            thread.join()
    print("pandas" in sys.modules)
"""


@pytest.mark.parametrize(
    ("mode", "driver", "imported"),
    [(WARM, "standby", True), (LAZY, "standby", False), (WARM, "none", False)],
)
def test_pandas_is_warmed_only_for_a_run_that_executes_tasks(
    tmp_path: Path, mode: str, driver: str, imported: bool
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CODE, str(tmp_path / "home"), mode, driver],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == str(imported)
