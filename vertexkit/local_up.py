"""The one local cloud serving a home, as every later command on that home finds it.

A home is served by one local cloud at a time: two would each run the other's queued jobs and
schedules, and DuckDB locks its file against the second. So a local cloud claims its home before
it opens any state file (`HomeClaim`: an exclusive `flock` on `<home>/.serving`, released by the
kernel however the process ends, so a killed cloud leaves no stale claim) and writes its record
there once it answers: URL, pid, exports, and what started it.

Later commands read that record (`serving_record`):
- a `vertexkit local up` (it serves until stopped) is used by everything: `vertexkit run`
  submits its job there (`ServedLocalCloud`), `local exec` runs its command against it, and the
  read verbs (`vertexkit/cli/cloud.py`) read from it; a second `local up` is refused (`HomeServed`)
  before it prints anything;
- a command's own cloud (a `vertexkit run`, a `local exec`, a read verb's) ends with its command,
  so only a read verb uses it; a `vertexkit run` or `local exec` on that home waits for it to end
  (saying so once), since its job would otherwise end with the other command.
`local up` also writes `local-up.json` (its URL, pid and exports) for people and scripts.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vertexkit.context import CloudContext, environ_set

LOCAL_UP_FILE = "local-up.json"  # {"url", "pid", "env"}: written by `local up`, removed at exit
SERVING_FILE = ".serving"  # flock'd by the cloud serving the home; holds its record (JSON)
HOME_ENV = "VERTEXKIT_HOME"  # where the local cloud keeps its state, unless --home says
ANSWER_WAIT_S = 30.0  # a claimed home whose cloud does not answer yet: starting, or stopping
POLL_S = 0.1


@dataclass(frozen=True)
class HomeUse:
    """Who serves a home, as its record names it: `lasting` serves until stopped (`local up`);
    `waits`: finding the home served by a command's own cloud, wait for it rather than refuse."""

    by: str
    lasting: bool = False
    waits: bool = False


LOCAL_UP = HomeUse("`vertexkit local up`", lasting=True)
RUN = HomeUse("`vertexkit run`", waits=True)
EXEC = HomeUse("`vertexkit local exec`", waits=True)
COMMAND = HomeUse("a vertexkit command", waits=True)
IN_PROCESS = HomeUse("a local cloud in a Python process")  # LocalCloud's default: tests, notebooks


class HomeServed(ValueError):
    """The home is served by another local cloud; the message names it and how to reach it.
    A ValueError: the CLI prints it as one `error:` line (exit 2), never as damage."""

    def __init__(self, home: Path, record: dict[str, Any]) -> None:
        self.home, self.record = home, record
        who = f"{record.get('by', 'another local cloud')} (pid {record.get('pid', '?')})"
        if not record.get("url"):
            super().__init__(
                f"the local cloud's home {home} is claimed by {who}, which has not answered for "
                f"{ANSWER_WAIT_S:.0f} s; stop that process, or pass another --home"
            )
            return
        how = (
            "reach it with `vertexkit local exec -- CMD`, or eval its exports in this shell "
            f"({' '.join(f'{k}={v}' for k, v in record.get('env', {}).items())})"
            if record.get("lasting")
            else "it stops when that command ends; `vertexkit local up` serves a home to several "
            "commands at once"
        )
        super().__init__(
            f"the local cloud's home {home} is already served by {who} at {record['url']}: one "
            f"local cloud serves a home at a time; {how}; or pass another --home"
        )


class HomeClaim:
    """This process's claim on a home: taken before any state file opens, held while serving."""

    def __init__(self, home: Path, fd: int, use: HomeUse) -> None:
        self.home, self._fd, self.use = home, fd, use

    @classmethod
    def take(cls, home: Path, use: HomeUse = IN_PROCESS) -> HomeClaim:
        """Claims `home`, or raises HomeServed naming the cloud that serves it. A claim whose
        cloud does not answer yet (starting or stopping) is waited for up to ANSWER_WAIT_S; with
        `use.waits`, so is one held by a command's own cloud, until that command ends."""
        home.mkdir(parents=True, exist_ok=True)
        fd = os.open(home / SERVING_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _wait_for_claim(fd, home, use)
        except BaseException:
            os.close(fd)
            raise
        return cls(home, fd, use)

    def announce(self, url: str, env: dict[str, str]) -> None:
        """Writes the record later commands read, once the cloud answers at `url`."""
        record = {"url": url, "pid": os.getpid(), "by": self.use.by,
                  "lasting": self.use.lasting, "env": env}  # fmt: skip
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, json.dumps(record).encode(), 0)

    def release(self) -> None:
        if self._fd < 0:
            return
        os.ftruncate(self._fd, 0)  # the file stays: removing it would race the next claimant
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = -1


def _wait_for_claim(fd: int, home: Path, use: HomeUse) -> None:
    deadline = time.monotonic() + ANSWER_WAIT_S
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        record = _read_record(home)
        if record and _answers(record["url"]):
            if record.get("lasting") or not use.waits:
                raise HomeServed(home, record)
            deadline = time.monotonic() + ANSWER_WAIT_S  # it serves: wait while it does
            if not told:
                told = True
                print(f"vertexkit: waiting for the local cloud of {record.get('by')} (pid "
                      f"{record.get('pid')}) to end: it serves {home}, and one local cloud serves "
                      "a home at a time (`vertexkit local up` serves several commands at once)",
                      file=sys.stderr, flush=True)  # fmt: skip
        elif time.monotonic() > deadline:
            raise HomeServed(home, record or {})
        time.sleep(POLL_S)


def serving_record(home: Path | None) -> dict[str, Any] | None:
    """The record of the local cloud serving this home, once it answers; None when no process
    claims the home (or its claimant is still starting after ANSWER_WAIT_S)."""
    home = home_or_default(home)
    path = home / SERVING_FILE
    deadline = time.monotonic() + ANSWER_WAIT_S
    while path.exists() and _claimed(path):
        record = _read_record(home)
        if record and _answers(record["url"]):
            return record
        if time.monotonic() > deadline:
            return None
        time.sleep(POLL_S)
    return None


def _claimed(path: Path) -> bool:
    """Whether a process holds the claim: a lock we could take at once is nobody's."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops our shared lock, if we took it


def _read_record(home: Path) -> dict[str, Any] | None:
    with suppress(OSError, ValueError):
        record = json.loads((home / SERVING_FILE).read_text() or "null")
        if isinstance(record, dict) and record.get("url"):
            return record
    return None


def _answers(url: str) -> bool:
    import urllib.request  # here: `vertexkit run` asks before its CLI loads (early_cloud)

    health = url + "/healthz"
    with suppress(OSError, ValueError), urllib.request.urlopen(health, timeout=2) as answer:
        return answer.status == 200
    return False


def home_or_default(home: Path | None) -> Path:
    return (home or Path(os.environ.get(HOME_ENV) or ".vertexkit")).resolve()


def write_local_up(home: Path, url: str, env: dict[str, str]) -> Path:
    """Tells later commands on this home where the running local cloud answers."""
    path = home / LOCAL_UP_FILE
    partial = path.with_name(f".{LOCAL_UP_FILE}.{os.getpid()}")
    partial.write_text(json.dumps({"url": url, "pid": os.getpid(), "env": env}))
    partial.replace(path)  # whole or absent: a reader never sees half a file
    return path


def running_local_up(home: Path | None) -> dict[str, str] | None:
    """The env of the `local up` (a lasting local cloud) serving this home, if one does."""
    record = serving_record(home)
    return _env(record) if record and record.get("lasting") else None


def serving_env(home: Path | None) -> dict[str, str] | None:
    """The env of whichever local cloud serves this home, for a command as short as a read."""
    record = serving_record(home)
    return _env(record) if record else None


def _env(record: dict[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in record.get("env", {}).items()}


class ServedLocalCloud:
    """What `vertexkit run` uses of its local cloud, for one another process serves: `local up`,
    or the run's own cloud process (`vertexkit.cloud_process`)."""

    def __init__(self, home: Path, env: dict[str, str], lasting: bool = False) -> None:
        self.home = home
        self.lasting = lasting  # a `local up`: it serves on after the command ends
        self._env = env
        with environ_set(env):
            self._context = CloudContext.from_env()
        self.url = self._context.vertex_endpoint or ""
        self.storage = _RemoteStorage(self._context)

    def env(self) -> dict[str, str]:
        return dict(self._env)

    def context(self) -> CloudContext:
        return self._context


class _RemoteStorage:
    """The one Cloud Storage call `vertexkit run` makes of its local cloud, over its API."""

    def __init__(self, context: CloudContext) -> None:
        self.context = context

    def ensure_bucket(self, bucket: str) -> None:
        """Makes the run's bucket; one that is there already is left as it is, as
        LocalCloud's ensure_bucket leaves it."""
        from vertexkit.storage_rest import StorageRest

        StorageRest.for_context(self.context).ensure_bucket(self.context.project, bucket)
