"""`packages_to_install` of a lightweight component: an isolated environment per package list.

On Vertex a component's container pip-installs its packages into itself, and the container is
thrown away. Locally the task runs in a venv made for its package list (the list and pip's index
options, hashed), built once and reused: created with this interpreter, without pip of its own,
and with a `.pth` file that adds this interpreter's library directories, so the task sees
vertexkit, kfp and every library installed here, and only what is missing is installed into the
venv. vertexkit's own environment is never written to.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from pathlib import Path

from vertexkit.local.venvs import create_overlay, pip_install

COMPLETE_MARKER = ".complete"


class PackageInstallError(RuntimeError):
    """pip could not install a component's packages_to_install (the message has pip's tail)."""


class TaskEnvironments:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()  # parallel tasks with one package list build it once

    def python_for(self, packages: list[str], pip_options: list[str]) -> Path:
        """The interpreter of the environment holding `packages` (built on first use)."""
        env_dir = self.root / package_list_key(packages, pip_options)
        with self._lock:
            if not (env_dir / COMPLETE_MARKER).exists():
                self._build_in_place(env_dir, packages, pip_options)
        return env_dir / "bin" / "python"

    def _build_in_place(self, env_dir: Path, packages: list[str], pip_options: list[str]) -> None:
        """Builds beside `env_dir` and renames it there: two pipeline jobs (two processes) that
        need the same environment never see a half-built one; the second rename loses."""
        staging = env_dir.with_name(f"{env_dir.name}.building-{os.getpid()}")
        try:
            _build(staging, packages, pip_options)
            if (env_dir / COMPLETE_MARKER).exists():
                return  # another job built it meanwhile
            shutil.rmtree(env_dir, ignore_errors=True)  # an unfinished one, never marked complete
            os.replace(staging, env_dir)
        except OSError:
            if not (env_dir / COMPLETE_MARKER).exists():
                raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def package_list_key(packages: list[str], pip_options: list[str]) -> str:
    text = json.dumps({"packages": sorted(packages), "options": pip_options})
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _build(env_dir: Path, packages: list[str], pip_options: list[str]) -> None:
    python = create_overlay(env_dir)
    installed, output = pip_install(python, [*pip_options, *packages])
    if not installed:
        raise PackageInstallError(f"packages_to_install {packages}: pip failed:\n{output}")
    (env_dir / COMPLETE_MARKER).touch()
