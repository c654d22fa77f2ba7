"""Runs one task's process for the pipeline executor, as Vertex's launcher would run it.

The executor (`executor`, `leaf`) hands every container task here with its resolved command:

- `packages_to_install`: the `pip install` prelude kfp puts in front of the command is taken off;
  the packages go into an isolated environment for that package list (`task_envs`), and the task
  runs with that environment's interpreter. kfp's own install (`kfp==X --no-deps`) is dropped:
  kfp is installed here.
- kfp's executor runs through `task_main`, which maps `gs://` artifact URIs to files of the local
  Cloud Storage the way Vertex maps them under `/gcs/`.
- A Google Cloud Pipeline Components operator (GCPC's image, `python3 -u -m
  google_cloud_pipeline_components...`) runs its own launcher, from the GCPC installed here,
  through `gcpc_main`: the local cloud's client hook (process_env) points its hard-coded
  `<location>-aiplatform.googleapis.com` and default credentials at the local cloud.
- Any other container component runs its command as a local process, as custom jobs run a
  container's command (no Docker: the image is not pulled, said once in the task's log), when its
  program exists here (`python3` is this interpreter); else the run is refused before its first
  task, naming the task and the image (`refuse_unless_runnable`).
- Where it can (`warm_tasks`), the task's process is a child forked from one of the run's warm
  task workers, which have imported kfp's executor (and the Google clients) once; a task that
  needs its own interpreter, or a run where fork is not available, gets a plain process.
- At most `max_parallel` tasks run at once (`--max-parallel`, default the core count): the
  executor holds a `task_slot()` from a task's start event to its end event, so the recorded
  times are the task's real run.
- The task's output goes to the driver's log, each line prefixed with the task; its last lines
  (or the component's `executor_error.json`) are the task's error when it fails.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vertexkit.local.vertex.pipelines.task_envs import TaskEnvironments
from vertexkit.local.vertex.pipelines.task_main import (
    EXECUTOR_ERROR_FILE,
    GCS_MOUNT_ENV,
    executor_output_dir,
)
from vertexkit.local.vertex.pipelines.warm_tasks import (
    GCPC_IMAGES,
    GCPC_MAIN,
    TASK_MAIN,
    WarmCall,
    WarmWorkers,
    WorkerGone,
    gcpc_call,
    kfp_call,
)

KFP_EXECUTOR = "python3 -m kfp.dsl.executor_main"
GCPC_PACKAGE = "google_cloud_pipeline_components."
ERROR_TAIL_LINES = 15
_PIP_INSTALL = re.compile(r"-m pip install ([^&\n]*)")
_PIP_VALUE_OPTIONS = ("--index-url", "--extra-index-url", "--trusted-host")
_PIP_QUIET_OPTIONS = ("--quiet", "--no-warn-script-location")


class TaskRefused(RuntimeError):
    """The task cannot run on this machine (the message says why and what would help)."""


@dataclass
class HandlerSettings:
    environments: TaskEnvironments
    gcs_mount: str | None
    max_parallel: int
    workers: WarmWorkers | None = None  # None: every task in a plain process
    slots: threading.BoundedSemaphore = field(init=False)
    output_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.slots = threading.BoundedSemaphore(max(1, self.max_parallel))


_settings: HandlerSettings | None = None


def configure(settings: HandlerSettings) -> None:
    """The run's settings: environments, the storage mount, slots, warm workers."""
    global _settings
    _settings = settings


def task_slot() -> threading.BoundedSemaphore:
    """One of the `max_parallel` places a task holds while it runs (from its start event)."""
    assert _settings is not None, "task_handler.configure() was not called"
    return _settings.slots


def split_install_prelude(command: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(the command without kfp's `sh -c "pip install ... && $0 $@"` prelude, the component's
    packages, pip's index options)."""
    if len(command) > 3 and command[:2] == ["sh", "-c"] and "pip install" in command[2]:
        packages: list[str] = []
        options: list[str] = []
        for request in _PIP_INSTALL.findall(command[2]):
            _add_pip_request(shlex.split(request), packages, options)
        return command[3:], packages, options
    return command, [], []


def _add_pip_request(tokens: list[str], packages: list[str], options: list[str]) -> None:
    if "--no-deps" in tokens and any(token.startswith("kfp==") for token in tokens):
        return  # kfp's own install: kfp is installed here
    words = iter(tokens)
    for token in words:
        if token in _PIP_VALUE_OPTIONS:
            value = next(words, "")
            if [token, value] != options[-2:]:
                options += [token, value]
        elif token not in _PIP_QUIET_OPTIONS:
            packages.append(token)


def is_lightweight(command: list[str]) -> bool:
    """A `@dsl.component` function's command: kfp's executor runs the embedded source."""
    return any(KFP_EXECUTOR in part for part in command)


def gcpc_launcher(image: str, command: list[str]) -> str | None:
    """The GCPC launcher module a GCPC operator's container runs (`python3 -u -m MODULE`)."""
    if not image.startswith(GCPC_IMAGES) or "-m" not in command:
        return None
    module_at = command.index("-m") + 1
    module = command[module_at] if module_at < len(command) else ""
    if os.path.basename(command[0]).startswith("python") and module.startswith(GCPC_PACKAGE):
        return module
    return None


def local_program(command: list[str]) -> str | None:
    """The program a container command runs, when it exists here (`python3` is ours)."""
    if not command:
        return None
    if os.path.basename(command[0]).startswith("python"):
        return sys.executable
    return shutil.which(command[0])


def refuse_unless_runnable(task: str, container: dict[str, Any]) -> None:
    """Refuses, before the run's first task, a container whose program does not exist here."""
    command = [*(container.get("command") or []), *(container.get("args") or [])]
    if is_lightweight(command) or gcpc_launcher(container.get("image", ""), command):
        return
    if local_program(command) is None:
        raise TaskRefused(
            f"task {task!r}: image {container.get('image')!r}: no Docker here, and its "
            f"command's program {command[0] if command else '(none)'!r} does not exist on this "
            "machine: run this pipeline on Vertex AI with --vertex"
        )


def through_gcpc_main(command: list[str], python: str) -> list[str]:
    """`python3 -u -m LAUNCHER ARGS` as `PYTHON -u -m gcpc_main LAUNCHER ARGS`."""
    module_at = command.index("-m") + 1
    return [python, "-u", "-m", GCPC_MAIN, *command[module_at:]]


def through_task_main(command: list[str], python: str) -> list[str]:
    """The command with kfp's executor started by `task_main` under `python`."""
    program = next(i for i, part in enumerate(command) if KFP_EXECUTOR in part)
    rewritten = list(command)
    rewritten[program] = command[program].replace(
        KFP_EXECUTOR, f"{shlex.quote(python)} -m {TASK_MAIN}"
    )
    return rewritten


@dataclass
class TaskResult:
    exit_code: int
    error: str | None = None


class TaskProcess:
    """One task's process: a lightweight component, a GCPC operator or a container command."""

    def __init__(self, label: str, image: str, full_command: list[str], env: dict[str, str]):
        self.label = label
        self.image = image
        self.full_command = list(full_command)
        self.env_vars = dict(env)

    def run(self) -> TaskResult:
        assert _settings is not None, "task_handler.configure() was not called"
        if gcpc_launcher(self.image, self.full_command):
            command = through_gcpc_main(self.full_command, sys.executable)
            warm: WarmCall | None = gcpc_call(self.full_command)
            return self._finish(command, executor_output_dir(command), warm)
        if not is_lightweight(self.full_command):
            return self._run_container()
        command, packages, pip_options = split_install_prelude(self.full_command)
        python = sys.executable
        warm = kfp_call(command)
        if packages:  # its own interpreter: not the worker's
            python = str(_settings.environments.python_for(packages, pip_options))
            warm = None
        command = through_task_main(command, python)
        return self._finish(command, executor_output_dir(command), warm)

    def _run_container(self) -> TaskResult:
        program = local_program(self.full_command)
        command = [program or self.full_command[0], *self.full_command[1:]]
        TaskOutput(self.label).line(
            f"no Docker here: image {self.image} is not pulled; its command runs as a local "
            "process\n"
        )
        return self._finish(command, None, None)

    def _finish(
        self, command: list[str], output_dir: str | None, warm: WarmCall | None
    ) -> TaskResult:
        """Runs the task's process; its exit code, and its error when it fails."""
        error_dir = Path(output_dir) if output_dir else None
        if error_dir is not None:
            (error_dir / EXECUTOR_ERROR_FILE).unlink(missing_ok=True)  # a retry starts clean
        output = TaskOutput(self.label)
        returncode = self._run_process(command, warm, output)
        if returncode == 0:
            return TaskResult(0)
        return TaskResult(returncode, _failure_message(error_dir, list(output.tail), returncode))

    def _run_process(self, command: list[str], warm: WarmCall | None, output: TaskOutput) -> int:
        assert _settings is not None
        env = {**os.environ, **self.env_vars}
        if _settings.gcs_mount:
            env[GCS_MOUNT_ENV] = _settings.gcs_mount
        # A task's temp files (kfp's `mktemp -d` holding ephemeral_component.py, and whatever the
        # component writes there) go with it, as a Vertex task's container does.
        with tempfile.TemporaryDirectory(prefix="vertexkit-task-") as task_tmp:
            env["TMPDIR"] = task_tmp
            if warm is not None and _settings.workers is not None:
                try:
                    return _settings.workers.run(warm, env, Path(task_tmp), output.line)
                except WorkerGone:
                    pass  # not started: it runs in a plain process below
            return _stream(command, env, output)


class TaskOutput:
    """A task's output lines: printed under its label, the last ones kept for its error."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.tail: deque[str] = deque(maxlen=ERROR_TAIL_LINES)

    def line(self, line: str) -> None:
        _print_task_line(self.label, line)
        if line.strip():
            self.tail.append(line.rstrip())


def _stream(command: list[str], env: dict[str, str], output: TaskOutput) -> int:
    """Runs the task in a plain process, its lines to `output`; its exit code."""
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        bufsize=1,
        env=env,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            output.line(line)
        return process.wait()


def _print_task_line(label: str, line: str) -> None:
    assert _settings is not None
    with _settings.output_lock:
        sys.stdout.write(f"[{label}] {line}")
        sys.stdout.flush()


def _failure_message(error_dir: Path | None, tail: list[str], returncode: int) -> str:
    """The component's own error (executor_error.json) or its last error line, with the tail."""
    headline = None
    if error_dir is not None and (error_dir / EXECUTOR_ERROR_FILE).is_file():
        try:
            written = json.loads((error_dir / EXECUTOR_ERROR_FILE).read_text())
            # A long message (a job's failure with its log's last lines) ends with its cause.
            headline = _last_error_line(str(written.get("errorMessage", "")).splitlines())
        except (OSError, ValueError):
            headline = None
    if not headline:
        headline = _last_error_line(tail) or f"the task exited with {returncode}"
    return headline + ("\n" + "\n".join(tail) if tail else "")


def _last_error_line(lines: list[str]) -> str | None:
    """The exception line of a traceback: the last line that is not indented or a log line."""
    candidates = [
        line
        for line in lines
        if line.strip() and not line.startswith((" ", "\t", "Traceback", "[KFP Executor"))
    ]
    return candidates[-1].strip() if candidates else None
