"""Runs one lightweight component in a task process the way Vertex's launcher runs it.

    python -m vertexkit.local.vertex.pipelines.task_main --executor_input ... (kfp's arguments)

Vertex mounts Cloud Storage under `/gcs/`, so kfp's executor turns an artifact's `gs://BUCKET/X`
URI into the path `/gcs/BUCKET/X` (and a path set there back into the URI). Here the buckets are
folders of the local Cloud Storage, named by `VERTEXKIT_GCS_MOUNT`: the same `.path` lands on the
object's file, while every `uri` stays `gs://` as on Vertex.

A component that raises also leaves GCPC's `executor_error.json` (`{"errorMessage": ...}`) beside
its executor output, which is where Vertex's UI takes a task's error from; the pipeline driver
reports that message as the task's error.
"""

from __future__ import annotations

import json
import os
import runpy
import sys

GCS_MOUNT_ENV = "VERTEXKIT_GCS_MOUNT"
EXECUTOR_ERROR_FILE = "executor_error.json"


def mount_cloud_storage(mount: str) -> None:
    from kfp.dsl.types import artifact_types

    artifact_types._GCS_LOCAL_MOUNT_PREFIX = mount.rstrip("/") + "/"


def executor_output_dir(argv: list[str]) -> str | None:
    """The folder of the executor output file named in `--executor_input`."""
    try:
        executor_input = json.loads(argv[argv.index("--executor_input") + 1])
        return os.path.dirname(executor_input["outputs"]["outputFile"])
    except (ValueError, IndexError, KeyError, TypeError):
        return None


def write_executor_error(argv: list[str], message: str) -> None:
    directory = executor_output_dir(argv)
    if not directory:
        return
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, EXECUTOR_ERROR_FILE), "w", encoding="utf-8") as handle:
        json.dump({"errorMessage": message}, handle)


def main() -> None:
    mount = os.environ.get(GCS_MOUNT_ENV)
    if mount:
        mount_cloud_storage(mount)
    try:
        runpy.run_module("kfp.dsl.executor_main", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        if exc.code not in (0, None):
            write_executor_error(sys.argv, f"the component exited with {exc.code}")
        raise
    except BaseException as exc:
        write_executor_error(sys.argv, f"{type(exc).__name__}: {exc}")
        raise


if __name__ == "__main__":
    main()
