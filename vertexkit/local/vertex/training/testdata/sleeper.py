"""Starts a child process, records both PIDs in argv[1], then sleeps: for cancel and timeout."""

import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(sys.argv[1], "w") as out:
    out.write(f"{subprocess.os.getpid()} {child.pid}")
time.sleep(600)
