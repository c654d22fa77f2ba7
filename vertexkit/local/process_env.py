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
machine. And it is sealed (`sealed`): what a Vertex VM offers beyond the Python clients finds the
local cloud too, and nothing of the user's own Google set-up is passed on:
- the metadata server (`GCE_METADATA_HOST`/`_IP` for google-auth, `GCE_METADATA_ROOT` for
  google-cloud-cpp and the Cloud SDK) is the local cloud's (`metadata_server.py`);
- pyarrow's own GCS filesystem (what `pd.read_parquet("gs://...")` uses) finds the local Cloud
  Storage through google-cloud-cpp's `CLOUD_STORAGE_EMULATOR_ENDPOINT`, and its credentials
  through that metadata server (`GOOGLE_GCLOUD_ADC_PATH_OVERRIDE` names a file that does not
  exist, so the user's application-default credentials are never read);
- `gcloud`, `gsutil` and `bq` read the local cloud's own configuration (`cloud_sdk.py`);
- `GOOGLE_APPLICATION_CREDENTIALS` and every `CLOUDSDK_*`/`BOTO_*` variable of the caller are
  left out, also under `vertexkit local exec`, which otherwise keeps the user's environment.
`vertexkit local exec` gives a user's command the same hook and seal.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from vertexkit.local.cloud_sdk import config_dir
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
        "VERTEXKIT_OFF_MACHINE_LOG",  # the seal's audit (hooks/vertexkit_off_machine_audit.py)
    }
)
PASSED_PREFIXES = ("LC_", "PIP_")
# The caller's own Google set-up, never passed on to a sealed process.
USER_GOOGLE_NAMES = frozenset({"GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_QUOTA_PROJECT"})
USER_GOOGLE_PREFIXES = ("CLOUDSDK_", "BOTO_")
NO_ADC_FILE = "no-application-default-credentials.json"  # never written: see the docstring
UNCONFIGURED_SDK = "vertexkit-cloudsdk-unconfigured"


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
    """`env`, sealed, with the hooks folder first on PYTHONPATH (once; what was there stays
    after it)."""
    hooked = sealed(env)
    entries = [entry for entry in hooked.get("PYTHONPATH", "").split(os.pathsep) if entry]
    entries = [str(HOOKS_DIR), *(entry for entry in entries if entry != str(HOOKS_DIR))]
    hooked["PYTHONPATH"] = os.pathsep.join(entries)
    return hooked


def sealed(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with the seal of the local cloud it names (its STORAGE_EMULATOR_HOST and
    VERTEXKIT_HOME); `env` as it is when it names none."""
    storage = env.get("STORAGE_EMULATOR_HOST")
    if not storage:
        return dict(env)
    kept = {
        name: value
        for name, value in env.items()
        if name not in USER_GOOGLE_NAMES and not name.startswith(USER_GOOGLE_PREFIXES)
    }
    metadata_host = urlsplit(env.get("VERTEX_AI_EMULATOR_HOST") or storage).netloc
    kept.update(
        GCE_METADATA_HOST=metadata_host,
        GCE_METADATA_IP=metadata_host,
        GCE_METADATA_ROOT=metadata_host,
        CLOUD_STORAGE_EMULATOR_ENDPOINT=storage,
        GOOGLE_GCLOUD_ADC_PATH_OVERRIDE=str(HOOKS_DIR / NO_ADC_FILE),
    )
    home = env.get("VERTEXKIT_HOME")
    # With no home named (endpoints exported by hand), an empty configuration: no account, so
    # a credentialed command fails at once rather than use the user's.
    sdk = config_dir(Path(home)) if home else Path(tempfile.gettempdir()) / UNCONFIGURED_SDK
    kept.update(
        CLOUDSDK_CONFIG=str(sdk), BOTO_CONFIG=str(sdk / "boto"), BIGQUERYRC=str(sdk / "bigqueryrc")
    )
    return kept
