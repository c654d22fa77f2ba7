"""The collector's settings in vertexkit's own processes (`vertexkit.gc_tuning`), checked in a
fresh interpreter: this one is pytest's, with its own."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import gc, json
from vertexkit import gc_tuning
before = gc.get_threshold()
gc_tuning.collect_less_often()
during = gc.get_threshold()
import email.parser  # something to load
gc_tuning.imports_done()
print(json.dumps({"before": before, "during": during, "frozen": gc.get_freeze_count(),
                  "collects": gc.isenabled()}))
"""


def test_a_process_collects_less_often_while_importing_then_freezes_what_it_loaded() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    seen = json.loads(done.stdout)
    assert seen["during"] == [10_000, *seen["before"][1:]]  # only the youngest generation's
    assert seen["frozen"] > 10_000  # the interpreter's own modules and what was imported
    assert seen["collects"]  # never switched off: garbage is still collected
