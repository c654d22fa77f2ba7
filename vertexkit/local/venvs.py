"""Overlay environments: a venv that sees this interpreter's libraries, plus what pip adds.

Locally a prebuilt training image or a task's base image is this Python environment. A job's
package URIs or a task's `packages_to_install` must not be installed into it (that would change
vertexkit's own environment), so they go into a venv without pip whose `.pth` file appends this
interpreter's library directories: the code sees every installed library, and only what is
missing is installed. Used by the training package cache and the pipeline task environments.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import venv
from pathlib import Path

# Registered at start-up, before the program's own code, so it runs after every other exit
# handler: the interpreter's teardown then skips full collections over every object pandas,
# scikit-learn or gcsfs made (0.4-0.8 s a trainer replica). Threads are still joined, every exit
# handler still runs and objects freed with their modules still run their finalizers (an unclosed
# file is flushed); only garbage in reference cycles is left to the process's end, as Python
# allows.
SHORT_EXIT_PTH = ("_vertexkit_short_exit.pth", "import atexit, gc; atexit.register(gc.freeze)\n")


def site_packages(env_dir: Path) -> Path:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return env_dir / "lib" / version / "site-packages"


def create_overlay(env_dir: Path) -> Path:
    """A fresh venv at `env_dir` that sees this interpreter's libraries and ends without a full
    collection (`SHORT_EXIT_PTH`); returns its python."""
    venv.EnvBuilder(with_pip=False, clear=True, symlinks=True).create(env_dir)
    libraries = site_packages(env_dir)
    libraries.mkdir(parents=True, exist_ok=True)
    paths = [p for p in site.getsitepackages() if os.path.isdir(p)]
    # An `import` line runs at start-up; addsitedir also processes those directories' own
    # `.pth` files (editable installs), which a plain path line would not.
    line = f"import site; list(map(site.addsitedir, {paths!r}))\n"
    (libraries / "_vertexkit_overlay.pth").write_text(line)
    name, short_exit = SHORT_EXIT_PTH
    (libraries / name).write_text(short_exit)
    return env_dir / "bin" / "python"


def pip_install(python: Path, arguments: list[str]) -> tuple[bool, str]:
    """Runs this interpreter's pip for the overlay's `python`; (succeeded, last output lines)."""
    command = [
        sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
        "--disable-pip-version-check", "--no-warn-script-location", *arguments,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
    return done.returncode == 0, tail
