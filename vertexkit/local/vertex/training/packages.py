"""Python package specs: install the package URIs into a cached environment, once per content.

Vertex installs `packageUris` into its prebuilt training container with pip, then runs
`python -m MODULE`. Here the prebuilt image's framework is the local Python environment: a
venv (without its own pip) whose `.pth` file adds the current interpreter's `sys.path`, so the
trainer sees every installed library and only the package itself (plus anything missing) is
installed. Environments are keyed by the SHA-256 of the package files and of the interpreter
they overlay, and kept outside any one home (like the staged source distributions), so a fresh
home, or a second local cloud, reuses an unchanged trainer's environment.

A replica's interpreter ends the way Python ends, except that its last exit handler freezes the
garbage collector (`venvs.SHORT_EXIT_PTH`), saving 0.4-0.8 s of teardown on each replica and
tuning trial.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import sys
import tempfile
import threading
from pathlib import Path

from vertexkit.local.venvs import create_overlay, pip_install
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.training import env_cache
from vertexkit.local.vertex.training.env_cache import CACHE_ENV, default_root  # noqa: F401


class PackageError(Exception):
    """A package URI is missing or pip could not install it (the message says which)."""


# Part of every environment's key: an environment built with another layout is not reused.
LAYOUT = "short-exit-1"


class PackageCache:
    def __init__(self, backend: VertexBackend, root: Path | None = None) -> None:
        self.root = root or default_root()
        self.backend = backend
        self._lock = threading.Lock()  # two jobs of this process build one environment once

    def python_for(self, package_uris: list[str]) -> Path:
        """The interpreter of an environment with `package_uris` installed (built on first use)."""
        files = [self._local_file(uri) for uri in package_uris]
        env_dir = self.root / environment_key(files)
        python = env_dir / "bin" / "python"
        with self._lock:
            built = not (env_dir / ".complete").exists()
            if built:
                self._build_beside(env_dir, files)
            env_cache.touch(env_dir)
            if built:  # the cache is bounded: the least recently used beyond the limit go
                with contextlib.suppress(ValueError, OSError):  # never the job's failure
                    env_cache.prune(self.root)
        return python

    def _build_beside(self, env_dir: Path, files: list[Path]) -> None:
        """Builds in a private folder and renames it into place: another process building the
        same environment at once either wins the rename (ours is dropped) or loses it."""
        self.root.mkdir(parents=True, exist_ok=True)
        # A folder of this build's own: a rival builder (thread or process) never touches it.
        scratch = Path(tempfile.mkdtemp(prefix=f".building-{env_dir.name}-", dir=self.root))
        try:
            self._build(scratch, files)
            try:
                scratch.rename(env_dir)
            except OSError:
                if not (env_dir / ".complete").exists():
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _local_file(self, uri: str) -> Path:
        if not uri.startswith("gs://"):
            raise PackageError(f"packageUris: {uri!r} is not a gs:// URI")
        path = self.backend.storage.gs_uri_to_path(uri)
        if not path.is_file():
            raise PackageError(f"packageUris: {uri} does not exist in Cloud Storage")
        return path

    def _build(self, env_dir: Path, files: list[Path]) -> None:
        python = create_overlay(env_dir)
        # --no-compile: bytecode written here would name the scratch folder in tracebacks; it
        # is written on first import in the environment's final place instead.
        arguments = ["--no-build-isolation", "--no-compile", *map(str, files)]
        installed, output = pip_install(python, arguments)
        if not installed:
            raise PackageError(f"pip could not install the package URIs:\n{output}")
        (env_dir / env_cache.PACKAGES).write_text("".join(f"{p.name}\n" for p in files))
        (env_dir / ".complete").touch()


def content_hash(files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


def environment_key(files: list[Path]) -> str:
    """The package files' content, the interpreter the environment overlays and its LAYOUT:
    another Python (another venv, another version) gets an environment of its own."""
    interpreter = f"{sys.executable}\0{sys.version}\0{LAYOUT}".encode()
    return hashlib.sha256(content_hash(files).encode() + b"\0" + interpreter).hexdigest()[:24]
