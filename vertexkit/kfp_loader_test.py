"""kfp imported without its API client (`vertexkit.kfp_loader`): everything else as kfp's own
init leaves it, in a fresh interpreter (this one has imported kfp already)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, os, sys
os.environ.pop("_KFP_RUNTIME", None)
from vertexkit.kfp_loader import import_kfp
import_kfp()
import kfp
seen = {
    "client_loaded": "kfp.client" in sys.modules,
    "runtime_env": os.environ.get("_KFP_RUNTIME"),
    "dsl": hasattr(kfp, "dsl") and hasattr(kfp.dsl, "pipeline"),
    "components": hasattr(kfp, "components")
    and hasattr(kfp.components, "load_component_from_text"),
}
from kfp.client import Client
seen["client_when_asked"] = kfp.Client is Client
from kfp import Client as imported
seen["from_import"] = imported is Client
print(json.dumps(seen))
"""


def test_kfp_loads_without_its_client_and_gives_it_when_asked() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {
        "client_loaded": False,
        "runtime_env": None,  # restored: a task's own setting is not changed either
        "dsl": True,
        "components": True,
        "client_when_asked": True,
        "from_import": True,
    }
