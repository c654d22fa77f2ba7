"""The local loop's fixed costs: `vertexkit local up` to ready, and the CLI's read verbs.

1. `vertexkit local up --port 0` from launch until its last line (`# console: ...`) prints,
   against a bare Starlette + uvicorn server launched the same way until it prints that it
   listens: the floor any Python web server on this machine pays. Interleaved, medians.
2. With that `local up` running (found through its `local-up.json`), `vertexkit --help` and the
   read verbs: `models list`, `endpoints list`, `runs list`, `predict` (to an endpoint that does
   not exist: the whole path up to the refusal).

Each figure is wall seconds and CPU seconds (user + system of the child): on a shared machine the
CPU figure is the steadier one. Run: `.venv/bin/python -m benchmarks.fast_loop` (about a minute).
"""

from __future__ import annotations

import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VERTEXKIT = [sys.executable, "-m", "vertexkit.cli"]
REPEATS = 3
BARE_SERVER = """
import socket, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
async def health(_): return JSONResponse({"status": "ok"})
app = Starlette(routes=[Route("/healthz", health)])
server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
sock = socket.socket(); sock.bind(("127.0.0.1", 0))
import threading
thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
thread.start()
while not server.started: threading.Event().wait(0.01)
print("# listening", flush=True)
threading.Event().wait()
"""
READ_VERBS = {
    "--help": ["--help"],
    "models list": ["models", "list"],
    "endpoints list": ["endpoints", "list"],
    "runs list": ["runs", "list"],
    "predict": ["predict", "no-such-endpoint", "--instances", "[[1.0]]"],
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def until_ready(
    command: list[str], marker: str, exports: dict[str, str] | None = None
) -> tuple[float, subprocess.Popen]:
    """Seconds (wall) until `command` prints a line starting with `marker`; the process runs on.
    The `export NAME=VALUE` lines it printed before land in `exports`."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )  # stderr: a bare server's KeyboardInterrupt traceback at the stop
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith(marker):
            return time.perf_counter() - started, process
        if line.startswith("export ") and exports is not None:
            name, _, value = line.removeprefix("export ").strip().partition("=")
            exports[name] = value
    raise RuntimeError(f"{command} ended before printing {marker!r}")


def stopped_cpu(process: subprocess.Popen) -> float:
    """Stops a server and returns the CPU seconds it used (user + system, from its rusage)."""
    before = children_cpu()
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)
    return children_cpu() - before


def serve_once(command: list[str], marker: str) -> tuple[float, float]:
    wall, process = until_ready(command, marker)
    return wall, stopped_cpu(process)  # CPU to ready and a stop: the stop is the smaller part


def startup(home: Path) -> None:
    local_up = [*VERTEXKIT, "local", "up", "--home", str(home), "--port", "0"]
    bare = [sys.executable, "-c", BARE_SERVER]
    runs: dict[str, list[tuple[float, float]]] = {"local up": [], "bare": []}
    for _ in range(REPEATS):
        runs["local up"].append(serve_once(local_up, "# console"))
        runs["bare"].append(serve_once(bare, "# listening"))
    floor = statistics.median(w for w, _ in runs["bare"])
    for name, figures in runs.items():
        wall = statistics.median(w for w, _ in figures)
        cpu = statistics.median(c for _, c in figures)
        print(f"{name:>10} to ready: {wall:6.2f} s wall ({cpu:5.2f} s CPU)  {wall / floor:5.1f}x")


def verb_seconds(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = children_cpu()
    started = time.perf_counter()
    subprocess.run([*VERTEXKIT, *args], env=env, capture_output=True, check=False)
    return time.perf_counter() - started, children_cpu() - before


def read_verbs(home: Path) -> None:
    """Each verb with the exports of `local up` in its environment, then with only its home
    (where a vertexkit that knows `local-up.json` finds the running server)."""
    local_up = [*VERTEXKIT, "local", "up", "--home", str(home), "--port", "0"]
    exports: dict[str, str] = {}
    _, server = until_ready(local_up, "# console", exports)
    bare_env = {k: v for k, v in os.environ.items() if "EMULATOR" not in k}
    bare_env["VERTEXKIT_HOME"] = str(home)
    try:
        found = (home / "local-up.json").is_file()
        print(f"read verbs against a running local up (local-up.json written: {found})")
        for name, args in READ_VERBS.items():
            for how, env in (("exported", {**bare_env, **exports}), ("home only", bare_env)):
                figures = [verb_seconds(args, env) for _ in range(REPEATS)]
                wall = statistics.median(w for w, _ in figures)
                cpu = statistics.median(c for _, c in figures)
                print(f"{name:>15} ({how:>9}): {wall:6.2f} s wall ({cpu:5.2f} s CPU)")
    finally:
        stopped_cpu(server)


def interruptible_children() -> None:
    """Started in the background by a non-interactive shell, this process ignores SIGINT and its
    children would inherit that: a bare server stopped with SIGINT would never end. A handler
    here is reset to the default in each child."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main() -> None:
    interruptible_children()
    with tempfile.TemporaryDirectory() as home:
        startup(Path(home) / "startup")
        read_verbs(Path(home) / "verbs")


if __name__ == "__main__":
    main()
