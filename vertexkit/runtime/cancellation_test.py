from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from vertexkit.runtime.cancellation import EXIT_CODE_ON_SIGTERM, cancel_on_sigterm

SCRIPT = """
import sys, time
from pathlib import Path
from vertexkit.runtime.cancellation import cancel_on_sigterm
marker = Path(sys.argv[1])
with cancel_on_sigterm() as scope:
    scope.cancel_with(lambda: marker.write_text("cancelled"))
    print("ready", flush=True)
    time.sleep(60)
marker.write_text("fell through")
"""


def test_sigterm_runs_the_cancel_action_and_exits(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(marker)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == EXIT_CODE_ON_SIGTERM
    assert time.monotonic() - started < 5
    assert marker.read_text() == "cancelled"


def test_handler_is_restored_after_the_block() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with cancel_on_sigterm(lambda: None):
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before
