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
from vertexkit.specs.serving import PROBE_DEFAULTS, duration_seconds

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


def serving_port(container_spec: dict[str, Any], use_declared: bool = True) -> int:
    """Vertex sets AIP_HTTP_PORT to `ports[0].containerPort` and sends traffic there
    (ModelContainerSpec.ports); so does the local cloud when that port is free on 127.0.0.1.
    Taken, the deploy fails naming the field. No port declared (Vertex's default 8080): a free
    port, so two local servers never collide."""
    ports = container_spec.get("ports") or []
    if not ports or not use_declared:
        return free_port()
    port = int(ports[0]["containerPort"])
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise ServingError(
                f"containerSpec.ports[0].containerPort {port} is in use on 127.0.0.1 ({exc}); "
                "the container cannot listen there. Free the port or upload with another.",
                status=400,
            ) from exc
    return port


class ProbeRunner:
    """One Kubernetes probe (ModelContainerSpec.startupProbe / healthProbe) run against the
    local process: exec in the container's environment, httpGet and tcpSocket on 127.0.0.1.
    A probe port equal to the container's declared port (or Vertex's default 8080) means the
    port the container actually listens on locally."""

    def __init__(self, probe: dict[str, Any], env: dict[str, str], port: int, declared: int):
        self.probe = probe
        self.env = env
        self.port = port
        self.declared = declared

    def setting(self, name: str) -> float:
        return float(self.probe.get(name) or PROBE_DEFAULTS[name])

    def _port(self, given: Any) -> int:
        return self.port if not given or int(given) == self.declared else int(given)

    def __call__(self) -> bool:
        """One try: True when the probe succeeds within timeoutSeconds."""
        timeout = self.setting("timeoutSeconds")
        if "exec" in self.probe:
            return self._exec(list(self.probe["exec"]["command"]), timeout)
        if "tcpSocket" in self.probe:
            return self._tcp(self._port(self.probe["tcpSocket"].get("port")), timeout)
        return self._http_get(self.probe["httpGet"], timeout)

    def _exec(self, command: list[str], timeout: float) -> bool:
        if command[0] in PYTHON_NAMES:
            command[0] = sys.executable
        try:
            done = subprocess.run(
                command, env=self.env, timeout=timeout, capture_output=True, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0

    @staticmethod
    def _tcp(port: int, timeout: float) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=timeout):
                return True
        except OSError:
            return False

    def _http_get(self, action: dict[str, Any], timeout: float) -> bool:
        scheme = (action.get("scheme") or "HTTP").lower()
        url = f"{scheme}://127.0.0.1:{self._port(action.get('port'))}{action.get('path') or '/'}"
        headers = {h["name"]: h.get("value", "") for h in action.get("httpHeaders") or []}
        try:
            # Kubernetes: any code from 200 to 399 is a success; it does not verify HTTPS.
            response = urllib3.PoolManager(cert_reqs="CERT_NONE").request(
                "GET", url, headers=headers, timeout=timeout, retries=False, redirect=False
            )
        except urllib3.exceptions.HTTPError:
            return False
        return 200 <= response.status < 400


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
        use_declared_port: bool = True,
    ) -> None:
        self.spec = container_spec
        self.port = serving_port(container_spec, use_declared_port)
        self.predict_route = env["AIP_PREDICT_ROUTE"]
        self.health_route = env["AIP_HEALTH_ROUTE"]
        self.env = {**env, "AIP_HTTP_PORT": str(self.port)}
        self.log_path = log_path
        timeout = container_spec.get("deploymentTimeout")  # the deploy fails after it
        self.startup_seconds = duration_seconds(timeout) if timeout else startup_seconds
        self.groups = groups or ProcessGroups()
        self.process: Group | None = None
        # Readiness after the deploy: the healthProbe keeps running (`_watch_health`).
        self.ready = True
        self.unready_reason = ""
        self._stopped = threading.Event()

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
        deadline = time.monotonic() + self.startup_seconds
        if self.spec.get("startupProbe"):
            self._wait_probe("startupProbe", deadline)
        if self.spec.get("healthProbe"):  # the readiness probe replaces the health route's
            self._wait_probe("healthProbe", deadline)
        else:
            self._wait_healthy(deadline)
        self._refuse_if_exposed()
        if self.spec.get("healthProbe"):
            threading.Thread(target=self._watch_health, daemon=True, name="health-probe").start()

    def _watch_health(self) -> None:
        """The healthProbe, every periodSeconds for as long as the server runs, as Kubernetes
        runs a readiness probe: failureThreshold failures in a row make the server unready (no
        prediction reaches it), successThreshold successes in a row make it ready again."""
        probe = self._probe("healthProbe")
        successes = failures = 0
        while not self._stopped.wait(probe.setting("periodSeconds")):
            if probe():
                successes, failures = successes + 1, 0
                if not self.ready and successes >= probe.setting("successThreshold"):
                    self._set_ready(True, "")
            else:
                successes, failures = 0, failures + 1
                if self.ready and failures >= probe.setting("failureThreshold"):
                    self._set_ready(False, f"its containerSpec.healthProbe failed {failures} "
                                    "times in a row (failureThreshold)")  # fmt: skip

    def serving(self) -> bool:
        """Whether a prediction sent now can be answered: running and ready."""
        return self.ready and self.process is not None and self.process.returncode() is None

    def _set_ready(self, ready: bool, reason: str) -> None:
        self.ready, self.unready_reason = ready, reason
        with self.log_path.open("a") as log:  # beside the container's own output
            log.write(f"[local cloud] {'ready again' if ready else 'not ready: ' + reason}\n")

    def _probe(self, name: str) -> ProbeRunner:
        ports = self.spec.get("ports") or [{"containerPort": 8080}]  # Vertex's default
        declared = int(ports[0]["containerPort"])
        return ProbeRunner(self.spec[name], process_env(self.env), self.port, declared)

    def _wait_probe(self, name: str, deadline: float) -> None:
        """Kubernetes probe semantics: after initialDelaySeconds, one try every periodSeconds;
        successThreshold successes in a row pass. failureThreshold failures in a row fail a
        startup probe (Kubernetes kills the container); a readiness probe keeps trying until
        the deployment timeout."""
        probe = self._probe(name)
        time.sleep(min(probe.setting("initialDelaySeconds"), max(deadline - time.monotonic(), 0)))
        successes = failures = 0
        while time.monotonic() < deadline:
            self._fail_if_exited()
            started = time.monotonic()
            if probe():
                successes, failures = successes + 1, 0
                if successes >= probe.setting("successThreshold"):
                    return
            else:
                successes, failures = 0, failures + 1
                if name == "startupProbe" and failures >= probe.setting("failureThreshold"):
                    self.stop()
                    raise ServingError(
                        f"containerSpec.startupProbe failed {failures} times in a row "
                        f"(failureThreshold); the container is not started. See {self.log_path}.",
                        status=500,
                    )
            pause = probe.setting("periodSeconds") - (time.monotonic() - started)
            time.sleep(max(0.0, min(pause, deadline - time.monotonic())))
        self._timed_out(f"its {name} did not pass")

    def _fail_if_exited(self) -> None:
        assert self.process is not None
        if self.process.returncode() is not None:
            code = self.stop()
            raise ServingError(
                f"The serving container exited with code {code} before "
                f"it became healthy; see {self.log_path}.",
                status=500,
            )

    def _timed_out(self, what: str) -> None:
        self.stop()
        field = " (containerSpec.deploymentTimeout)" if self.spec.get("deploymentTimeout") else ""
        raise ServingError(
            f"The serving container did not become ready within {self.startup_seconds:g} s"
            f"{field}: {what}; see {self.log_path}.",
            status=500,
        )

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

    def _wait_healthy(self, deadline: float) -> None:
        delay = HEALTH_CHECK_FIRST_SECONDS
        while time.monotonic() < deadline:
            self._fail_if_exited()
            if self.healthy():
                return
            time.sleep(delay)
            delay = min(delay * 1.5, HEALTH_CHECK_CAP_SECONDS)
        self._timed_out(f"it did not answer 200 on {self.health_route} (port {self.port})")

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
        if not self.ready:
            raise ServingError(
                f"The deployed model is not ready: {self.unready_reason}; predictions reach it "
                f"again once the probe passes. See {self.log_path}.",
                status=503,
            )
        try:
            response = self._http.request(
                "POST",
                self.url + self.predict_route,
                body=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
                timeout=600.0,
                retries=False,
            )
        except urllib3.exceptions.HTTPError as exc:  # not listening, or gone mid-request
            raise ServingError(
                f"The serving container did not answer on port {self.port}: {exc}; see "
                f"{self.log_path}.",
                status=503,
            ) from exc
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
        self._stopped.set()
        return self.process.end(STOP_GRACE_SECONDS) if self.process else None


class ReplicaSet:
    """A deployed model's replicas (DedicatedResources.minReplicaCount of them), one serving
    container each, behind the endpoint as Vertex's load balancer puts them: each prediction
    goes to the next replica that is running and ready, in turn; with none, it fails as one
    unready server does."""

    def __init__(self, replicas: list[ContainerServer]) -> None:
        self.replicas = replicas
        self._next = 0
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return self.replicas[0].url

    @property
    def predict_route(self) -> str:
        return self.replicas[0].predict_route

    def _in_turn(self) -> list[ContainerServer]:
        """The replicas from the next one on, those serving first; the turn moves on by one."""
        with self._lock:
            start = self._next
            self._next = (self._next + 1) % len(self.replicas)
        ordered = self.replicas[start:] + self.replicas[:start]
        return sorted(ordered, key=lambda replica: not replica.serving())

    def predict(self, instances: list[Any], parameters: Any = None) -> list[Any]:
        """A replica that is unready or does not answer (503) passes the request on to the next,
        as a load balancer moves off a failing backend; the last one's refusal says why."""
        error: ServingError | None = None
        for replica in self._in_turn():
            try:
                return replica.predict(instances, parameters)
            except ServingError as exc:
                if exc.status != 503:
                    raise
                error = exc
        assert error is not None
        raise error

    def stop(self) -> int | None:
        codes = [replica.stop() for replica in self.replicas]
        return codes[0]


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
