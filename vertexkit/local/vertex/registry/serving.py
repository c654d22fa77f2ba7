"""Serving a deployed model locally, the way its container would serve it on Vertex AI.

Two kinds of model server:

* Vertex's prebuilt prediction images (`.../vertex-ai/prediction/sklearn-cpu.1-5:latest`,
  `xgboost-cpu.2-1`, ...): there is no Docker here, so the artifact is loaded in this process with
  the same file rules and the same `predict()` call the container makes. `load_prebuilt` is public
  so other code (model evaluation) can predict exactly "the way the model will serve". A model
  deployed before the local cloud started loads in a process of its own instead, with the same
  code, while the cloud starts (`model_process`).
* A custom serving container whose `command` we can run: it runs as a local process with the
  environment Vertex gives a container (AIP_HTTP_PORT, AIP_PREDICT_ROUTE, AIP_HEALTH_ROUTE,
  AIP_STORAGE_URI, ...), is health-checked, and predict requests are forwarded to it.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import urllib3

from vertexkit.local.process_env import process_env
from vertexkit.local.processes import Group, ProcessGroups
from vertexkit.local.sockets import exposed_addresses

# The prebuilt images' loading rules live in the runtime, shared with model evaluation.
from vertexkit.runtime.prebuilt import (  # noqa: F401 (re-exported for the registry)
    Predictor,
    ServingError,
    load_prebuilt,
    prebuilt_framework,
)

PYTHON_NAMES = {"python", "python3", f"python{sys.version_info.major}.{sys.version_info.minor}"}
DEFAULT_STARTUP_SECONDS = 120.0
# A health check of a server not yet listening is a refused local connection (microseconds), so
# a container that became ready is seen within HEALTH_CHECK_CAP_SECONDS.
HEALTH_CHECK_FIRST_SECONDS = 0.02
HEALTH_CHECK_CAP_SECONDS = 0.1
STOP_GRACE_SECONDS = 5.0


# -- custom containers -------------------------------------------------------------------------
def runnable_command(container_spec: dict[str, Any]) -> list[str]:
    """The container's command as a local process, or a ServingError saying why it can't run."""
    image = container_spec.get("imageUri", "")
    command = list(container_spec.get("command") or [])
    if not command:
        raise ServingError(
            f"The serving container {image} has no `command`, and without Docker the local "
            "cloud cannot run an image's ENTRYPOINT. Upload the model with "
            "serving_container_command (e.g. ['python', '-m', 'your_server']) so it runs as a "
            "local process, or use a Vertex prebuilt scikit-learn/XGBoost prediction image."
        )
    if command[0] in PYTHON_NAMES:
        # The container's Python is this environment's Python: the nearest local equivalent.
        command[0] = sys.executable
    elif shutil.which(command[0]) is None:
        raise ServingError(
            f"The serving container command {command[0]!r} is not an executable on this machine "
            "(no Docker here). Give a Python command, e.g. ['python', '-m', 'your_server']."
        )
    return command


def expand(value: str, env: dict[str, str]) -> str:
    """Vertex expands `$(VAR)` in a container's command and args from its environment."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m[1], m[0]), value)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ContainerServer:
    """A custom serving container run as a local process, reached over HTTP on AIP_HTTP_PORT."""

    _http = urllib3.PoolManager(maxsize=16)

    def __init__(
        self,
        container_spec: dict[str, Any],
        env: dict[str, str],
        log_path: Path,
        startup_seconds: float = DEFAULT_STARTUP_SECONDS,
        groups: ProcessGroups | None = None,
    ) -> None:
        self.spec = container_spec
        self.port = free_port()
        self.predict_route = env["AIP_PREDICT_ROUTE"]
        self.health_route = env["AIP_HEALTH_ROUTE"]
        self.env = {**env, "AIP_HTTP_PORT": str(self.port)}
        self.log_path = log_path
        self.startup_seconds = startup_seconds
        self.groups = groups or ProcessGroups()
        self.process: Group | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Starts the process and waits until its health route answers 200."""
        env = process_env(self.env)
        command = [expand(part, env) for part in runnable_command(self.spec)]
        command += [expand(arg, env) for arg in self.spec.get("args") or []]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            # Its own process group (recorded): stop() and a restart after kill -9 end it all.
            self.process = self.groups.spawn(
                command, str(self.log_path), env=env, stdout=log, stderr=subprocess.STDOUT
            )
        self._wait_healthy()
        self._refuse_if_exposed()

    def _refuse_if_exposed(self) -> None:
        exposed = exposed_addresses(self.port)
        if not exposed:
            return
        self.stop()
        raise ServingError(
            f"The serving container listens on {exposed[0]} port {self.port}, which every "
            "network this machine is on can reach. Locally a serving container must listen on "
            "127.0.0.1 only: bind to the address in SERVING_BIND_HOST (the local cloud sets it "
            "to 127.0.0.1; on Vertex leave 0.0.0.0).",
            status=400,
        )

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_seconds
        delay = HEALTH_CHECK_FIRST_SECONDS
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.returncode() is not None:
                code = self.stop()
                raise ServingError(
                    f"The serving container exited with code {code} before "
                    f"it became healthy; see {self.log_path}.",
                    status=500,
                )
            if self.healthy():
                return
            time.sleep(delay)
            delay = min(delay * 1.5, HEALTH_CHECK_CAP_SECONDS)
        self.stop()
        raise ServingError(
            f"The serving container did not answer 200 on {self.health_route} (port "
            f"{self.port}) within {self.startup_seconds:.0f} s; see {self.log_path}.",
            status=500,
        )

    def healthy(self) -> bool:
        try:
            response = self._http.request(
                "GET", self.url + self.health_route, timeout=2.0, retries=False
            )
        except urllib3.exceptions.HTTPError:
            return False
        return response.status == 200

    def forward(self, body: dict[str, Any]) -> tuple[int, bytes]:
        """POSTs a predict body to the container; returns its status and raw answer."""
        if self.process is None or self.process.returncode() is not None:
            raise ServingError("The serving container is not running.", status=503)
        response = self._http.request(
            "POST",
            self.url + self.predict_route,
            body=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            timeout=600.0,
            retries=False,
        )
        return response.status, response.data

    def predict(self, instances: list[Any], parameters: Any = None) -> list[Any]:
        body: dict[str, Any] = {"instances": instances}
        if parameters is not None:
            body["parameters"] = parameters
        status, data = self.forward(body)
        if status != 200:
            raise ServingError(
                f"The serving container answered {status}: {data.decode(errors='replace')}",
                status=400 if 400 <= status < 500 else 500,
            )
        try:
            return json.loads(data)["predictions"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ServingError(
                f"The serving container's answer is not JSON with `predictions`: {exc}",
                status=500,
            ) from exc

    def stop(self) -> int | None:
        """Ends the container's whole process group (children too); its exit code."""
        return self.process.end(STOP_GRACE_SECONDS) if self.process else None


# -- the pool of running model servers ---------------------------------------------------------
class ServingPool:
    """Model servers by deployed model ID, started on first use (so a restart serves again)."""

    def __init__(self) -> None:
        self._servers: dict[str, Predictor] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, deployed_model_id: str, build: Any) -> Predictor:
        """The server for `deployed_model_id`, built once with `build()` if not running."""
        server = self._servers.get(deployed_model_id)
        if server is not None:
            return server
        with self._guard:
            lock = self._locks.setdefault(deployed_model_id, threading.Lock())
        with lock:
            server = self._servers.get(deployed_model_id)
            if server is None:
                server = build()
                self._servers[deployed_model_id] = server
            return server

    def put(self, deployed_model_id: str, server: Predictor) -> None:
        self._servers[deployed_model_id] = server

    def stop(self, deployed_model_id: str) -> None:
        server = self._servers.pop(deployed_model_id, None)
        stop = getattr(server, "stop", None)  # a process: a container's, or a model's
        if stop is not None:
            stop()

    def drop_if_stopped(self, deployed_model_id: str) -> None:
        """Forgets a model process that has died, so the next request serves it again."""
        server = self._servers.get(deployed_model_id)
        running = getattr(server, "running", None)
        if running is not None and not running():
            self.stop(deployed_model_id)

    def close(self) -> None:
        for deployed_model_id in list(self._servers):
            self.stop(deployed_model_id)
