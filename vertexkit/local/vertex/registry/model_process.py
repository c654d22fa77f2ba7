"""Prebuilt-image models deployed before the local cloud started, served from processes of their
own while the cloud starts.

    python -m vertexkit.local.vertex.registry.model_child FRAMEWORK   (the child: `model_child`)

Vertex keeps a deployed model serving, so a local cloud that starts on a home with deployed
models serves them again. Loaded in the cloud's own process (as a model deployed during this
session is, `EndpointRegistry._build_server`), a scikit-learn model's first prediction waited for
the cloud's own imports and then scikit-learn's (0.8 s of CPU), all on one core under one GIL: a
cached `vertexkit run`, which predicts as soon as its job ends, spent a third of its time there.
So a process per such model (for the first two: each holds its own framework) starts as soon as
the cloud has opened Vertex's state (`VertexState`, `ModelProcesses.spawn`), before the cloud
imports its services, and imports the framework on the other core meanwhile; it is asked for its
model once Cloud Storage can name the folder (`VertexBackend.start_deployed_models`,
`ModelProcesses.begin_load`); the endpoint registry takes it when it builds that model's server
(`ModelProcesses.take`).

The process loads with `vertexkit.runtime.prebuilt`'s rules, the same code as in the cloud's
process, and answers predictions: one JSON line a request on stdin, one an answer on a pipe of its
own (what the model prints goes to the log, with its stderr). A ServingError (a refused artifact,
a malformed instance) comes back as the same ServingError, message and status; any other failure
of the model's own code as a ModelFailure naming it, a 500 as that failure was in the cloud.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from vertexkit.local.process_env import process_env
from vertexkit.local.processes import Group, ProcessGroups
from vertexkit.local.vertex.store import Resource, ResourceStore
from vertexkit.runtime.prebuilt import ServingError, prebuilt_framework, servable_framework

# The child's own module imports only what a load needs: this one's imports (the cloud's process
# groups, its environment and, through them, the specs and the web stack) cost a child 0.4 s of
# CPU, on a core the run's CLI and local cloud need as they start.
MODULE = "vertexkit.local.vertex.registry.model_child"
STOP_GRACE_SECONDS = 2.0


class ModelFailure(RuntimeError):
    """The model itself failed in its process (not a ServingError): `TypeName: message`."""


class ModelProcess:
    """The cloud's side of one model process: a Predictor whose model lives in the child."""

    def __init__(self, framework: str, groups: ProcessGroups, log_path: Path) -> None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as log:
            # Its own process group, recorded: a restart after kill -9 ends it with the rest.
            self.group: Group = groups.spawn(
                [sys.executable, "-m", MODULE, framework],
                str(log_path),
                env=process_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
            )
        self.framework = framework
        self.log_path = log_path
        self._lock = threading.Lock()  # one request at a time on the pipe

    def begin_load(self, image_uri: str, model_dir: Path, artifact_uri: str) -> None:
        """Asks for the load without waiting (the process reads it once its imports are in)."""
        with self._lock:
            self._send({"load": [image_uri, str(model_dir), artifact_uri]})

    def finish_load(self) -> None:
        """Waits for the load `begin_load` asked for; its refusal as a ServingError."""
        with self._lock:
            self._receive()

    def predict(self, instances: list[Any], parameters: Any = None) -> list[Any]:
        return self._ask({"instances": instances, "parameters": parameters})["predictions"]

    def running(self) -> bool:
        return self.group.returncode() is None

    def stop(self) -> None:
        """Ends the process (closing its stdin ends an idle one at once)."""
        assert self.group.process.stdin is not None and self.group.process.stdout is not None
        for pipe in (self.group.process.stdin, self.group.process.stdout):
            try:
                pipe.close()
            except OSError:
                pass  # a broken pipe: the process has gone already
        self.group.end(STOP_GRACE_SECONDS)

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._send(request)
            return self._receive()

    def _send(self, request: dict[str, Any]) -> None:
        stdin = self.group.process.stdin
        assert stdin is not None
        with contextlib.suppress(OSError, ValueError):  # gone: `_receive` reads no answer
            stdin.write(json.dumps(request).encode() + b"\n")
            stdin.flush()

    def _receive(self) -> dict[str, Any]:
        stdout = self.group.process.stdout
        assert stdout is not None
        try:
            line = stdout.readline()
        except (OSError, ValueError):  # a closed pipe
            line = b""
        if not line:
            raise ServingError(
                f"The model's server process stopped (exit code {self.group.returncode()}); "
                f"see {self.log_path}.",
                status=500,
            )
        answer = json.loads(line)
        if "error" in answer:
            raise ServingError(answer["error"], status=answer["status"])
        if "failure" in answer:  # as the same failure in the cloud's process: a bare 500
            raise ModelFailure(answer["failure"])
        return answer


class ModelProcesses:
    """The model processes a local cloud started for its deployed models, until their servers
    are built (`take`). Two steps, so that a process starts before its model's folder is known:
    `spawn` as the cloud opens its state (the process imports its framework at once), then
    `begin_load` once Cloud Storage can name the folder."""

    def __init__(self, groups: ProcessGroups, logs: Path) -> None:
        self.groups = groups
        self.logs = logs
        self._spawned: dict[str, ModelProcess] = {}  # deployed model ID -> its process, no load
        self._loading: dict[str, ModelProcess] = {}  # ... once its load has been asked for
        self._lock = threading.Lock()

    def spawn(self, deployed_id: str, image_uri: str) -> None:
        """Starts the process of a deployed model; it imports the image's framework and waits
        for `begin_load`. An image not served here starts none."""
        process = self._start(deployed_id, image_uri)
        if process is not None:
            with self._lock:
                self._spawned[deployed_id] = process

    def begin_load(
        self, deployed_id: str, image_uri: str, model_dir: Path, artifact_uri: str
    ) -> None:
        """Asks the process of a deployed model for its model, without waiting: the process
        `spawn` started, else one started now."""
        with self._lock:
            process = self._spawned.pop(deployed_id, None)
        process = process or self._start(deployed_id, image_uri)
        if process is None:
            return  # not served here: see `_start`
        process.begin_load(image_uri, model_dir, artifact_uri)
        with self._lock:
            self._loading[deployed_id] = process

    def _start(self, deployed_id: str, image_uri: str) -> ModelProcess | None:
        try:
            framework = servable_framework(image_uri)
        except ServingError:
            return None  # refused again, with the reason, by its first prediction
        return ModelProcess(framework, self.groups, self.logs / f"{deployed_id}.log")

    def take(self, deployed_id: str) -> ModelProcess | None:
        """The process started for this deployed model, once its model has loaded; None when
        there is none (the caller loads the model itself). A refused load stops it and raises
        the ServingError."""
        with self._lock:
            process = self._loading.pop(deployed_id, None)
        if process is None:
            return None
        try:
            process.finish_load()
        except ServingError:
            process.stop()
            raise
        return process

    def close(self) -> None:
        with self._lock:
            idle = [*self._spawned.values(), *self._loading.values()]
            self._spawned, self._loading = {}, {}
        for process in idle:
            process.stop()


def deployed_prebuilt(store: ResourceStore) -> list[tuple[str, Resource, Resource]]:
    """(endpoint name, deployed model, its model version) for each prebuilt-image model
    deployed in `store`."""
    found = []
    for endpoint in store.list("endpoints"):
        for deployed in endpoint.get("deployedModels") or []:
            version = store.find(f"{deployed['model']}@{deployed['modelVersionId']}") or {}
            if prebuilt_framework((version.get("containerSpec") or {}).get("imageUri", "")):
                found.append((endpoint["name"], deployed, version))
    return found
