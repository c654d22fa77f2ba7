"""A `vertexkit local up` serving a home, as later commands on that home find it.

`local up` writes `local-up.json` (its URL, pid and exports) into its home while it serves and
removes it at exit. A later command on the same home uses that local cloud rather than starting
a second one on the same state: the read verbs (`vertexkit/cli/cloud.py`) and `vertexkit run`,
which submits its job there (`ServedLocalCloud`): two local clouds on one home would each run the
other's queued jobs and schedules.
"""

from __future__ import annotations

import json
import os
from contextlib import suppress
from pathlib import Path

from vertexkit.context import CloudContext, environ_set

LOCAL_UP_FILE = "local-up.json"  # {"url", "pid", "env"}: written by `local up`, removed at exit
HOME_ENV = "VERTEXKIT_HOME"  # where the local cloud keeps its state, unless --home says


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
    """The env of the `local up` serving this home, when its process lives and answers."""
    with suppress(OSError, ValueError, KeyError, TypeError):
        found = json.loads((home_or_default(home) / LOCAL_UP_FILE).read_text())
        os.kill(int(found["pid"]), 0)  # a file left by a killed process names a dead pid
        import urllib.request  # here: `vertexkit run` asks before its CLI loads (early_cloud)

        with urllib.request.urlopen(found["url"] + "/healthz", timeout=2) as answer:
            if answer.status == 200:
                return {str(k): str(v) for k, v in found["env"].items()}
    return None


class ServedLocalCloud:
    """What `vertexkit run` uses of its local cloud, for one another process serves: `local up`,
    or the run's own cloud process (`vertexkit.cloud_process`)."""

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.home = home
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
        from google.api_core.exceptions import Conflict

        with suppress(Conflict):  # there already: as LocalCloud's ensure_bucket, nothing to do
            self.context.storage_client().create_bucket(bucket)
