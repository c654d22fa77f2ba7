"""The warm task worker, driven the way the task handler drives it: real kfp component commands,
a real worker process, real forked children (Linux only: elsewhere tasks run plainly)."""

# No `from __future__ import annotations`: KFP reads the components' real type annotations.

import contextlib
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from kfp import dsl

from vertexkit.local.vertex.pipelines.warm_tasks import (
    TaskWorker,
    WarmWorkers,
    WorkerGone,
    fork_available,
    kfp_call,
    uses_clients,
)

needs_fork = pytest.mark.skipif(not fork_available(), reason="no safe fork on this platform")


@dsl.component(base_image="python:3.11")
def probe() -> str:
    import json
    import os
    import sys
    import tempfile

    import numpy

    return json.dumps(
        {
            "parent": os.getppid(),
            "tmp": tempfile.gettempdir(),
            "flavour": os.environ.get("FLAVOUR"),
            "draw": float(numpy.random.random()),
            "argv0": sys.argv[0],
            # the package init already run (a job whose components import the package), or only
            # the runtime's clients and types loaded (`gapic.runtime_names`)
            "package_ready": "ModelServiceClient"
            in getattr(sys.modules.get("google.cloud." + "aiplatform_v1"), "__dict__", {}),
            "runtime_names_ready": "google.cloud.aiplatform_v1.services.model_service"
            in sys.modules,
        }
    )


@dsl.component(base_image="python:3.11")
def clients_probe() -> str:
    import json
    import os
    import sys

    return json.dumps(
        {
            "parent": os.getppid(),
            "bigquery": "google.cloud.bigquery" in sys.modules,
            "job_service": "google.cloud.aiplatform_v1.services.job_service" in sys.modules,
        }
    )


@dsl.component(base_image="python:3.11")
def fails(reason: str) -> str:
    raise ValueError(reason)


@dsl.component(base_image="python:3.11")
def killed() -> str:
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)
    return "unreachable"


@dsl.component(base_image="python:3.11", install_kfp_package=False)
def no_prelude() -> str:
    return "ok"


def _command(component, executor_input: dict) -> list[str]:
    container = component.component_spec.implementation.container
    args = [json.dumps(executor_input) if a == "{{$}}" else a for a in container.args]
    return [*container.command, *args]


def _executor_input(folder: Path, **parameters: str) -> dict:
    return {
        "inputs": {"parameterValues": parameters},
        "outputs": {
            "parameters": {"Output": {"outputFile": str(folder / "Output")}},
            "outputFile": str(folder / "executor_output.json"),
        },
    }


def _lightweight(component, folder: Path, **parameters: str) -> list[str]:
    """The command without kfp's pip prelude, as the handler passes it on."""
    from vertexkit.local.vertex.pipelines.task_handler import split_install_prelude

    folder.mkdir(parents=True, exist_ok=True)
    command, _, _ = split_install_prelude(
        _command(component, _executor_input(folder, **parameters))
    )
    return command


@pytest.fixture
def worker():
    started = TaskWorker(dict(os.environ))
    yield started
    started.close()


def _run(worker: TaskWorker, component, tmp_path: Path, name: str, env=None, **parameters):
    folder = tmp_path / name
    call = kfp_call(_lightweight(component, folder / "outputs", **parameters))
    assert call is not None, "kfp's own command must be recognised"
    task_tmp = folder / "tmp"
    task_tmp.mkdir()
    lines: list[str] = []
    code = worker.run(call, {**os.environ, **(env or {}), "TMPDIR": str(task_tmp)}, task_tmp,
                      lines.append)  # fmt: skip
    return code, lines, folder


@needs_fork
def test_a_task_runs_in_a_child_of_the_worker_with_its_own_env_and_temp(worker, tmp_path) -> None:
    code, lines, folder = _run(worker, probe, tmp_path, "a", env={"FLAVOUR": "lemon"})
    assert code == 0, "".join(lines)
    seen = json.loads(json.loads((folder / "outputs" / "executor_output.json").read_text())[
        "parameterValues"]["Output"])  # fmt: skip
    assert seen["parent"] == worker.process.pid
    assert seen["tmp"] == str(folder / "tmp")
    assert seen["flavour"] == "lemon"
    assert not any("Warning" in line for line in lines), lines  # as quiet as a plain process
    assert seen["argv0"].endswith("executor_main.py")  # as runpy sets it in a plain process


@needs_fork
def test_forked_siblings_draw_different_random_numbers(worker, tmp_path) -> None:
    draws = []
    for name in ("a", "b"):
        code, lines, folder = _run(worker, probe, tmp_path, name)
        assert code == 0, "".join(lines)
        output = json.loads((folder / "outputs" / "executor_output.json").read_text())
        draws.append(json.loads(output["parameterValues"]["Output"])["draw"])
    assert draws[0] != draws[1]


@needs_fork
def test_a_failing_task_exits_1_with_its_traceback_and_executor_error(worker, tmp_path) -> None:
    code, lines, folder = _run(worker, fails, tmp_path, "f", reason="no rows in the table")
    assert code == 1
    assert any("ValueError: no rows in the table" in line for line in lines)
    written = json.loads((folder / "outputs" / "executor_error.json").read_text())
    assert written["errorMessage"] == "ValueError: no rows in the table"


@needs_fork
def test_a_task_killed_by_a_signal_reports_the_signal(worker, tmp_path) -> None:
    code, lines, _ = _run(worker, killed, tmp_path, "k")
    assert code == -signal.SIGKILL, "".join(lines)


@needs_fork
def test_a_stopped_worker_refuses_new_tasks_so_they_run_plainly(worker, tmp_path) -> None:
    worker.process.kill()
    worker.process.wait()
    with pytest.raises(WorkerGone):
        _run(worker, probe, tmp_path, "gone")


def test_kfp_commands_are_recognised_with_and_without_the_prelude(tmp_path) -> None:
    for component, function in ((probe, "probe"), (no_prelude, "no_prelude")):
        call = kfp_call(_lightweight(component, tmp_path / component.name))
        assert call is not None and call.kind == "kfp"
        assert call.env == {"_KFP_RUNTIME": "true"}
        assert call.source and f"def {function}(" in call.source


def test_an_edited_script_runs_as_it_is_in_a_plain_process(tmp_path) -> None:
    command = _lightweight(probe, tmp_path / "p")
    edited = [*command[:2], "pip list && " + command[2], *command[3:]]
    assert kfp_call(edited) is None
    assert kfp_call([sys.executable, "-c", "print(1)"]) is None


@needs_fork
def test_close_ends_an_idle_worker_without_killing_it(tmp_path) -> None:
    worker = TaskWorker(dict(os.environ))
    code, lines, _ = _run(worker, no_prelude, tmp_path, "n")
    assert code == 0, "".join(lines)
    assert worker.preloaded(timeout=300)  # idle from now on
    worker.close()
    assert worker.process.returncode == 0  # it left on its own: close() did not have to kill it


def _probe(workers, tmp_path: Path, name: str) -> dict:
    folder = tmp_path / name
    call = kfp_call(_lightweight(probe, folder / "outputs"))
    (folder / "tmp").mkdir()
    code = workers.run(call, {**os.environ, "TMPDIR": str(folder / "tmp")}, folder / "tmp", print)
    assert code == 0
    output = json.loads((folder / "outputs" / "executor_output.json").read_text())
    return json.loads(output["parameterValues"]["Output"])


@needs_fork
def test_tasks_go_to_the_full_worker_once_it_has_preloaded_else_to_the_light_one(tmp_path):
    workers = WarmWorkers(dict(os.environ))
    try:
        assert workers.full.preloaded(timeout=300)
        warm = _probe(workers, tmp_path, "warm")
        assert warm["parent"] == workers.full.process.pid and warm["runtime_names_ready"]
        assert not warm["package_ready"]  # no component of the job imports the whole package
        workers.full.process.kill()
        workers.full.process.wait()
        assert _probe(workers, tmp_path, "light")["parent"] == workers.light.process.pid
        workers.light.process.kill()
        workers.light.process.wait()
        with pytest.raises(WorkerGone):
            _probe(workers, tmp_path, "none")
    finally:
        workers.close()


def _parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


def _grown_from_the_light_one(workers: WarmWorkers) -> bool:
    """Whether the full worker runs, forked from the light one (not a process of this one)."""
    assert workers.full.preloaded(timeout=300) or workers.full.process.pid is not None
    return _parent_of(workers.full.process.pid) == workers.light.process.pid


def _workers_of_this_process() -> list[str]:
    """The preload list (`light`, `full`) of each task worker this process started itself."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if parent == os.getpid() and b"vertexkit.local.vertex.pipelines.task_worker" in argv:
                found.append(argv[-2].decode())  # ... task_worker FD LIST, then the final NUL
    return sorted(found)


@needs_fork
def test_lazy_workers_start_with_the_first_task_that_runs(tmp_path):
    """A rerun expected from the cache (`lazy`) starts no worker until a task runs."""
    workers = WarmWorkers(dict(os.environ), lazy=True)
    try:
        assert _workers_of_this_process() == []
        assert _probe(workers, tmp_path, "first")["parent"] == workers.light.process.pid
        assert _workers_of_this_process() == ["light"]
        assert _grown_from_the_light_one(workers)
    finally:
        workers.close()
    assert _workers_of_this_process() == []


@needs_fork
def test_a_run_starts_the_light_worker_at_once_and_the_full_one_with_a_task(tmp_path):
    workers = WarmWorkers(dict(os.environ))
    try:
        assert _workers_of_this_process() == ["light"]
        _probe(workers, tmp_path, "first")
        assert _grown_from_the_light_one(workers)
    finally:
        workers.close()


@pytest.mark.parametrize(
    ("source", "uses"),
    [
        ("from vertexkit.runtime.bigquery import run_query_job", True),
        ("from vertexkit.runtime.training import run_custom_job", True),
        ("from google.cloud import bigquery\nimport google.cloud.bigquery", True),
        ("import json\nreturn a + b", False),
        ("from vertexkit.runtime.trainingdata import x", False),  # a word boundary, not a prefix
    ],
    ids=["bigquery-runtime", "training-runtime", "bigquery-client", "plain", "lookalike"],
)
def test_a_job_uses_the_clients_when_a_component_imports_them(source: str, uses: bool) -> None:
    spec = {"deploymentSpec": {"executors": {"exec-a": {"container": {"command": [source]}}}}}
    assert uses_clients(spec) is uses


@needs_fork
def test_the_light_worker_imports_the_clients_a_job_uses(tmp_path):
    workers = WarmWorkers(dict(os.environ))
    try:
        assert workers.light.preloaded(timeout=300) and not workers.light.has_clients()
        spec = {"deploymentSpec": {"executors": {"e": {"container": {"command": [
            "from vertexkit.runtime.bigquery import run_query_job"]}}}}}  # fmt: skip
        workers.expect(spec)
        deadline = time.monotonic() + 300
        while not workers.light.has_clients():
            assert time.monotonic() < deadline, "the light worker never imported the clients"
            time.sleep(0.05)
    finally:
        workers.close()


@needs_fork
def test_a_task_sent_while_the_clients_load_starts_once_bigquerys_client_is_in(tmp_path):
    """The run's first task (a BigQuery one) is forked between BigQuery's client and the custom
    job's: it does not wait for a client it does not use. The driver asks for the full worker
    (a grow, with its socket) just before it sends that task: the task must still end."""
    workers = WarmWorkers(dict(os.environ))
    try:
        workers.expect_clients()  # queued behind the light imports; the grow and task behind it
        seen = _in_thread(lambda: _clients_seen(workers, tmp_path, "first"))
        assert seen == {"parent": workers.light.process.pid, "bigquery": True,
                        "job_service": False}  # fmt: skip
        deadline = time.monotonic() + 300
        while not workers.light.has_clients():  # the rest still comes in
            assert time.monotonic() < deadline, "the light worker never finished its clients"
            time.sleep(0.05)
        assert workers.full.preloaded(timeout=300)  # and the full worker grows after it
        seen = _in_thread(lambda: _clients_seen(workers, tmp_path, "next"))
        assert seen == {"parent": workers.full.process.pid, "bigquery": True, "job_service": True}
    finally:
        workers.close()


def _clients_seen(workers: WarmWorkers, tmp_path: Path, name: str) -> dict:
    folder = tmp_path / name
    call = kfp_call(_lightweight(clients_probe, folder / "outputs"))
    (folder / "tmp").mkdir()
    lines: list[str] = []
    code = workers.run(call, {**os.environ, "TMPDIR": str(folder / "tmp")}, folder / "tmp",
                       lines.append)  # fmt: skip
    assert code == 0, "".join(lines)
    output = json.loads((folder / "outputs" / "executor_output.json").read_text())
    return json.loads(output["parameterValues"]["Output"])


def _in_thread(call, seconds: float = 120):
    """`call()`'s result; a task that never ends fails the test instead of hanging it."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, f"the task did not end within {seconds} s (or failed: see above)"
    return result[0]


@needs_fork
def test_a_job_whose_components_import_aiplatform_v1_gets_the_whole_package_preloaded(tmp_path):
    workers = WarmWorkers(dict(os.environ))
    try:
        spec = {"deploymentSpec": {"executors": {"e": {"container": {"command": [
            "from google.cloud import aiplatform_v1"]}}}}}  # fmt: skip
        workers.expect(spec)
        assert workers.full.preloaded(timeout=300)
        seen = _probe(workers, tmp_path, "gapic")
        assert seen["parent"] == workers.full.process.pid and seen["package_ready"]
    finally:
        workers.close()
