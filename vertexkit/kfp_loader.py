"""Importing kfp without its API client.

kfp's package init imports `kfp.client` (the Kubeflow Pipelines API server's client, with the
Kubernetes client and its auth: 0.15 s of CPU, half of kfp's import) unless `_KFP_RUNTIME` is
`true`, which is what kfp's own task command sets. Nothing here talks to a KFP server, and a
`vertexkit run` imports kfp in three processes on its critical path (the CLI, the pipeline
driver, the light task worker), so they call `import_kfp()` first: the package init runs as in
a task (no client), then `kfp.components` and `kfp.dsl` are imported as the init would have,
with the environment as it was. `kfp.Client` still works, imported when first asked for.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

RUNTIME_ENV = "_KFP_RUNTIME"


def import_kfp() -> None:
    """Imports kfp as its package init would, except `kfp.client` (a no-op once kfp is in)."""
    if "kfp" in sys.modules:
        return
    before = os.environ.get(RUNTIME_ENV)
    os.environ[RUNTIME_ENV] = "true"
    try:
        kfp = importlib.import_module("kfp")
    finally:
        if before is None:
            del os.environ[RUNTIME_ENV]
        else:
            os.environ[RUNTIME_ENV] = before
    importlib.import_module("kfp.components")
    importlib.import_module("kfp.dsl")
    kfp.__getattr__ = _client_when_asked  # PEP 562: consulted for what the module lacks


def _client_when_asked(name: str) -> Any:
    if name == "Client":
        from kfp.client import Client

        return Client
    raise AttributeError(f"module 'kfp' has no attribute {name!r}")
