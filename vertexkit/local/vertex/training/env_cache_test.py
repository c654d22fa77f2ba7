"""The trainer-environment cache is bounded: least recently used pruned past the limit, never one
a running process uses; `vertexkit local cache` shows it and `--clear` empties it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vertexkit.cli import app
from vertexkit.local.vertex.training import env_cache

HOUR = 3600.0


def fake_env(root: Path, key: str, last_used: float) -> Path:
    """An environment as packages.py leaves one: complete, its interpreter, its last use."""
    env = root / key
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(sys.executable)
    (env / "lib" / "payload").mkdir(parents=True)
    (env / "lib" / "payload" / "data.bin").write_bytes(b"x" * 1000)
    (env / env_cache.PACKAGES).write_text(f"{key}-0.1.tar.gz\n")
    (env / env_cache.COMPLETE).touch()
    (env / env_cache.LAST_USED).touch()
    os.utime(env / env_cache.LAST_USED, (last_used, last_used))
    return env


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(env_cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(env_cache.LIMIT_ENV, raising=False)
    return env_cache.default_root()


def test_the_least_recently_used_beyond_the_limit_are_pruned(root: Path) -> None:
    now = time.time()
    envs = [fake_env(root, f"env{n}", now - (10 - n) * HOUR) for n in range(5)]  # env0 oldest
    removed = env_cache.prune(root, keep=2, now=now)
    assert removed == envs[:3]
    assert sorted(p.name for p in root.iterdir()) == ["env3", "env4"]


def test_an_environment_in_use_is_never_pruned(root: Path) -> None:
    now = time.time()
    envs = [fake_env(root, f"env{n}", now - (10 - n) * HOUR) for n in range(4)]
    # a replica runs from the oldest environment's interpreter, as package_argv starts it
    sleeper = [str(envs[0] / "bin" / "python"), "-c", "import time; time.sleep(60)"]
    replica = subprocess.Popen(sleeper)
    recent = fake_env(root, "just-chosen", now - 5)  # chosen by a job, replicas not started yet
    newest = fake_env(root, "newest", now - 1)
    try:
        deadline = time.monotonic() + 10
        while envs[0] not in env_cache.in_use(env_cache.environments(root), now):
            assert time.monotonic() < deadline, "the replica never showed in /proc"
            time.sleep(0.05)
        removed = env_cache.prune(root, keep=1, now=now)
    finally:
        replica.kill()
        replica.wait()
    assert envs[0].is_dir() and recent.is_dir()  # in use: kept, though past the limit
    assert newest.is_dir()
    assert set(removed) == set(envs[1:])


def test_the_limit_comes_from_the_environment(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert env_cache.limit() == env_cache.DEFAULT_LIMIT == 20
    monkeypatch.setenv(env_cache.LIMIT_ENV, "3")
    now = time.time()
    for n in range(5):
        fake_env(root, f"env{n}", now - (10 - n) * HOUR)
    assert len(env_cache.prune(root, now=now)) == 2
    monkeypatch.setenv(env_cache.LIMIT_ENV, "0")  # no limit
    fake_env(root, "env9", now - HOUR)
    assert env_cache.prune(root, now=now) == []
    monkeypatch.setenv(env_cache.LIMIT_ENV, "many")
    with pytest.raises(ValueError, match="'many' is not a whole number"):
        env_cache.limit()


def test_local_cache_shows_count_size_and_last_use_and_clears(root: Path) -> None:
    now = time.time()
    fake_env(root, "olderenv", now - 2 * HOUR)
    fake_env(root, "newerenv", now - HOUR)
    shown = CliRunner().invoke(app, ["local", "cache"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert f"{root}: 2 trainer environment(s)" in shown.output and "limit 20" in shown.output
    rows = [line for line in shown.output.splitlines() if "olderenv" in line or "newerenv" in line]
    assert [("newerenv" in row) for row in rows[:2]] == [True, False]  # most recent first
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(now - HOUR))
    assert stamp in rows[0] and "newerenv-0.1.tar.gz" in rows[0]
    cleared = CliRunner().invoke(app, ["local", "cache", "--clear"])
    assert cleared.exit_code == 0, cleared.output
    assert "removed 2 trainer environment(s)" in cleared.output
    assert env_cache.environments(root) == []
    empty = CliRunner().invoke(app, ["local", "cache"])
    assert f"{root}: 0 trainer environment(s)" in " ".join(empty.output.split())


def test_a_bad_limit_is_one_error_line(root: Path) -> None:
    result = CliRunner().invoke(app, ["local", "cache"], env={env_cache.LIMIT_ENV: "-1"})
    assert result.exit_code == 2
    assert "error: VERTEXKIT_TRAINER_ENV_LIMIT: must be 0 (no limit) or more" in result.output
