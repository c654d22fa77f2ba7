"""The local cloud of one `vertexkit run`, in a process of its own.

The local cloud spends about a second of CPU importing its services (the `aiplatform_v1` types
its Vertex areas parse with, BigQuery's engine), and the CLI about as much importing kfp and
compiling the pipeline. In one process they queue on one core; here the cloud loads on the other
core while the CLI compiles.

Two steps, so a run refused while it compiles leaves nothing behind:
1. `CloudProcess.spawn(home)`, first thing in `vertexkit run`: the process imports the local
   cloud's heavy modules (`PRELOAD`) and then waits. It has touched no file.
2. `serve()`, once the job is about to be created: the process starts a `LocalCloud` on the home,
   with a pipeline driver on standby, and answers with its env once every service is ready (or
   with the refusal of a state file it cannot read, which the command raises as its own).
A home that exists already (a rerun) is served at once, named on the process's command line:
starting a cloud on it creates nothing, and its standby driver and deployed models get going
while the CLI compiles.

The process lives as long as its stdin: `close()`, or the command's own end however it comes,
closes that pipe and the cloud stops (its jobs, pipeline drivers and model servers with it), and
`close()` waits for that. It runs in a session of its own: Ctrl-C reaches only the command, which
cancels its job through the API first, as it did with a local cloud in its own process.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from vertexkit import gc_tuning
from vertexkit.local.vertex.pipelines.standby import CLIENTS, LAZY, WARM
from vertexkit.local_up import RUN, ServedLocalCloud, home_or_default

MODULE = "vertexkit.cloud_process"
# What a LocalCloud's start and warm-up import (the rest is a few cheap modules): the server, the
# Storage and BigQuery services, Vertex's areas with their `aiplatform_v1` types.
# `cloud_process_test.py` holds this list to what the warm-up imports.
PRELOAD = (
    "vertexkit.local.server",
    "vertexkit.local.projects",
    "vertexkit.local.storage.routes",
    "vertexkit.local.bigquery.routes",
    "vertexkit.local.kfp.routes",
    "vertexkit.local.vertex.pipeline_jobs_api",
    "vertexkit.local.vertex.routes",
    "vertexkit.local.vertex.training.routes",
    "vertexkit.local.vertex.registry.routes",
    "vertexkit.local.vertex.pipelines.routes",
    "vertexkit.local.vertex.training_pipelines.routes",
    "vertexkit.local.vertex.datasets.routes",
    "vertexkit.local.vertex.metadata.routes",
    "vertexkit.local.vertex.tensorboards.routes",
    "vertexkit.local.vertex.batch_prediction.routes",
    "vertexkit.local.vertex.studies.routes",
    "vertexkit.local.vertex.persistent_resources.routes",
    "vertexkit.local.vertex.deployment_resource_pools.routes",
)
WORKERS_FLAG = "--workers"  # then the standby's mode (`pipelines.standby`: WARM, CLIENTS, LAZY)
STOP_SECONDS = 30.0  # a cloud stopping ends its jobs' processes, each with a grace period


class CloudProcessError(RuntimeError):
    """The cloud's process ended before it served (its own error is on stderr above)."""


class CloudProcess:
    """The command's side: spawn at once, `serve` the home when needed, `close` at the end."""

    def __init__(self, process: subprocess.Popen[bytes], home: Path, asked: bool) -> None:
        self.process = process
        self.home = home
        self._asked = asked  # told which home to serve (on its command line, or its stdin)

    @classmethod
    def spawn(cls, home: Path | None, caching: bool = True) -> CloudProcess:
        """Starts the process; it serves `home` at once when the home exists (starting a
        cloud on it creates nothing: a rerun), else once `serve` asks. A rerun with `caching`
        is expected to come from the cache: its pipeline's task workers start with the first
        task that runs (the standby's LAZY mode)."""
        home = home_or_default(home)
        serve_now = home.is_dir()
        mode = LAZY if caching else WARM
        argv = [str(home), WORKERS_FLAG, mode] if serve_now else []
        process = subprocess.Popen(
            [sys.executable, "-m", MODULE, *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # Ctrl-C is the command's to handle: it cancels the job
        )
        return cls(process, home, asked=serve_now)

    def ask_to_serve(self, clients: bool = False) -> None:
        """Has the process start serving its home now (once the run has passed its checks),
        without waiting for it: `serve` then reads its answer. `clients`: the pipeline's tasks
        use BigQuery or launch custom jobs, so the standby's task worker imports those clients
        at once (a home served from `spawn` learns it from the job instead)."""
        if not self._asked:
            self.home.mkdir(parents=True, exist_ok=True)  # unwritable: this process's OSError
            self._ask_to_serve(CLIENTS if clients else WARM)

    def serve(self) -> ServedLocalCloud:
        """The local cloud on its home, once every service is ready; a state file it refuses is
        a ValueError, as LocalCloud's own start raises it."""
        self.ask_to_serve()
        answer = self._answer()
        if "refused" in answer:
            raise ValueError(answer["refused"])
        if "os_error" in answer:  # a full disk, an unreadable state file: the OSError it was
            raise OSError(*answer["os_error"])
        return ServedLocalCloud(self.home, answer["env"])

    def close(self) -> None:
        """Stops the cloud (closing its stdin) and waits for it; kills it if it hangs."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()

    def _ask_to_serve(self, workers: str) -> None:
        assert self.process.stdin is not None
        self._asked = True
        request = {"home": str(self.home), "workers": workers}
        try:
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            pass  # it has ended: its stdout says nothing more, and `_answer` reports it

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise CloudProcessError(
                f"the local cloud's process ended (exit code {self.process.wait()}) before it "
                "served; its error is printed above"
            )
        return json.loads(line)


# -- the cloud's side ------------------------------------------------------------------------------
class _Stop(Exception):
    """SIGTERM: stop the cloud as the end of stdin would."""


def _stop(*_: object) -> None:
    raise _Stop


def _reply(answer: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> None:
    """`python -m vertexkit.cloud_process [HOME --workers MODE]`: serve HOME at once (its
    standby driver starts first, its services load meanwhile), or preload and wait for the home
    (and the mode) on stdin."""
    gc_tuning.collect_less_often()
    if argv:
        _serve(argv[0], dict(zip(argv[1::2], argv[2::2], strict=False))[WORKERS_FLAG])
    else:
        for module in PRELOAD:
            importlib.import_module(module)
        gc_tuning.imports_done()
        request = sys.stdin.readline()
        if request:
            asked = json.loads(request)
            _serve(asked["home"], asked["workers"])
    sys.stdout.flush()
    os._exit(0)  # the cloud has stopped: nothing left that an interpreter teardown would do


def _serve(home: str, workers: str) -> None:
    from vertexkit.local import LocalCloud

    try:
        cloud = LocalCloud(
            home=home, standby_driver=True, standby_workers=workers, use=RUN
        ).start()
    except ValueError as exc:  # a state file it refuses, a home a `local up` serves: the
        # command's error to print
        _reply({"refused": str(exc)})
        return
    except OSError as exc:
        _reply({"os_error": [exc.errno, exc.strerror, exc.filename]})
        return
    signal.signal(signal.SIGTERM, _stop)
    try:
        _reply({"env": cloud.env()})
        sys.stdin.read()  # until the command closes its end, or ends
    except (_Stop, BrokenPipeError):
        pass
    finally:
        cloud.stop(process_exits=True)  # `main` leaves with os._exit right after


if __name__ == "__main__":
    main(sys.argv[1:])
