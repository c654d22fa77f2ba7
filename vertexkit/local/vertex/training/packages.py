"""Python package specs: install the package URIs into a cached environment, once per content.

Vertex installs `packageUris` into its prebuilt training container with pip, then runs
`python -m MODULE`. Here the prebuilt image's framework is the local Python environment: a
venv (without its own pip) whose `.pth` file adds the current interpreter's `sys.path`, so the
trainer sees every installed library and only the package itself (plus anything missing) is
installed. Environments are keyed by the SHA-256 of the package files and reused across jobs.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from vertexkit.local.venvs import create_overlay, pip_install
from vertexkit.local.vertex.backend import VertexBackend


class PackageError(Exception):
    """A package URI is missing or pip could not install it (the message says which)."""


class PackageCache:
    def __init__(self, root: Path, backend: VertexBackend) -> None:
        self.root = root
        self.backend = backend
        self._lock = threading.Lock()  # two jobs with the same package build it once

    def python_for(self, package_uris: list[str]) -> Path:
        """The interpreter of an environment with `package_uris` installed (built on first use)."""
        files = [self._local_file(uri) for uri in package_uris]
        env_dir = self.root / content_hash(files)
        python = env_dir / "bin" / "python"
        with self._lock:
            if (env_dir / ".complete").exists():
                return python
            self._build(env_dir, files)
        return python

    def _local_file(self, uri: str) -> Path:
        if not uri.startswith("gs://"):
            raise PackageError(f"packageUris: {uri!r} is not a gs:// URI")
        path = self.backend.storage.gs_uri_to_path(uri)
        if not path.is_file():
            raise PackageError(f"packageUris: {uri} does not exist in Cloud Storage")
        return path

    def _build(self, env_dir: Path, files: list[Path]) -> None:
        python = create_overlay(env_dir)
        installed, output = pip_install(python, ["--no-build-isolation", *map(str, files)])
        if not installed:
            raise PackageError(f"pip could not install the package URIs:\n{output}")
        (env_dir / ".complete").touch()


def content_hash(files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:24]
