"""The driver's side of the warm task worker (`task_worker`): which tasks it runs, and how.

A task runs in a child forked from the worker when it would otherwise be a plain process of
this same interpreter running one of two entry points:
- a lightweight component (`@dsl.component`) with nothing to pip-install: kfp's command is a
  `sh -ec` script that writes the component's source to `$(mktemp -d)/ephemeral_component.py`
  and runs `python3 -m kfp.dsl.executor_main --component_module_path THAT_FILE "$@"`. Here the
  source is written to the task's own temp folder and the child runs `task_main` with the same
  arguments and environment. A script of any other shape runs as it is, in a plain process;
- a GCPC operator's launcher (`gcpc_main`).
Everything else (a component with packages_to_install, which needs its own interpreter) runs in
a plain process, as does every task where fork is not available (`fork_available`).

`WarmWorkers.run` returns the task's exit code and streams its output lines, as the plain
process path does. It sends the task to the full worker once that one has imported its preload
list, to the light one before (see `task_worker`); when both have stopped it raises
`WorkerGone`, and the caller runs the task plainly.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vertexkit.local.vertex.pipelines.task_worker import (
    ALL_READY,
    CLIENTS_READY,
    GCPC_TASK,
    GROW,
    KFP_TASK,
    MESSAGE_BYTES,
)

WORKER_MODULE = "vertexkit.local.vertex.pipelines.task_worker"
TASK_MAIN = "vertexkit.local.vertex.pipelines.task_main"
GCPC_MAIN = "vertexkit.local.vertex.pipelines.gcpc_main"
# kfp's lightweight-component script (kfp.dsl.component_factory), any whitespace; `_KFP_RUNTIME`
# is set by kfp 2.x releases that have it.
_KFP_SCRIPT = re.compile(
    r"\s*program_path=\$\(mktemp -d\)\s+"
    r'printf "%s" "\$0" > "\$program_path/ephemeral_component\.py"'
    r"\s+(?P<runtime>_KFP_RUNTIME=true\s+)?python3 -m kfp\.dsl\.executor_main\s+"
    r'--component_module_path\s+"\$program_path/ephemeral_component\.py"\s+"\$@"\s*'
)
# Where GCPC publishes its launcher image (Vertex pulls it; here the installed package stands in).
GCPC_IMAGES = (
    "gcr.io/ml-pipeline/google-cloud-pipeline-components:",
    "us-docker.pkg.dev/vertex-ai/ml-pipeline/google-cloud-pipeline-components:",
)
WORKER_GONE_EXIT = -1
CLOSE_GRACE_SECONDS = 0.2


class WorkerGone(RuntimeError):
    """The worker has stopped: the task was not started, run it in a plain process."""


def fork_available() -> bool:
    """Forking a warm process is safe on Linux; macOS forbids fork after some system
    frameworks load (Python itself defaults to spawn there), and Windows has no fork."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


@dataclass(frozen=True)
class WarmCall:
    """What a forked child runs: the entry point, its argv and what the task's folder needs."""

    kind: str
    program: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    source: str | None = None  # a lightweight component's source, written before it starts


def kfp_call(command: list[str]) -> WarmCall | None:
    """The warm call for kfp's lightweight-component command (without a pip prelude)."""
    if len(command) < 4 or command[:2] != ["sh", "-ec"]:
        return None
    script = _KFP_SCRIPT.fullmatch(command[2])
    if script is None:
        return None
    env = {"_KFP_RUNTIME": "true"} if script.group("runtime") else {}
    argv = ["--component_module_path", "", *command[4:]]  # the path is filled per task
    return WarmCall(KFP_TASK, TASK_MAIN, argv, env, source=command[3])


def gcpc_call(launcher_command: list[str]) -> WarmCall:
    """`python3 -u -m LAUNCHER ARGS` run as `gcpc_main LAUNCHER ARGS`."""
    module_at = launcher_command.index("-m") + 1
    return WarmCall(GCPC_TASK, GCPC_MAIN, launcher_command[module_at:])


@dataclass
class _Pending:
    """One task sent to the worker; `exit_code` is set when the worker reaps its child."""

    done: threading.Event = field(default_factory=threading.Event)
    exit_code: int | None = None
    error: str | None = None

    def finish(self, exit_code: int | None, error: str | None = None) -> None:
        self.exit_code, self.error = exit_code, error
        self.done.set()


class GrownProcess:
    """A worker forked by another worker (`TaskWorker(parent=...)`): not this process's child
    (its parent reaps it), so its end is seen as the end of its channel, which it alone holds
    (`ended`: set once the last of its threads has gone, or once this side has closed the
    channel, after which an idle worker leaves on its own). Its pid is known once it says hello;
    until then there is nothing to kill, and closing its channel is enough."""

    returncode = None  # its parent worker reaps it

    def __init__(self, ended: threading.Event) -> None:
        self.pid: int | None = None
        self.ended = ended

    def kill(self) -> None:
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> None:
        """Returns once it has ended; TimeoutExpired after `timeout`."""
        if self.pid is not None and not self.ended.wait(timeout):
            raise subprocess.TimeoutExpired(f"task worker {self.pid}", timeout or 0)


class TaskWorker:
    """Starts the worker process and runs tasks in its children (see the module doc). With
    `parent`, the worker is forked from that one once its imports are in, and imports only what
    they lack (a parent that has stopped: a process of its own)."""

    def __init__(
        self, env: dict[str, str], preload_list: str = "full", parent: TaskWorker | None = None
    ) -> None:
        self._ended = threading.Event()  # its channel has closed: the worker has gone
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            grown = parent is not None and parent._grow(theirs, preload_list)
            self.process: subprocess.Popen[bytes] | GrownProcess = (
                GrownProcess(self._ended) if grown else _spawn_worker(theirs, preload_list, env)
            )
        self._channel = ours
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self._gone = False
        self._ready = {CLIENTS_READY: threading.Event(), ALL_READY: threading.Event()}
        threading.Thread(target=self._follow, daemon=True, name="task-worker").start()

    def run(
        self, call: WarmCall, env: dict[str, str], task_tmp: Path, on_line: Callable[[str], None]
    ) -> int:
        """Runs the task in a forked child; its output lines go to `on_line`; its exit code."""
        request_path = _write_request(call, env, task_tmp)
        output_read, output_write = os.pipe2(os.O_CLOEXEC)
        status_read, status_write = os.pipe2(os.O_CLOEXEC)
        try:
            request_id, pending = self._send(request_path, output_write, status_write)
        except WorkerGone:
            os.close(output_read)
            os.close(status_read)
            raise
        finally:
            os.close(output_write)
            os.close(status_write)
        with open(output_read, encoding="utf-8", errors="replace") as output:
            for line in output:  # ends when the child, and whatever it started, closes it
                on_line(line)
        with open(status_read, "rb") as status:
            written = status.read().strip()
        code = self._exit_code(request_id, pending, written)
        if pending.error:  # the task never started (fork failed) or its worker stopped
            on_line(f"[task worker] {pending.error}\n")
        return code

    def _grow(self, channel: socket.socket, preload_list: str) -> bool:
        """Asks this worker to fork one for `preload_list` serving `channel`; False if it has
        stopped."""
        message = json.dumps({GROW: preload_list}).encode()
        with self._lock:
            if self._gone:
                return False
            try:
                socket.send_fds(self._channel, [message], [channel.fileno()])
            except OSError:
                return False
        return True

    def preload_clients(self) -> None:
        """Asks the worker to import `CLIENTS_PRELOAD` too (between the tasks it forks)."""
        with self._lock, contextlib.suppress(OSError):  # gone: its tasks go elsewhere
            self._channel.send(json.dumps({"preload": CLIENTS_READY}).encode())

    def preloaded(self, timeout: float = 0) -> bool:
        """Whether the worker has imported its whole preload list (waiting up to `timeout`)."""
        return self._ready[ALL_READY].wait(timeout)

    def has_clients(self) -> bool:
        """Whether the (light) worker has imported the clients a pipeline's first tasks use."""
        return self._ready[CLIENTS_READY].is_set()

    def close(self) -> None:
        """Ends the worker. Its children are tasks that have ended, and it holds nothing worth
        a wait: an idle one gets CLOSE_GRACE_SECONDS to leave on its own, one still importing
        its preload list is killed at once."""
        # shutdown, not only close: the reader thread blocked in recv() holds the socket open.
        with contextlib.suppress(OSError):
            self._channel.shutdown(socket.SHUT_RDWR)
        self._channel.close()
        if not self.preloaded():  # it would only notice the closed channel after that import
            self.process.kill()
        try:
            self.process.wait(timeout=CLOSE_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _send(self, request_path: Path, *fds: int) -> tuple[int, _Pending]:
        with self._lock:
            if self._gone:
                raise WorkerGone("the task worker has stopped")
            request_id, pending = next(self._ids), _Pending()
            self._pending[request_id] = pending
            message = json.dumps({"id": request_id, "request": str(request_path)}).encode()
            try:
                socket.send_fds(self._channel, [message], list(fds))
            except OSError as exc:
                self._pending.pop(request_id)
                raise WorkerGone(f"the task worker has stopped: {exc}") from exc
        return request_id, pending

    def _exit_code(self, request_id: int, pending: _Pending, written: bytes) -> int:
        """The code the child wrote once its output was flushed; else the status the worker
        reaped (a child killed by a signal writes nothing)."""
        if written.lstrip(b"-").isdigit():
            with self._lock:
                self._pending.pop(request_id, None)
            return int(written)
        pending.done.wait()
        return pending.exit_code if pending.exit_code is not None else WORKER_GONE_EXIT

    def _follow(self) -> None:
        """Reads the worker's messages until it stops; then no task waits on it forever."""
        while True:
            try:
                data = self._channel.recv(MESSAGE_BYTES)
            except OSError:
                data = b""
            if not data:
                break
            message = json.loads(data)
            if "pid" in message:  # its hello: a grown worker's pid is known from it only
                if isinstance(self.process, GrownProcess):
                    self.process.pid = message["pid"]
                continue
            if "ready" in message:
                self._ready[message["ready"]].set()
                continue
            with self._lock:
                pending = self._pending.pop(message["id"], None)
            if pending is not None:
                pending.finish(message.get("reaped"), message.get("error"))
        with self._lock:
            self._gone = True
            stranded, self._pending = list(self._pending.values()), {}
        for pending in stranded:
            pending.finish(None, "the task worker stopped before the task ended")
        self._ended.set()


def _spawn_worker(
    channel: socket.socket, preload_list: str, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", WORKER_MODULE, str(channel.fileno()), preload_list],
        pass_fds=[channel.fileno()],
        env=env,
        stdin=subprocess.DEVNULL,
    )


def _write_request(call: WarmCall, env: dict[str, str], task_tmp: Path) -> Path:
    """The request file the child reads (in the task's own temp folder, removed with it)."""
    argv = list(call.argv)
    if call.source is not None:
        program_path = Path(tempfile.mkdtemp(dir=task_tmp))  # what kfp's `mktemp -d` makes
        module = program_path / "ephemeral_component.py"
        module.write_text(call.source, encoding="utf-8")
        argv[argv.index("--component_module_path") + 1] = str(module)
    request = {
        "kind": call.kind,
        "program": call.program,
        "argv": argv,
        "env": {**env, **call.env},
        "cwd": os.getcwd(),
    }
    path = task_tmp / "vertexkit-task-request.json"
    path.write_text(json.dumps(request), encoding="utf-8")
    return path


# A component source (or GCPC launcher) that uses what CLIENTS_PRELOAD imports.
_CLIENTS_USE = re.compile(
    r"\bvertexkit\.runtime\.(bigquery|training)\b|\bgoogle\.cloud\.bigquery\b"
)


def uses_clients(pipeline_spec: dict) -> bool:
    """Whether a task of the job runs BigQuery or launches a custom job (`CLIENTS_PRELOAD`)."""
    return any(_CLIENTS_USE.search(json.dumps(executor)) for executor in _executors(pipeline_spec))


# A component source that imports the aiplatform SDK, or the whole GAPIC package.
_SDK_IMPORT = re.compile(
    r"\bgoogle\.cloud\.aiplatform\b|from\s+google\.cloud\s+import\s+[^\n]*\baiplatform\b"
)
_GAPIC_IMPORT = re.compile(r"\baiplatform_v1\b")


def full_preload_list(pipeline_spec: dict) -> str:
    """What the full worker imports for this job (`task_worker.PRELOADS`): the aiplatform SDK for
    a GCPC operator's launcher or a component that imports it (`sdk`); the whole `aiplatform_v1`
    package for a component that imports that (`gapic`); else the built-in components' modules
    (`full`)."""
    commands = []
    for executor in _executors(pipeline_spec):
        container = executor.get("container") or {}
        if str(container.get("image", "")).startswith(GCPC_IMAGES):
            return "sdk"
        commands.extend(str(part) for part in container.get("command", []))
    if any(_SDK_IMPORT.search(command) for command in commands):
        return "sdk"
    return "gapic" if any(_GAPIC_IMPORT.search(command) for command in commands) else "full"


def _executors(pipeline_spec: dict) -> list[dict]:
    return list(pipeline_spec.get("deploymentSpec", {}).get("executors", {}).values())


class WarmWorkers:
    """The run's light and full workers, and which one takes a task (see the module doc).

    The full worker starts with the run's first task that runs (its imports, begun with the run,
    would only compete with the first tasks for the CPU), forked from the light one once that
    one's imports are in (`TaskWorker(parent=...)`); the light one with the run, or, with
    `lazy` (a rerun expected from the cache), with its first task that runs too: a rerun whose
    tasks all come from the cache never pays their imports. `expect(spec)` tells the light one
    to import the clients the job's tasks use."""

    def __init__(self, env: dict[str, str], lazy: bool = False) -> None:
        self.env = env
        self._lists = {"light": "light", "full": "full"}
        self._started: dict[str, TaskWorker] = {}
        self._lock = threading.Lock()
        self._clients_expected = False
        if not lazy:
            self._worker("light")

    def expect(self, pipeline_spec: dict) -> None:
        """The job to run: when its tasks use BigQuery or launch custom jobs, the light worker
        imports those clients (now, or as it starts), so its first such tasks do not each import
        them; the full worker, not started yet, will import what its components use
        (`full_preload_list`)."""
        with self._lock:
            self._lists["full"] = full_preload_list(pipeline_spec)
        if uses_clients(pipeline_spec):
            self.expect_clients()

    def expect_clients(self) -> None:
        """The job's tasks will use the clients: the light worker imports them (now, or as it
        starts)."""
        with self._lock:
            self._clients_expected = True
            light = self._started.get("light")
        if light is not None:
            light.preload_clients()

    @property
    def light(self) -> TaskWorker:
        return self._worker("light")

    @property
    def full(self) -> TaskWorker:
        return self._worker("full")

    def _worker(self, kind: str) -> TaskWorker:
        """The worker of this kind, started on first use."""
        with self._lock:
            if kind not in self._started:
                parent = self._started.get("light") if kind == "full" else None
                worker = TaskWorker(self.env, self._lists[kind], parent)
                self._started[kind] = worker
                if kind == "light" and self._clients_expected:
                    worker.preload_clients()
            return self._started[kind]

    def run(
        self, call: WarmCall, env: dict[str, str], task_tmp: Path, on_line: Callable[[str], None]
    ) -> int:
        light, full = self.light, self.full
        first = [full, light] if full.preloaded() else [light, full]
        for worker in first:
            try:
                return worker.run(call, env, task_tmp, on_line)
            except WorkerGone:
                continue  # not started there: the other one, or a plain process
        raise WorkerGone("both task workers have stopped")

    def close(self) -> None:
        with self._lock:
            started, self._started = list(self._started.values()), {}
        for worker in reversed(started):  # the full one first: the light one may grow it yet
            worker.close()
