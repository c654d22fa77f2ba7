"""A serving container that forks a child ignoring SIGTERM, records both PIDs in argv[1] and
answers 200 to every GET on AIP_HTTP_PORT: for stopping a deployment's whole process group."""

import http.server
import os
import subprocess
import sys

IGNORE_TERM = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"


class Healthy(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()


child = subprocess.Popen([sys.executable, "-c", IGNORE_TERM])
with open(sys.argv[1], "w") as out:
    out.write(f"{os.getpid()} {child.pid}")
http.server.HTTPServer(("127.0.0.1", int(os.environ["AIP_HTTP_PORT"])), Healthy).serve_forever()
