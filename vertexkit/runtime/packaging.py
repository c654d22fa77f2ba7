"""Training code as Vertex runs it: a source distribution on Cloud Storage, prebuilt images.

`stage_trainer(ctx, "trainers/tabular", "gs://bucket")` builds the folder into an sdist (offline:
setuptools' own build backend, in a subprocess, on a copy of the folder so the user's tree gets no
egg-info), names it by the hash of the folder's content and uploads it once to
`gs://bucket/trainers/<name>-<hash>.tar.gz`. The URI goes into a python package spec's
`packageUris`; Vertex pip-installs it into the prebuilt training image and runs the module.

The prebuilt images (by framework, version and accelerator) come from vertexkit/specs/images.py.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from vertexkit.specs import SpecError, images

if TYPE_CHECKING:
    from vertexkit.context import CloudContext

CACHE_ENV = "VERTEXKIT_SDIST_CACHE"
_IGNORED_DIRS = {"__pycache__", ".git", "build", "dist", ".venv", ".pytest_cache", ".ruff_cache"}
_IGNORED_SUFFIXES = (".pyc", ".pyo", ".egg-info")
_BUILD_FILES = ("pyproject.toml", "setup.py", "setup.cfg")


class PackagingError(RuntimeError):
    """A trainer folder that cannot become a source distribution; the message says why."""


# -- prebuilt images (the tables and the rule live in vertexkit/specs/data/images.json) ------
def prebuilt_training_image(
    framework: str, version: str | None = None, accelerator_type: str = "", machine_type: str = ""
) -> str:
    """Vertex's prebuilt training image for `framework` at `version` (default: the latest with an
    image for the accelerator) on this machine: a GPU image for an NVIDIA accelerator."""
    return images.training_image(framework, version or "", accelerator_type, machine_type)


def prebuilt_serving_image(
    framework: str, version: str | None = None, accelerator_type: str = ""
) -> str:
    """Vertex's prebuilt prediction image for `framework` at `version` (default: the latest),
    for serving on `accelerator_type` (none: CPU)."""
    return images.prediction_image(framework, version or "", accelerator_type)


# -- source distributions --------------------------------------------------------------------
def _source_files(trainer_dir: Path) -> list[Path]:
    files = []
    for root, dirs, names in os.walk(trainer_dir):
        dirs[:] = sorted(
            d for d in dirs if d not in _IGNORED_DIRS and not d.endswith(_IGNORED_SUFFIXES)
        )
        files.extend(Path(root, n) for n in sorted(names) if not n.endswith(_IGNORED_SUFFIXES))
    return files


def content_hash(trainer_dir: Path) -> str:
    """SHA-256 over relative paths and bytes: the same code gives the same staged package."""
    digest = hashlib.sha256()
    for path in _source_files(trainer_dir):
        digest.update(str(path.relative_to(trainer_dir)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _default_cache() -> Path:
    base = os.environ.get(CACHE_ENV) or os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser() / "vertexkit" / "sdists"


def _check_trainer_dir(trainer_dir: Path) -> None:
    if not trainer_dir.is_dir():
        raise PackagingError(f"trainer_dir: {trainer_dir} is not a directory")
    if not any((trainer_dir / name).is_file() for name in _BUILD_FILES):
        raise PackagingError(
            f"trainer_dir: {trainer_dir} has none of {list(_BUILD_FILES)}; a Python package "
            "spec needs an installable package (see trainers/tabular/pyproject.toml)"
        )


def resolve_trainer_dir(trainer_dir: str | Path) -> Path:
    """A relative `trainer_dir` is looked up in the working directory, then in the vertexkit
    project root, so `trainers/tabular` works from anywhere in a checkout and in the runtime
    image (whose working directory holds `trainers/`)."""
    path = Path(trainer_dir).expanduser()
    if path.is_absolute() or path.is_dir():
        return path.resolve()
    project_root = Path(__file__).resolve().parents[2]
    candidate = project_root / path
    return candidate.resolve() if candidate.is_dir() else path.resolve()


def build_sdist(trainer_dir: str | Path, cache_dir: str | Path | None = None) -> Path:
    """Builds (or reuses, by content hash) the sdist of `trainer_dir`; returns its path."""
    trainer_dir = resolve_trainer_dir(trainer_dir)
    _check_trainer_dir(trainer_dir)
    digest = content_hash(trainer_dir)
    cache = Path(cache_dir) if cache_dir else _default_cache()
    cached = sorted(cache.glob(f"*-{digest}.tar.gz"))
    if cached:
        return cached[0]
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vertexkit-sdist-") as scratch:
        source = Path(scratch) / "src"
        shutil.copytree(trainer_dir, source, ignore=shutil.ignore_patterns(*_IGNORED_DIRS))
        out = Path(scratch) / "out"
        out.mkdir()
        built = _run_build_backend(source, out)
        stem = built.name.removesuffix(".tar.gz")
        target = cache / f"{stem}-{digest}.tar.gz"
        partial = target.with_name(target.name + ".partial")
        shutil.copyfile(built, partial)
        partial.replace(target)  # atomic: a concurrent build never sees half a file
    return target


def _run_build_backend(source: Path, out: Path) -> Path:
    # setuptools' PEP 517 backend directly: no network, no isolated build environment.
    script = (
        "import sys\nfrom setuptools import build_meta\nprint(build_meta.build_sdist(sys.argv[1]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(out)],
        cwd=source,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise PackagingError(f"building the source distribution failed:\n{tail}")
    return out / done.stdout.strip().splitlines()[-1]


def stage_trainer(
    ctx: CloudContext,
    trainer_dir: str | Path,
    staging_uri: str,
    cache_dir: str | Path | None = None,
) -> str:
    """Builds `trainer_dir` and uploads it to `<staging_uri>/trainers/`; returns its gs:// URI.

    The object name holds the content hash, so an unchanged trainer is uploaded once.
    """
    if not staging_uri.startswith("gs://") or len(staging_uri.rstrip("/")) <= len("gs://"):
        raise SpecError("staging_uri", f"must be gs://BUCKET[/PREFIX], got {staging_uri!r}")
    sdist = build_sdist(trainer_dir, cache_dir)
    bucket_name, _, prefix = staging_uri.removeprefix("gs://").rstrip("/").partition("/")
    name = "/".join(p for p in (prefix, "trainers", sdist.name) if p)
    blob = ctx.storage_client().bucket(bucket_name).blob(name)
    if not blob.exists():
        blob.upload_from_filename(str(sdist), content_type="application/gzip")
    return f"gs://{bucket_name}/{name}"
