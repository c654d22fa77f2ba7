"""Forks a child that ignores SIGTERM, records both PIDs in argv[1], then sleeps (or, with
`--exit`, exits 0 at once, leaving the child behind): for cancel, timeout and restart faults."""

import os
import signal
import subprocess
import sys
import time

IGNORE_TERM = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"

child = subprocess.Popen([sys.executable, "-c", IGNORE_TERM])
time.sleep(0.2)  # so the child has set its handler before anyone signals it
with open(sys.argv[1] + ".part", "w") as out:
    out.write(f"{os.getpid()} {child.pid}")
os.replace(sys.argv[1] + ".part", sys.argv[1])
if "--exit" in sys.argv:
    sys.exit(0)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
time.sleep(600)
