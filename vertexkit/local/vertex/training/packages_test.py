"""Trainer environments: one per package content and interpreter, shared by every home, and
built once when two builders race for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vertexkit.local import LocalCloud
from vertexkit.local.vertex.training.packages import PackageCache, environment_key

BUCKET = "vertexkit-staging"


def staged_sdist(cloud: LocalCloud, tmp_path: Path, version: str = "0.1") -> str:
    """A real setuptools sdist of a one-module package, uploaded to the local Cloud Storage."""
    root = tmp_path / f"pkg-{version}"
    (root / "envprobe").mkdir(parents=True)
    (root / "envprobe" / "__init__.py").write_text(f"VERSION = {version!r}\n")
    (root / "setup.py").write_text(
        f"from setuptools import setup\nsetup(name='envprobe', version={version!r}, "
        "packages=['envprobe'])\n"
    )
    subprocess.run(
        [sys.executable, "setup.py", "-q", "sdist", "--formats=gztar"],
        cwd=root, check=True, capture_output=True,
    )  # fmt: skip
    sdist = next((root / "dist").glob("*.tar.gz"))
    cloud.storage.ensure_bucket(BUCKET)
    cloud.storage.write_object(BUCKET, f"envs/{sdist.name}", sdist.read_bytes())
    return f"gs://{BUCKET}/envs/{sdist.name}"


def imported_version(python: Path) -> str:
    probe = [str(python), "-c", "import envprobe; print(envprobe.VERSION)"]
    return subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()


def test_a_second_home_reuses_the_environment(local_cloud: LocalCloud, tmp_path: Path) -> None:
    uri = staged_sdist(local_cloud, tmp_path)
    shared = tmp_path / "envs"
    first = PackageCache(local_cloud.vertex.backend, root=shared).python_for([uri])
    built_at = (first.parents[1] / ".complete").stat().st_mtime_ns
    # Another cache object stands for another home's (or another process's) executor.
    again = PackageCache(local_cloud.vertex.backend, root=shared).python_for([uri])
    assert again == first
    assert (again.parents[1] / ".complete").stat().st_mtime_ns == built_at, "built twice"
    assert imported_version(again) == "0.1"
    assert [p.name for p in shared.iterdir()] == [first.parents[1].name]  # no scratch left


def test_other_content_gets_its_own_environment(local_cloud: LocalCloud, tmp_path: Path) -> None:
    shared = tmp_path / "envs"
    cache = PackageCache(local_cloud.vertex.backend, root=shared)
    old = cache.python_for([staged_sdist(local_cloud, tmp_path, "0.1")])
    new = cache.python_for([staged_sdist(local_cloud, tmp_path, "0.2")])
    assert old != new
    assert (imported_version(old), imported_version(new)) == ("0.1", "0.2")


class RacedCache(PackageCache):
    """A cache whose build is overtaken: just before it renames its finished environment into
    place, a second cache (as another process would) builds and renames the same one."""

    def __init__(self, rival: PackageCache, uris: list[str]) -> None:
        super().__init__(rival.backend, root=rival.root)
        self.rival, self.uris = rival, uris
        self.rival_python: Path | None = None

    def _build(self, env_dir: Path, files: list[Path]) -> None:
        super()._build(env_dir, files)
        self.rival_python = self.rival.python_for(self.uris)


def test_the_loser_of_a_build_race_uses_the_winners_environment(
    local_cloud: LocalCloud, tmp_path: Path
) -> None:
    uri = staged_sdist(local_cloud, tmp_path)
    shared = tmp_path / "envs"
    raced = RacedCache(PackageCache(local_cloud.vertex.backend, root=shared), [uri])
    python = raced.python_for([uri])
    assert python == raced.rival_python
    env_dir = python.parents[1]
    assert env_dir.name == environment_key([local_cloud.vertex.backend.storage.gs_uri_to_path(uri)])
    assert imported_version(python) == "0.1"
    assert [p.name for p in shared.iterdir()] == [env_dir.name]  # the loser's scratch is gone


@pytest.fixture(scope="module")
def env_python(local_cloud: LocalCloud, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("short-exit")
    uri = staged_sdist(local_cloud, tmp_path)
    return PackageCache(local_cloud.vertex.backend, root=tmp_path / "envs").python_for([uri])


# How a program ends: what Python promises at exit holds in a trainer's environment as in plain
# Python; only a finalizer of garbage in a reference cycle is left to the process's end.
EXIT_CASES = [
    pytest.param(
        "import sys\nf = open(sys.argv[1], 'w')\nf.write('unclosed')\n",
        "",
        0,
        "unclosed",
        id="an-unclosed-file-is-flushed",
    ),
    pytest.param(
        "import atexit\natexit.register(print, 'exit handler ran')\n",
        "exit handler ran\n",
        0,
        "",
        id="exit-handlers-run",
    ),
    pytest.param(
        "import threading, time\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), print('joined'))).start()\n",
        "joined\n",
        0,
        "",
        id="threads-are-joined",
    ),
    pytest.param("import sys\nsys.exit(3)\n", "", 3, "", id="the-exit-status-stays"),
    pytest.param(
        "import logging, sys\nlogging.basicConfig(stream=sys.stdout)\nlogging.warning('last')\n",
        "WARNING:root:last\n",
        0,
        "",
        id="logging-is-flushed",
    ),
]


@pytest.mark.parametrize(("program", "stdout", "status", "written"), EXIT_CASES)
def test_a_trainer_environment_ends_as_python_does(
    env_python: Path, tmp_path: Path, program: str, stdout: str, status: int, written: str
) -> None:
    for python in (Path(sys.executable), env_python):
        target = tmp_path / f"{python.parents[1].name}.txt"
        target.touch()
        done = subprocess.run(
            [str(python), "-c", program, str(target)], capture_output=True, text=True
        )
        assert (done.stdout, done.returncode) == (stdout, status), (python, done.stderr)
        assert target.read_text() == written, python


CYCLE_WITH_FINALIZER = """
class Node:
    def __del__(self):
        print("finalized")
node = Node()
node.me = node
"""


def test_garbage_in_a_cycle_is_left_to_the_process_end(env_python: Path) -> None:
    """The environment's exit hook is in place: Python collects the cycle at exit, the
    trainer's environment skips that collection (the time it saves)."""
    plain, env = (
        subprocess.run([str(p), "-c", CYCLE_WITH_FINALIZER], capture_output=True, text=True)
        for p in (Path(sys.executable), env_python)
    )
    assert (plain.stdout, plain.returncode) == ("finalized\n", 0)
    assert (env.stdout, env.returncode) == ("", 0)
