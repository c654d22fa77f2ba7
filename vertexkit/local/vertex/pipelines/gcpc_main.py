"""Runs a Google Cloud Pipeline Components launcher in a task process, as GCPC's image runs it.

    python -m vertexkit.local.vertex.pipelines.gcpc_main LAUNCHER_MODULE ARGS...

The launcher is GCPC's own module from the installed package, unmodified: its requests go to
`<location>-aiplatform.googleapis.com` and BigQuery's host with default credentials, which the
local cloud's client hook (on this process's PYTHONPATH, see process_env) sends to the local
cloud. One thing differs, and only in timing: GCPC polls a job or an operation every 20 s,
sized for Vertex, where a job takes minutes to provision; a local job ends in seconds, so the
launchers poll every `LOCAL_POLL_SECONDS` here.
"""

from __future__ import annotations

import importlib
import runpy
import sys

LOCAL_POLL_SECONDS = 1
_POLLING_MODULES = (
    "google_cloud_pipeline_components.container.v1.gcp_launcher.job_remote_runner",
    "google_cloud_pipeline_components.container.v1.gcp_launcher.lro_remote_runner",
    "google_cloud_pipeline_components.container.v1.gcp_launcher.pipeline_remote_runner",
    "google_cloud_pipeline_components.container.v1.bigquery.utils.bigquery_util",
)


def poll_locally() -> None:
    for name in _POLLING_MODULES:
        module = importlib.import_module(name)
        module._POLLING_INTERVAL_IN_SECONDS = LOCAL_POLL_SECONDS


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: gcpc_main LAUNCHER_MODULE ARGS...")
    module = sys.argv.pop(1)
    poll_locally()
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
