"""The trainer-environment cache, bounded: least recently used environments are pruned.

Every distinct trainer package (its content, the interpreter it overlays) gets an environment
under `~/.cache/vertexkit/trainer-envs` (`packages.py`). Each edit of a trainer makes a new one,
so the folder only grew (352 environments after one run of the test suite). Now:

- every use of an environment stamps its `.last-used` file (its mtime is the last use);
- after an environment is built, the least recently used ones beyond the limit are removed:
  `VERTEXKIT_TRAINER_ENV_LIMIT` environments (default 20; 0 keeps every one);
- an environment in use is never removed: one whose interpreter a running process was started
  with (its path in the process's command line, read from /proc), or used in the last
  `IN_USE_GRACE_S` (a job between choosing its environment and starting its replicas; where
  /proc is missing, the only sign);
- `vertexkit local cache` shows the cache (count, size, each environment's last use) and
  `vertexkit local cache --clear` empties it (in-use environments kept, and said so).

Standard library only: the CLI imports this without the local cloud.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

CACHE_ENV = "VERTEXKIT_TRAINER_ENV_CACHE"  # the cache's parent folder (default ~/.cache)
LIMIT_ENV = "VERTEXKIT_TRAINER_ENV_LIMIT"
DEFAULT_LIMIT = 20
IN_USE_GRACE_S = 600.0
LAST_USED = ".last-used"
COMPLETE = ".complete"
PACKAGES = ".packages"  # the package files an environment was built from, one a line


def default_root() -> Path:
    """Beside the staged source distributions (vertexkit.runtime.packaging): one per machine."""
    base = os.environ.get(CACHE_ENV) or os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser() / "vertexkit" / "trainer-envs"


def limit() -> int:
    """`VERTEXKIT_TRAINER_ENV_LIMIT` (environments kept; 0: no limit), else DEFAULT_LIMIT."""
    text = os.environ.get(LIMIT_ENV, "").strip()
    if not text:
        return DEFAULT_LIMIT
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{LIMIT_ENV}: {text!r} is not a whole number of environments") from None
    if value < 0:
        raise ValueError(f"{LIMIT_ENV}: must be 0 (no limit) or more, got {value}")
    return value


@dataclass(frozen=True)
class Environment:
    path: Path
    last_used: float  # seconds since the epoch
    packages: tuple[str, ...]

    @property
    def key(self) -> str:
        return self.path.name

    def size(self) -> int:
        return folder_size(self.path)


def touch(env_dir: Path) -> None:
    """Stamps a use of the environment (its `.last-used` mtime)."""
    try:
        (env_dir / LAST_USED).touch()
    except OSError:
        pass  # a read-only cache still serves; it is only pruned less well


def environments(root: Path | None = None) -> list[Environment]:
    """The complete environments, least recently used first."""
    root = root or default_root()
    if not root.is_dir():
        return []
    found = []
    for path in root.iterdir():
        if path.name.startswith(".") or not (path / COMPLETE).exists():
            continue
        found.append(Environment(path, _last_use(path), _packages(path)))
    return sorted(found, key=lambda env: env.last_used)


def _last_use(path: Path) -> float:
    for name in (LAST_USED, COMPLETE):
        try:
            return (path / name).stat().st_mtime
        except OSError:
            continue
    return 0.0


def _packages(path: Path) -> tuple[str, ...]:
    """The package files it was built from; for an environment built before they were written
    down, the distributions installed in it."""
    try:
        return tuple(line for line in (path / PACKAGES).read_text().splitlines() if line)
    except OSError:
        installed = path.glob("lib/python*/site-packages/*.dist-info")
        return tuple(sorted(info.name.removesuffix(".dist-info") for info in installed))


def folder_size(path: Path) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue
    return total


def in_use(envs: list[Environment], now: float | None = None) -> set[Path]:
    """The environments a running process was started from, or used within the grace time."""
    now = time.time() if now is None else now
    recent = {env.path for env in envs if now - env.last_used < IN_USE_GRACE_S}
    return recent | _running(envs)


def _running(envs: list[Environment]) -> set[Path]:
    """Environments named in a live process's command line (its interpreter's path)."""
    prefixes = {str(env.path) + os.sep: env.path for env in envs}
    running: set[Path] = set()
    proc = Path("/proc")
    if not prefixes or not proc.is_dir():
        return running
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        for argument in argv[:3]:
            text = argument.decode(errors="replace")
            running.update(path for prefix, path in prefixes.items() if text.startswith(prefix))
    return running


def prune(
    root: Path | None = None, keep: int | None = None, now: float | None = None
) -> list[Path]:
    """Removes the least recently used environments beyond `keep` (default: `limit()`), never
    one in use; returns the removed ones."""
    keep = limit() if keep is None else keep
    envs = environments(root)
    if keep == 0 or len(envs) <= keep:
        return []
    busy = in_use(envs, now)
    removed = []
    for env in envs[: len(envs) - keep]:  # least recently used first
        if env.path in busy:
            continue
        _remove(env.path)
        removed.append(env.path)
    return removed


def clear(root: Path | None = None) -> tuple[list[Path], list[Path]]:
    """Removes every environment no running process uses (asked for by a user: a recent use
    is no reason to keep one); returns (removed, kept because in use)."""
    envs = environments(root)
    busy = _running(envs)
    removed, kept = [], []
    for env in envs:
        if env.path in busy:
            kept.append(env.path)
        else:
            _remove(env.path)
            removed.append(env.path)
    return removed, kept


def _remove(path: Path) -> None:
    """Renamed out of the way first (a reader never sees half an environment), then deleted."""
    doomed = path.with_name(f".removing-{path.name}-{os.getpid()}")
    try:
        path.rename(doomed)
    except OSError:
        return
    shutil.rmtree(doomed, ignore_errors=True)
