"""The console script ends with a short exit (`vertexkit.cli.short_exit`): the same exit codes,
output and refusals as the in-process app, with what the interpreter does before its teardown
kept (threads joined, atexit handlers run, output flushed). Real processes throughout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vertexkit.cli import app

# A process that leaves work for the interpreter's exit: a non-daemon thread still writing, an
# atexit handler, output not yet flushed. `short_exit` must do all of it, in the interpreter's
# order (threads first), and exit with the code given.
EXIT_WORK = """
import atexit, sys, threading, time
from pathlib import Path
from vertexkit.cli import short_exit

record = Path(sys.argv[1])
def late_thread():
    time.sleep(0.3)
    with record.open("a") as handle:
        handle.write("thread\\n")
threading.Thread(target=late_thread).start()
atexit.register(lambda: record.open("a").write("atexit\\n"))
sys.stdout.write("unflushed stdout")
sys.stderr.write("unflushed stderr")
short_exit({code})
"""


def _vertexkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The console script as a user runs it (`main()`: the short exit), installed beside this
    Python."""
    command = [str(Path(sys.executable).with_name("vertexkit")), *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.mark.parametrize(
    ("code", "exit_code", "stderr_end"),
    [("0", 0, "unflushed stderr"), ("3", 3, "unflushed stderr"), ("None", 0, "unflushed stderr")],
    ids=["zero", "three", "none"],
)
def test_short_exit_keeps_threads_atexit_and_output(
    tmp_path: Path, code: str, exit_code: int, stderr_end: str
) -> None:
    record = tmp_path / "record.txt"
    script = EXIT_WORK.format(code=code)
    done = subprocess.run(
        [sys.executable, "-c", script, str(record)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == exit_code, done.stderr
    assert record.read_text() == "thread\natexit\n"
    assert done.stdout == "unflushed stdout"
    assert done.stderr.endswith(stderr_end), done.stderr


def test_a_message_exit_is_left_to_the_interpreter(tmp_path: Path) -> None:
    """`sys.exit("text")` prints the text and exits 1: not a number, so no short exit."""
    record = tmp_path / "record.txt"
    script = EXIT_WORK.format(code="'stopped: no data'")
    done = subprocess.run(
        [sys.executable, "-c", script, str(record)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr.endswith("stopped: no data\n"), done.stderr
    assert record.read_text() == "thread\natexit\n"


@pytest.mark.parametrize(
    "args",
    [
        ["run", "training", "--param", "n_estimators=many"],
        ["run", "training", "--param", "colour=red"],
        ["run", "no-such-pipeline"],
        ["run", "training", "--max-parallel", "0"],
    ],
    ids=["bad-type", "unknown-param", "unknown-pipeline", "bad-option"],
)
def test_refusals_read_the_same_from_the_console_script(tmp_path: Path, args: list[str]) -> None:
    home = tmp_path / "home"
    done = _vertexkit(*args, "--home", str(home), cwd=tmp_path)
    in_process = CliRunner().invoke(app, [*args, "--home", str(home)], prog_name="vertexkit")
    assert done.returncode == in_process.exit_code == 2, done.stderr
    assert done.stdout == ""
    assert " ".join(done.stderr.split()) == " ".join(in_process.output.split())
    assert done.stderr.count("error:") + done.stderr.count("Error") == 1, done.stderr
    assert not (home / "vertex" / "pipelineJobs").exists()  # nothing was created


@pytest.mark.slow
def test_a_failing_run_ends_with_its_error_line_and_exit_2(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = _vertexkit(
        "run", "training", "--home", str(home), "--param", "model_type=bogus", cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert "custom-training-job          FAILED" in done.stdout
    assert "upload-model" not in done.stdout
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    flat = " ".join(done.stderr.split())
    assert "task 'custom-training-job': tabular_trainer.task: error: --model-type 'bogus'" in flat
    log = flat.split("(task logs: ", 1)[1].split(")", 1)[0]
    assert Path(log).is_file(), log  # the driver's log was written before the process ended
