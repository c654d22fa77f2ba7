"""`vertexkit run`'s local cloud, spawned before the CLI imports its verbs.

The cloud's process spends about half a second importing its services, and the run waits for it
before it can create the job; the CLI spends about 0.2 s importing its verbs (typer, the specs)
before `run` even starts. So the console script (`vertexkit.cli.main`) reads just enough of its
argv to tell a local `vertexkit run` and spawns the cloud's process first (`spawn_for`); the
`run` verb then takes it (`take`), once Typer has parsed the same argv properly.

The guess is only ever an early start: `take` hands the process over only for the home and
caching that Typer parsed, and closes it otherwise (a spawned process that has not been asked
to serve has touched no file, see `vertexkit.cloud_process`). Where the argv could mean
anything else (`--vertex`, `--kfp-host`, `--help`), nothing is spawned and `run` spawns as it
always has.
"""

from __future__ import annotations

from pathlib import Path

from vertexkit.cloud_process import CloudProcess
from vertexkit.local_up import home_or_default, running_local_up

_NOT_LOCAL = {"--vertex", "--help", "--kfp-host"}
_spawned: tuple[Path, bool, CloudProcess] | None = None


def spawn_for(argv: list[str]) -> None:
    """Spawns the local cloud's process of the `vertexkit run` that `argv` (without the
    program) reads as, if any."""
    global _spawned
    if not argv or argv[0] != "run" or _NOT_LOCAL & {word.split("=")[0] for word in argv}:
        return
    home = _home(argv)
    if running_local_up(home) is not None:
        return  # `run` submits to it
    caching = "--no-cache" not in argv
    _spawned = (home_or_default(home), caching, CloudProcess.spawn(home, caching))


def take(home: Path | None, caching: bool) -> CloudProcess | None:
    """The process spawned for this home and caching, if any; one spawned on a wrong guess is
    closed."""
    global _spawned
    spawned, _spawned = _spawned, None
    if spawned is None:
        return None
    spawned_home, spawned_caching, process = spawned
    if (spawned_home, spawned_caching) == (home_or_default(home), caching):
        return process
    process.close()
    return None


def _home(argv: list[str]) -> Path | None:
    """`--home PATH` or `--home=PATH`, as Typer reads it; None: the default home."""
    for at, word in enumerate(argv):
        if word == "--home" and at + 1 < len(argv):
            return Path(argv[at + 1])
        if word.startswith("--home="):
            return Path(word.removeprefix("--home="))
    return None
