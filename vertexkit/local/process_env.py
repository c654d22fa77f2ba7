"""The environment of every process the local cloud starts: job replicas, pipeline tasks and
serving containers.

On Vertex a job's container sees only what Vertex and the job's spec give it. Locally these
processes are children of `vertexkit local up`, whose environment may hold tokens and secrets
(cloud credentials, API keys, a CI's variables): none of that may leak into a user's trainer.
So a child gets an allow-list of what any process needs to run on this machine (its search path,
home, locale, time zone, temp folder, CA bundles, the library path a system CUDA needs, pip's
settings for packages_to_install), then the local cloud's endpoints, then what the job itself
sets. Proxy variables are left out: the local cloud is on loopback, and Vertex's containers have
no proxy either.

Every such process also gets `vertexkit/local/hooks` first on its PYTHONPATH: its
`sitecustomize` makes Google's clients, created with their defaults, reach the local cloud (see
`hooks/vertexkit_redirect.py`), so a trainer's or a GCPC launcher's own clients never leave the
machine. `vertexkit local exec` gives a user's command the same.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from vertexkit.local.hooks import HOOKS_DIR

PASSED_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "LD_LIBRARY_PATH",  # a system CUDA install's libraries
        "SYSTEMROOT",  # Windows cannot start Python without it
    }
)
PASSED_PREFIXES = ("LC_", "PIP_")


def passed_through(environ: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed part of `environ`."""
    return {
        name: value
        for name, value in environ.items()
        if name in PASSED_NAMES or name.startswith(PASSED_PREFIXES)
    }


def process_env(*layers: Mapping[str, str]) -> dict[str, str]:
    """The allow-list of this process's environment, then `layers` in order (later wins).

    `python` in a shell command finds this environment's interpreter first: it stands in for the
    container's Python.
    """
    env = passed_through(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    for layer in layers:
        env.update(layer)
    return with_client_hook(env)


def with_client_hook(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with the hooks folder first on PYTHONPATH (once; what was there stays after it)."""
    hooked = dict(env)
    entries = [entry for entry in hooked.get("PYTHONPATH", "").split(os.pathsep) if entry]
    entries = [str(HOOKS_DIR), *(entry for entry in entries if entry != str(HOOKS_DIR))]
    hooked["PYTHONPATH"] = os.pathsep.join(entries)
    return hooked
