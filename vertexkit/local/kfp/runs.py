"""A KFP run read from the local PipelineJob behind it: its state in KFP's RUNTIME_STATE values
(backend/api/v2beta1/run.proto `RuntimeState`), `run_details.task_details` in PipelineTaskDetail's
shape, its error as a google.rpc.Status."""

from __future__ import annotations

from typing import Any

Resource = dict[str, Any]

PENDING, RUNNING, SUCCEEDED, SKIPPED = "PENDING", "RUNNING", "SUCCEEDED", "SKIPPED"
FAILED, CANCELING, CANCELED, PAUSED = "FAILED", "CANCELING", "CANCELED", "PAUSED"
TERMINAL = frozenset({SUCCEEDED, SKIPPED, FAILED, CANCELED})
RETRYABLE = frozenset({FAILED, CANCELED})
JOB_STATE = {
    "PIPELINE_STATE_QUEUED": PENDING,
    "PIPELINE_STATE_PENDING": PENDING,
    "PIPELINE_STATE_RUNNING": RUNNING,
    "PIPELINE_STATE_SUCCEEDED": SUCCEEDED,
    "PIPELINE_STATE_FAILED": FAILED,
    "PIPELINE_STATE_CANCELLING": CANCELING,
    "PIPELINE_STATE_CANCELLED": CANCELED,
    "PIPELINE_STATE_PAUSED": PAUSED,
}
TASK_STATE = {  # PipelineTaskDetail.State (Vertex) -> RuntimeState (KFP)
    "PENDING": PENDING,
    "RUNNING": RUNNING,
    "SUCCEEDED": SUCCEEDED,
    "SKIPPED": SKIPPED,  # a cache hit: KFP reports cached tasks SKIPPED too
    "NOT_TRIGGERED": SKIPPED,
    "CANCEL_PENDING": CANCELING,
    "CANCELLING": CANCELING,
    "CANCELLED": CANCELED,
    "FAILED": FAILED,
}
LABEL_RUN = "vertexkit-kfp-run"  # on every backing PipelineJob: the KFP run's ID
LABEL_EXPERIMENT = "vertexkit-kfp-experiment"


def job_id(run_id: str, attempt: int) -> str:
    """The backing PipelineJob's ID: `kfp-<run id>`, `kfp-<run id>-retry-N` after N retries."""
    return f"kfp-{run_id}" if attempt == 0 else f"kfp-{run_id}-retry-{attempt}"


def state_of(job: Resource | None) -> str:
    if job is None:
        return FAILED  # see live_fields
    return JOB_STATE.get(job.get("state", ""), "RUNTIME_STATE_UNSPECIFIED")


def live_fields(run_id: str, created_at: str, job: Resource | None) -> Resource:
    """What a run's answer takes from its PipelineJob: state, its history, finished_at, error,
    run_details."""
    history = [{"update_time": created_at, "state": PENDING}]
    if job is None:  # its job is made before the run is stored: someone deleted it since
        error = {
            "code": 5,
            "message": f"the run's PipelineJob (ID kfp-{run_id}...) was deleted "
            "through the Vertex AI API",
            "details": [],
        }
        history.append({"update_time": created_at, "state": FAILED, "error": error})
        return {"state": FAILED, "state_history": history, "error": error}
    state = state_of(job)
    fields: Resource = {"state": state, "state_history": history}
    if job.get("startTime"):
        history.append({"update_time": job["startTime"], "state": RUNNING})
    if state in TERMINAL or state == CANCELING:
        moment = job.get("endTime") or job.get("updateTime") or created_at
        history.append({"update_time": moment, "state": state, **_error(job)})
        if state in TERMINAL:
            fields["finished_at"] = moment
    fields.update(_error(job))
    tasks = [_task(run_id, task) for task in job.get("jobDetail", {}).get("taskDetails", [])]
    children: dict[str, list[Resource]] = {}
    for task in tasks:
        if task.get("parent_task_id"):
            children.setdefault(task["parent_task_id"], []).append({"task_id": task["task_id"]})
    for task in tasks:
        if task["task_id"] in children:
            task["child_tasks"] = children[task["task_id"]]
    fields["run_details"] = {"task_details": tasks}
    context = job.get("jobDetail", {}).get("pipelineRunContext", {}).get("name", "")
    if context:
        fields["run_details"]["pipeline_run_context_id"] = context.rsplit("/", 1)[-1]
    return fields


def _error(resource: Resource) -> Resource:
    error = resource.get("error")
    if not error or not error.get("message"):
        return {}
    return {
        "error": {"code": int(error.get("code") or 2), "message": error["message"], "details": []}
    }


def _task(run_id: str, task: Resource) -> Resource:
    detail: Resource = {
        "run_id": run_id,
        "task_id": str(task.get("taskId", "")),
        "display_name": task.get("taskName", ""),
        "state": TASK_STATE.get(task.get("state", ""), "RUNTIME_STATE_UNSPECIFIED"),
        "state_history": [
            {
                "update_time": status.get("updateTime"),
                "state": TASK_STATE.get(status.get("state", ""), "RUNTIME_STATE_UNSPECIFIED"),
                **_error(status),
            }
            for status in task.get("pipelineTaskStatus", [])
        ],
    }
    for source, target in (
        ("createTime", "create_time"),
        ("startTime", "start_time"),
        ("endTime", "end_time"),
    ):
        if task.get(source):
            detail[target] = task[source]
    if task.get("parentTaskId"):
        detail["parent_task_id"] = str(task["parentTaskId"])
    execution = task.get("execution", {}).get("name", "")
    if execution:
        detail["execution_id"] = execution.rsplit("/", 1)[-1]
    detail.update(_error(task))
    for side in ("inputs", "outputs"):
        lists = {
            name: {
                "artifact_ids": [
                    a["name"].rsplit("/", 1)[-1]
                    for a in entry.get("artifacts", [])
                    if a.get("name")
                ]
            }
            for name, entry in (task.get(side) or {}).items()
        }
        if lists:
            detail[side] = lists
    return detail
