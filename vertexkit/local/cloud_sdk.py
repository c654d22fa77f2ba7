"""The Cloud SDK (`gcloud`, `gsutil`, `bq`) of every process the local cloud starts, sealed to it.

A Vertex VM's Cloud SDK finds Google and the VM's service account. Locally the same commands must
find the local cloud and nothing else, never the user's own account or configuration. So the
local cloud keeps a configuration directory of its own, `<home>/cloudsdk` (written at every
start: its URL changes), and its processes get `CLOUDSDK_CONFIG`, `BOTO_CONFIG` and `BIGQUERYRC`
pointing into it (`process_env.sealed`), with every variable of the user's own SDK set-up left
out:
- credentials come only from the metadata server the local cloud serves (`metadata_server`):
  the directory holds no account, so the SDK takes the "VM's" service account, as on Vertex;
- `api_endpoint_overrides` send Cloud Storage, BigQuery (the `bq` CLI too) and Vertex AI to the
  local cloud, and every other API the installed SDK knows to a path the local cloud refuses with
  a 501 naming the API, so `gcloud compute ...` fails at once instead of reaching Google;
- `gsutil` runs as its `gcloud storage` shim (boto's `use_gcloud_storage`), so it takes the same
  endpoints and credentials;
- usage reporting, update checks and surveys are off (they would call Google).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from vertexkit.local.errors import ApiError

CONFIG_DIR = "cloudsdk"
CONFIGURATION = "vertexkit-local"
NOT_REDIRECTED = "/cloudsdk-not-redirected"  # + /<api>/...: answered 501 (routes in server.py)
# The APIs that reach the local cloud, and the root each is served under (gcloud appends the
# API's own path: `storage/v1/...`, `bigquery/v2/...` through the `bq` CLI's discovery document).
SERVED = {"storage": "/storage/v1/", "bigquery": "/", "ai": "/", "aiplatform": "/"}
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
_OVERRIDE = re.compile(r"self\._Add\(\s*'([\w-]+)'")


def config_dir(home: Path) -> Path:
    return home / CONFIG_DIR


def write_config(home: Path, url: str, project: str) -> Path:
    """Writes `<home>/cloudsdk` for the local cloud at `url`; returns the directory."""
    folder = config_dir(home)
    (folder / "configurations").mkdir(parents=True, exist_ok=True)
    (folder / "active_config").write_text(CONFIGURATION)
    (folder / "configurations" / f"config_{CONFIGURATION}").write_text(
        _properties(url, project)
    )
    (folder / "boto").write_text("[GSUtil]\nuse_gcloud_storage = True\n")
    (folder / "bigqueryrc").write_text("")  # the user's ~/.bigqueryrc is never read
    return folder


def _properties(url: str, project: str) -> str:
    overrides = {api: f"{url}{NOT_REDIRECTED}/{api}/" for api in sdk_apis()}
    overrides.update({api: url + root for api, root in SERVED.items()})
    lines = [
        "[core]",
        f"project = {project}",
        "disable_usage_reporting = true",
        "[component_manager]",
        "disable_update_check = true",
        "[survey]",
        "disable_prompts = true",
        "[api_endpoint_overrides]",
        *(f"{api} = {endpoint}" for api, endpoint in sorted(overrides.items())),
    ]
    return "\n".join(lines) + "\n"


def sdk_apis() -> list[str]:
    """The APIs whose endpoint the installed Cloud SDK lets a configuration override (read from
    its `core/properties.py`); none when no SDK is on PATH."""
    gcloud = shutil.which("gcloud")
    if not gcloud:
        return []
    source = Path(gcloud).resolve().parent.parent / "lib/googlecloudsdk/core/properties.py"
    try:
        text = source.read_text()
    except OSError:
        return []
    start = text.find("class _SectionApiEndpointOverrides")
    end = text.find("\nclass ", start + 1)
    return _OVERRIDE.findall(text[start:end]) if start >= 0 else []


def not_redirected_routes() -> list[BaseRoute]:
    """The 501 of an API the Cloud SDK was sent here for but the local cloud does not serve."""
    return [Route(f"{NOT_REDIRECTED}/{{api}}/{{path:path}}", _not_redirected, methods=METHODS)]


async def _not_redirected(request: Request) -> JSONResponse:
    api = request.path_params["api"]
    raise ApiError(
        501,
        f"The Cloud SDK asked the {api!r} API, which the local cloud does not serve: a local run's "
        "gcloud, gsutil and bq reach only the local Cloud Storage, BigQuery and Vertex AI, never "
        "Google.",
    )
