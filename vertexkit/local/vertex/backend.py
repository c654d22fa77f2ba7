"""The Vertex AI service's shared state: resource store, operations, and its neighbours."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from vertexkit.local.handles import CloudHandles
from vertexkit.local.process_env import process_env
from vertexkit.local.processes import ProcessGroups
from vertexkit.local.projects import DEFAULT_PROJECT
from vertexkit.local.vertex.core.names import ProjectNames
from vertexkit.local.vertex.operations import Operations
from vertexkit.local.vertex.pipelines.standby import DriverStandby
from vertexkit.local.vertex.registry.model_process import ModelProcesses, deployed_prebuilt
from vertexkit.local.vertex.store import ResourceStore

if TYPE_CHECKING:
    from vertexkit.local.storage.routes import StorageService


# Each model process holds its own copy of its framework (scikit-learn: about 180 MB); models
# past these load in the cloud's process, where they share one.
MAX_MODEL_PROCESSES = 2


class VertexState:
    """Vertex's state on disk and the processes it records, opened first as a local cloud
    starts, before the cloud imports its services: the resource store (checked whole), the
    project names, the process groups (those a killed local cloud left are ended here), and a
    process for each prebuilt-image model deployed before this start (the first
    MAX_MODEL_PROCESSES), importing its framework at once (`registry.model_process`).

    A framework's import is the longest part of a restart that serves a model (scikit-learn:
    over a second of CPU, and a cached `vertexkit run` predicts as soon as its job ends), so it
    runs on the other core while the cloud imports its services, not after."""

    def __init__(self, home: Path, project: str) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        # Names answered with the project number (`core.names`): this cloud's project and the
        # default one are known from the start, any other once it has been named.
        self.names = ProjectNames({project, DEFAULT_PROJECT})
        self.store = ResourceStore(home / "vertex.sqlite", key=self.names.inward_text)
        # Every process a job or deployment starts; groups a killed local cloud left are ended.
        self.processes = ProcessGroups(self.store)
        self.processes.end_leftovers()
        self.model_processes = ModelProcesses(self.processes, home / "serving")
        # (endpoint, deployed model, version) of every prebuilt-image model deployed before this
        # start, read once: the first MAX_MODEL_PROCESSES get a process of their own, the
        # registry's warm-up loads the rest (`EndpointRegistry.warm_deployed`).
        self.deployed_at_start = deployed_prebuilt(self.store)
        for _, deployed, version in self.deployed_at_start[:MAX_MODEL_PROCESSES]:
            with contextlib.suppress(Exception):  # said again by its first prediction
                self.model_processes.spawn(deployed["id"], version["containerSpec"]["imageUri"])

    def close(self) -> None:
        self.model_processes.close()
        self.store.close()


class VertexBackend:
    """Everything a Vertex handler needs: its state (`VertexState`), operations, storage, and
    the cloud's handles (its exports, a client context, BigQuery's warehouse)."""

    def __init__(self, state: VertexState, storage: StorageService, cloud: CloudHandles) -> None:
        self.state = state
        self.home, self.names, self.store = state.home, state.names, state.store
        self.processes, self.model_processes = state.processes, state.model_processes
        self.operations = Operations(self.store)
        self.storage = storage
        self.cloud = cloud
        standby_log = self.home / "pipelineJobs" / "standby.log"
        self.driver_standby = DriverStandby(
            self.processes, self.driver_env, storage.home, standby_log
        )

    def start_deployed_models(self) -> None:
        """Asks each process `VertexState` started for its model (`registry.model_process`),
        once Cloud Storage names the model's folder. A model that does not load fails its first
        prediction, with the reason; the models past MAX_MODEL_PROCESSES load in the cloud's
        process when the registry warms up."""
        for _, deployed, version in self.state.deployed_at_start[:MAX_MODEL_PROCESSES]:
            with contextlib.suppress(Exception):  # said again by its first prediction
                uri = version["artifactUri"]
                image = version["containerSpec"]["imageUri"]
                model_dir = self.storage.gs_uri_to_path(uri)
                self.model_processes.begin_load(deployed["id"], image, model_dir, uri)

    def driver_env(self) -> dict[str, str]:
        """The environment of a pipeline driver (and so of its tasks)."""
        return process_env(self.cloud.env(), {"PYTHONUNBUFFERED": "1"})

    def close(self) -> None:
        self.driver_standby.close()
        self.state.close()
