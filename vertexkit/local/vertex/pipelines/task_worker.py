"""A warm task worker: imports what pipeline tasks use once, then forks a child per task.

    python -m vertexkit.local.vertex.pipelines.task_worker FD light|full|gapic|sdk

A task process started from nothing spends most of its life importing: kfp's executor, the
Google clients, vertexkit.runtime, pandas and sklearn cost 1-4 s a task, and a no-op component
forked from a process that already holds them starts in about 20 ms. The driver starts two
workers per pipeline run (its side is `warm_tasks`): a `light` one that imports kfp's executor
only and is ready in about half a second, and a `full` one that imports every module of
`PRELOAD` (several seconds; `GAPIC_PRELOAD` adds the whole `aiplatform_v1` package and
`SDK_PRELOAD` the aiplatform SDK, for runs whose components use them),
started with the first task that runs; tasks go to the light one until the full one says it is
ready. The light one also imports the clients a pipeline's first tasks use (`CLIENTS_PRELOAD`,
about a second) once told that the job's tasks use them: BigQuery's at once, the custom job's
between the tasks it forks meanwhile. A single worker importing everything
would make the first tasks wait behind imports they may not need (a no-op component behind
sklearn).

The full worker grows from the light one: asked to (a `grow` request with the new worker's
socket), the light worker forks it once its own imports are in, and the fork imports only what
they lack. Spawned as a process of its own it imported the clients a second time (0.8 s of CPU)
while the run's first tasks waited on the light worker for a core.

Each request comes over the socket FD (a SOCK_SEQPACKET pair: one JSON message a request) with
two file descriptors: the task's output pipe and its status pipe. The forked child is the task
process: it takes the task's environment, folder, arguments and stdin/stdout/stderr, runs the
same entry point the task's command names (`task_main` for a lightweight component, `gcpc_main`
for a GCPC launcher), writes its exit code to the status pipe once its output is flushed, and
leaves with `os._exit` (no interpreter teardown: the OS frees what it held). The worker reaps
its children and reports each exit status too, so a child that dies without writing one (a
signal, a hard crash) still ends its task with its real status.

What a child shares with its siblings, and what differs from a fresh process:
- modules imported here read the run's environment at import time, not a task's own additions
  (`set_env_variable` values are in `os.environ`, as Python code reads them at call time);
- the random generators are reseeded in every child (Python's `random` does so itself on fork;
  NumPy's global generator does not, so it is reseeded here);
- matplotlib is preloaded with its Agg backend: a task runs headless, as on Vertex;
- the garbage collector runs every 10,000 allocations, not 700, and does not walk what the
  worker imported (`vertexkit.gc_tuning`): the same garbage is collected, in larger batches.
The child stays in the driver's process group: cancelling the run ends it with the rest.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import selectors
import signal
import socket
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from vertexkit import gc_tuning
from vertexkit.kfp_loader import import_kfp
from vertexkit.runtime.prebuilt import FRAMEWORK_MODULES

MESSAGE_BYTES = 65536
LIGHT_PRELOAD = ("kfp.dsl.executor_main", "vertexkit.local.vertex.pipelines.task_main")
# What a pipeline's first tasks use, in the order they need it: BigQuery's client (it imports
# pandas and pyarrow: 0.7 s of CPU in all), then the custom job's launcher with its one GAPIC
# service (0.3 s). The light worker imports them when the job's tasks use them (`CLIENTS_READY`
# once it has). It imports the second part between the tasks sent meanwhile: a BigQuery task
# does not wait for the custom job's client.
BIGQUERY_CLIENTS = (
    *LIGHT_PRELOAD,
    "google_cloud_pipeline_components.types.artifact_types",
    "vertexkit.context",
    "vertexkit.runtime.gcp_resources",
    "google.cloud.bigquery",
    "vertexkit.runtime.bigquery",
)
JOB_CLIENTS = (
    "vertexkit.runtime.training",  # makes aiplatform_v1 lazy (runtime.gapic): then one service
    "google.cloud.aiplatform_v1.services.job_service",
    "google.cloud.aiplatform_v1.types.custom_job",
)
CLIENTS_PRELOAD = (*BIGQUERY_CLIENTS, *JOB_CLIENTS)
# The `aiplatform_v1` types and clients vertexkit.runtime names (`gapic.runtime_names`): the
# built-in components need no more of the package, whose whole `__init__` costs 0.44 s of CPU.
RUNTIME_GAPIC = "aiplatform_v1: the names vertexkit.runtime uses"
# What the built-in components import; one that is not installed is skipped.
PRELOAD = (
    *CLIENTS_PRELOAD,
    "vertexkit.runtime.kfp_outputs",
    "google.cloud.storage",
    RUNTIME_GAPIC,
    "vertexkit.runtime.models",
    "vertexkit.runtime.deployment",
    "pandas",
    "pyarrow.parquet",
    "gcsfs",  # the evaluation reads its test data through it (CloudContext.gcs_filesystem)
    "vertexkit.runtime.evaluation",
    "sklearn.metrics",
    *FRAMEWORK_MODULES["sklearn"],  # the evaluation loads the model
    "matplotlib.pyplot",
)
# The whole `aiplatform_v1` package: for runs with components that import it themselves.
GAPIC_PRELOAD = (*PRELOAD, "google.cloud.aiplatform_v1")
# The aiplatform SDK (1.5 s of CPU): for runs with GCPC operators or components that use it.
SDK_PRELOAD = (
    *GAPIC_PRELOAD,
    "vertexkit.local.vertex.pipelines.gcpc_main",
    "google.cloud.aiplatform",
    "google_cloud_pipeline_components.container.v1.gcp_launcher.job_remote_runner",
    "google_cloud_pipeline_components.container.v1.gcp_launcher.lro_remote_runner",
)
PRELOADS = {"light": LIGHT_PRELOAD, "full": PRELOAD, "gapic": GAPIC_PRELOAD, "sdk": SDK_PRELOAD}
CLIENTS_READY = "clients"  # what the light worker says once CLIENTS_PRELOAD is in
ALL_READY = "all"  # what a worker says once its own list is
GROW = "grow"  # {"grow": LIST} and a socket: fork a worker for LIST that serves that socket
KFP_TASK = "kfp"
GCPC_TASK = "gcpc"


def _run_kfp_task() -> None:
    from vertexkit.local.vertex.pipelines import task_main

    _as_never_imported("kfp.dsl.executor_main")
    task_main.main()


def _run_gcpc_task() -> None:
    from vertexkit.local.vertex.pipelines import gcpc_main

    _as_never_imported(sys.argv[1])  # the launcher module
    gcpc_main.main()


def _as_never_imported(module: str) -> None:
    """The module a task runs as `__main__` (runpy) leaves sys.modules, as in a fresh process
    (what it imports stays): runpy warns about running one already imported."""
    sys.modules.pop(module, None)


ENTRY_POINTS: dict[str, Callable[[], None]] = {KFP_TASK: _run_kfp_task, GCPC_TASK: _run_gcpc_task}


def preload(module: str) -> None:
    if module == "matplotlib.pyplot":
        os.environ.setdefault("MPLBACKEND", "Agg")  # headless, as every task runs
    with contextlib.suppress(Exception):  # a module that cannot load here fails in its task
        if module == "google.cloud.aiplatform_v1":
            # vertexkit.runtime may have made it a lazy package (vertexkit.runtime.gapic), which
            # import_module would hand back still lazy: every child would pay its __init__.
            from vertexkit.runtime import gapic

            gapic.import_whole_package()
        elif module == RUNTIME_GAPIC:
            from vertexkit.runtime import gapic

            for name in gapic.runtime_names():
                gapic.resolve(name)
        else:
            importlib.import_module(module)


def _needs_import(module: str) -> bool:
    # Skip what is in (the light worker's clients, asked for twice), but not a lazy
    # aiplatform_v1: it is in sys.modules before its package init has run.
    return module not in sys.modules or module == "google.cloud.aiplatform_v1"


def _preload_all(worker: Worker, modules: tuple[str, ...], done: str = ALL_READY) -> bool:
    """Imports `modules`, then says `done`. Tasks sent meanwhile wait: forked halfway, a task
    would import the same modules again, in parallel with the worker (measured: the first
    BigQuery task took 0.9 s that way, 0.7 s waiting)."""
    _import_now(modules)
    worker.send({"ready": done})
    return True


def _import_now(modules: tuple[str, ...]) -> None:
    for module in filter(_needs_import, modules):
        preload(module)
    gc_tuning.imports_done()


def _preload_clients(worker: Worker) -> bool:
    """CLIENTS_PRELOAD: BigQuery's client at once (the tasks sent meanwhile wait, as in
    `_preload_all`), then the custom job's one module at a time between requests
    (`Worker.import_between`): the run's first tasks, BigQuery's, are forked as they come, not
    0.3 s later. A task that launches a custom job before that client is in imports what it
    lacks itself, beside the worker: it starts no later than it would have."""
    _import_now(BIGQUERY_CLIENTS)
    worker.import_between(JOB_CLIENTS, CLIENTS_READY)
    return True


class Worker:
    """Serves the driver's requests: one forked child per task, its exit reported back."""

    def __init__(self, channel: socket.socket) -> None:
        self.channel = channel
        self.children: dict[int, int | None] = {}  # pid -> request id (None: a grown worker)
        self._wakeup_read, self._wakeup_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(self._wakeup_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup fd is written
        self.selector = selectors.DefaultSelector()
        self.selector.register(channel, selectors.EVENT_READ)
        self.selector.register(self._wakeup_read, selectors.EVENT_READ)
        self._imports: list[str] = []  # still to import between requests (`import_between`)
        self._imports_done = ALL_READY  # what to say once they are in
        self._grows: list[tuple[str, int]] = []  # grows asked for meanwhile: they wait for it

    def serve(self) -> bool:
        """Handles the requests and child exits that are ready, else imports the next module
        left to import; False once the driver has gone."""
        ready = self.selector.select(0 if self._imports else None)
        for key, _ in ready:
            if key.fileobj is self.channel and not self._take_request():
                return False
            if key.fileobj == self._wakeup_read:
                self._reap()
        if not ready and self._imports:
            preload(self._imports.pop(0))
            gc_tuning.imports_done()
            if not self._imports:
                self._imported()
        return True

    def import_between(self, modules: tuple[str, ...], done: str) -> None:
        """Imports `modules` one at a time while no request waits, then says `done`."""
        self._imports, self._imports_done = list(filter(_needs_import, modules)), done
        if not self._imports:
            self._imported()

    def _imported(self) -> None:
        self.send({"ready": self._imports_done})
        while self._grows:  # one at a time: a grown worker closes the sockets still waiting
            self._grow(*self._grows.pop(0))

    def _take_request(self) -> bool:
        data, fds, _, _ = socket.recv_fds(self.channel, MESSAGE_BYTES, 2)
        if not data:
            return False
        request = json.loads(data)
        if request.get("preload") == CLIENTS_READY:  # the job's tasks will use the clients
            return _preload_clients(self)
        if GROW in request and self._imports:  # grown now, it would import them a second time
            self._grows.append((request[GROW], fds[0]))
        elif GROW in request:
            self._grow(request[GROW], fds[0])
        else:
            self._start_task(request, fds)
        return True

    def _start_task(self, request: dict, fds: list[int]) -> None:
        try:
            pid = self._fork(request["request"], *fds)
        except OSError as exc:
            self.send({"id": request["id"], "error": f"could not fork the task: {exc}"})
        else:
            self.children[pid] = request["id"]
        finally:
            for fd in fds:
                os.close(fd)

    def _fork(self, request_path: str, output_fd: int, status_fd: int) -> int:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            run_child(Path(request_path), output_fd, status_fd, self._own_fds())
        return pid

    def _grow(self, preload_list: str, channel_fd: int) -> None:
        """Forks a worker that serves `channel_fd` and imports `preload_list` on top of what
        this one holds; its exit is reaped here and reported to nobody. A channel the driver
        has already closed (the run ended first) gets no worker."""
        try:
            if _closed(channel_fd):
                return
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                for fd in self._own_fds():
                    os.close(fd)
                main(channel_fd, preload_list)
            self.children[pid] = None
        finally:
            os.close(channel_fd)

    def _own_fds(self) -> list[int]:
        """The descriptors of this worker's loop, which a forked child closes; a waiting grow's
        socket too, which only the worker it grows may keep open."""
        return [
            self.channel.fileno(),
            self.selector.fileno(),  # type: ignore[attr-defined]  # epoll's, on Linux
            self._wakeup_read,
            self._wakeup_write,
            *(channel_fd for _, channel_fd in self._grows),
        ]

    def _reap(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._wakeup_read, 512):
                pass  # drained: one wakeup may stand for several children
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            request_id = self.children.pop(pid, None)
            if request_id is not None:
                self.send({"id": request_id, "reaped": os.waitstatus_to_exitcode(status)})

    def send(self, message: dict) -> None:
        with contextlib.suppress(OSError):  # the driver has gone: nobody is waiting
            self.channel.send(json.dumps(message).encode())


def _closed(fd: int) -> bool:
    """Whether the other end of this socket has closed (nothing left to read but the end)."""
    readable, _, _ = select.select([fd], [], [], 0)
    with socket.socket(fileno=os.dup(fd)) as channel:
        return bool(readable) and channel.recv(1, socket.MSG_PEEK) == b""


def run_child(request_path: Path, output_fd: int, status_fd: int, inherited: list[int]) -> NoReturn:
    """The task process: never returns into the worker's loop."""
    code = 70  # EX_SOFTWARE: the child failed before its task started
    try:
        for fd in inherited:
            os.close(fd)
        _default_signals()
        _take_stdio(output_fd)
        request = json.loads(request_path.read_text())
        _take_task_settings(request)
        code = _exit_code(ENTRY_POINTS[request["kind"]])
    except BaseException:  # the child must reach os._exit, whatever happened
        traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
            os.write(status_fd, f"{code}\n".encode())
        os._exit(code)


def _default_signals() -> None:
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _take_stdio(output_fd: int) -> None:
    """stdout and stderr to the task's output pipe, stdin from /dev/null, as Popen gave them."""
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    os.close(output_fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


def _take_task_settings(request: dict) -> None:
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    tempfile.tempdir = None  # tempfile caches its folder: the task's TMPDIR is its own
    sys.argv = [request["program"], *request["argv"]]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()  # fresh entropy: forked siblings must not draw the same numbers


def _exit_code(entry: Callable[[], None]) -> int:
    """What the interpreter would exit with after running `entry` as a program."""
    try:
        entry()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # printed as the interpreter prints an uncaught error
        traceback.print_exc()
        return 1
    return 0


def main(fd: int, preload_list: str) -> NoReturn:
    """Serves the driver on socket `fd` with `preload_list` imported, until it closes."""
    gc_tuning.collect_less_often()
    worker = Worker(socket.socket(fileno=fd))
    worker.send({"pid": os.getpid()})  # a grown worker's driver has not seen its pid
    import_kfp()  # without its API client, which no task of ours uses (a task may: kfp.Client)
    _preload_all(worker, PRELOADS[preload_list])
    while worker.serve():
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # the driver has gone; tearing down every preloaded module would only cost time


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
