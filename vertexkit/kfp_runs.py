"""`vertexkit run NAME --kfp-host URL`: a run on Kubeflow Pipelines through `kfp.Client`, on a
real cluster or on the local cloud's KFP API alike.

The compiled pipeline is uploaded once per content: the pipeline is found by its name (or
created), and a version named `<name>-<first 12 hex of the YAML's sha256>` is reused when the
same YAML was uploaded before, else uploaded. The run is created from that version with the
parameters, in the experiment given (created when missing), and followed with the same task
lines as a local run (`vertexkit.pipeline_jobs.TaskProgress`), read from the run's
`run_details.task_details`. Credentials are kfp.Client's own: `existing_token`, and what it reads
itself (KF_PIPELINES_* variables, ~/.config/kfp/context.json, in-cluster service-account tokens).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import urllib3
import yaml

from vertexkit.pipeline_registry import short_name

# What a host that does not answer raises: urllib3's retries given up, a refused connection,
# kfp.Client's own healthz wait.
KFP_UNREACHABLE: tuple[type[BaseException], ...] = (
    urllib3.exceptions.HTTPError,
    OSError,
    TimeoutError,
)
KFP_TERMINAL = {"SUCCEEDED", "FAILED", "SKIPPED", "CANCELED"}
TO_VERTEX_STATE = {"CANCELED": "CANCELLED", "CANCELING": "CANCELLING"}


@dataclass
class KfpRun:
    """A KFP run as JSON (snake_case, as the KFP API answers) and the pipeline it ran."""

    name: str
    run: dict[str, Any]
    host: str
    pipeline_id: str
    version_id: str

    @property
    def seconds(self) -> float:
        from vertexkit.pipeline_jobs import parse_time

        start = parse_time(self.run.get("created_at"))
        end = parse_time(self.run.get("finished_at"))
        return (end - start).total_seconds() if start and end else 0.0


def kfp_api_error() -> type[Exception]:
    import kfp_server_api

    return kfp_server_api.ApiException


def api_error_message(exc: Exception) -> str:
    """The KFP error body's message (`{error, code, message, details}`), else the status."""
    body = getattr(exc, "body", None) or ""
    try:
        return str(json.loads(body).get("message") or body)
    except (ValueError, AttributeError):
        return f"HTTP {getattr(exc, 'status', '?')} {getattr(exc, 'reason', '')}".strip()


def client(host: str, namespace: str | None = None, token: str | None = None) -> Any:
    import kfp

    kwargs: dict[str, Any] = {"host": host}
    if namespace:
        kwargs["namespace"] = namespace
    if token:
        kwargs["existing_token"] = token
    return kfp.Client(**kwargs)


def without_caching(pipeline_yaml: str) -> str:
    """The YAML with every task's cache off (`--no-cache`): a version of its own."""
    documents = list(yaml.safe_load_all(pipeline_yaml))
    spec = documents[0]
    for component in [spec.get("root", {}), *spec.get("components", {}).values()]:
        for task in component.get("dag", {}).get("tasks", {}).values():
            task.setdefault("cachingOptions", {})["enableCache"] = False
    return yaml.safe_dump_all(documents, sort_keys=False)


def version_name(name: str, pipeline_yaml: str) -> str:
    return f"{short_name(name)}-{hashlib.sha256(pipeline_yaml.encode()).hexdigest()[:12]}"


def upload_or_reuse(
    kfp_client: Any, name: str, pipeline_yaml: str, namespace: str | None
) -> tuple[str, str, bool]:
    """(pipeline ID, version ID, whether a version was uploaded now)."""
    import kfp_server_api

    pipeline_name = short_name(name)
    pipeline_id = kfp_client.get_pipeline_id(pipeline_name)
    if pipeline_id is None:
        pipeline = kfp_server_api.V2beta1Pipeline(
            display_name=pipeline_name, name=pipeline_name, namespace=namespace or None
        )
        pipeline_id = kfp_client._pipelines_api.pipeline_service_create_pipeline(
            pipeline=pipeline
        ).pipeline_id
    wanted = version_name(name, pipeline_yaml)
    found = kfp_client.list_pipeline_versions(
        pipeline_id,
        page_size=1,
        filter=json.dumps(
            {"predicates": [{"operation": "EQUALS", "key": "display_name", "string_value": wanted}]}
        ),
    )
    if found.pipeline_versions:
        return pipeline_id, found.pipeline_versions[0].pipeline_version_id, False
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{pipeline_name}.yaml"
        path.write_text(pipeline_yaml)
        version = kfp_client.upload_pipeline_version(str(path), wanted, pipeline_id=pipeline_id)
    return pipeline_id, version.pipeline_version_id, True


def as_job(run: dict[str, Any]) -> dict[str, Any]:
    """The run in the shape the local run's progress lines read (a PipelineJob's JSON)."""
    state = run.get("state") or "PENDING"
    tasks = []
    for task in (run.get("run_details") or {}).get("task_details") or []:
        entry = {
            "taskId": task.get("task_id", ""),
            "taskName": task.get("display_name", ""),
            "state": TO_VERTEX_STATE.get(task.get("state", ""), task.get("state", "")),
            "parentTaskId": task.get("parent_task_id", ""),
        }
        for source, target in (
            ("start_time", "startTime"),
            ("end_time", "endTime"),
            ("create_time", "createTime"),
        ):
            if task.get(source):
                entry[target] = task[source]
        if (task.get("error") or {}).get("message"):
            entry["error"] = {"message": task["error"]["message"]}
        tasks.append(entry)
    history = run.get("state_history") or []
    job = {
        "state": f"PIPELINE_STATE_{TO_VERTEX_STATE.get(state, state)}",
        "updateTime": history[-1].get("update_time") if history else run.get("created_at"),
        "jobDetail": {"taskDetails": tasks},
    }
    if (run.get("error") or {}).get("message"):
        job["error"] = {"message": run["error"]["message"]}
    return job


def run_on_kfp(
    name: str,
    pipeline_yaml: str,
    params: dict[str, Any],
    host: str,
    experiment: str,
    namespace: str | None = None,
    token: str | None = None,
    pipeline_root: str | None = None,
    wait: bool = True,
    emit: Callable[[str], None] = print,
    timeout: float | None = None,
) -> KfpRun:
    """Uploads (or reuses) the pipeline's version, creates the run and, with `wait`, follows it
    to its end; a run that did not succeed raises PipelineJobFailed naming the failed tasks."""
    from vertexkit import pipeline_jobs

    kfp_client = client(host, namespace, token)
    pipeline_id, version_id, uploaded = upload_or_reuse(kfp_client, name, pipeline_yaml, namespace)
    verb = "uploaded" if uploaded else "reusing"
    emit(f"{verb} pipeline {short_name(name)} version {version_name(name, pipeline_yaml)}")
    experiment_id = kfp_client.create_experiment(name=experiment, namespace=namespace).experiment_id
    stamp = datetime.now().strftime("%Y-%m-%d %H-%M-%S")
    created = kfp_client.run_pipeline(
        experiment_id,
        f"{short_name(name)} {stamp}",
        params=params,
        pipeline_id=pipeline_id,
        version_id=version_id,
        pipeline_root=pipeline_root,
    )
    emit(f"created run {created.run_id}")
    emit(f"console: {host.rstrip('/')}/#/runs/details/{created.run_id}")
    result = KfpRun(name, _as_dict(kfp_client, created), host, pipeline_id, version_id)
    if not wait:
        return result
    progress = pipeline_jobs.TaskProgress(emit)
    deadline = None if timeout is None else time.monotonic() + timeout
    delay = 0.2
    try:
        while True:
            run = _as_dict(kfp_client, kfp_client.get_run(created.run_id))
            progress.observe(as_job(run))
            if run.get("state") in KFP_TERMINAL:
                break
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"run {created.run_id} did not end in {timeout} s")
            time.sleep(delay)
            delay = min(delay * 1.5, 5.0)
    except KeyboardInterrupt:
        kfp_client.terminate_run(created.run_id)
        raise
    result.run = run
    pipeline_jobs.raise_unless_succeeded(as_job(run))
    return result


def _as_dict(kfp_client: Any, model: Any) -> dict[str, Any]:
    """A kfp_server_api model as the API's JSON: snake_case, times as RFC 3339 UTC with `Z`
    (as Vertex writes them, which `pipeline_jobs.parse_time` reads)."""
    del kfp_client
    return _plain(model.to_dict())


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
