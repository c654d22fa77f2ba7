"""Progress lines for the jobs a running pipeline task launched, read from its `gcp_resources`.

A task that launches a Vertex job (our components, GCPC's launchers) writes the job into its
`gcp_resources` output as soon as the job exists; the task detail shows it in the execution's
metadata (`output:gcp_resources`, GcpResources JSON) while the task runs on the local cloud,
and once it ended everywhere. `JobProgress` looks each such job up over Vertex AI's REST API
(`vertexkit.vertex_rest`) and prints one line per change, under its task:
- a HyperparameterTuningJob: each trial as it starts (its id and parameters) and as it ends
  (its state and final measurement's metrics);
- a CustomJob or TrainingPipeline: its state as it changes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vertexkit.runtime.gcp_resources import vertex_name_from_uri

if TYPE_CHECKING:
    from vertexkit.vertex_rest import VertexRest

TRIAL_ENDED = {"SUCCEEDED", "INFEASIBLE"}  # Trial.State: REQUESTED, ACTIVE, STOPPING first
WATCHED = ("HyperparameterTuningJob", "CustomJob", "TrainingPipeline")
Fetch = Callable[[str, str], dict[str, Any]]  # (resource type, name) -> the resource as JSON


def fetcher(vertex: VertexRest) -> Fetch:
    """Gets a watched resource (every type a `GET v1/{name}`) as Vertex's JSON, over REST."""

    def fetch(resource_type: str, name: str) -> dict[str, Any]:
        del resource_type  # the name says which collection it is in
        return vertex.get(name)

    return fetch


def task_jobs(task: dict[str, Any]) -> list[tuple[str, str]]:
    """(resource type, name) of each watched Vertex job in the task's `gcp_resources`."""
    metadata = (task.get("execution") or {}).get("metadata") or {}
    text = metadata.get("output:gcp_resources")
    if not isinstance(text, str) or not text.strip():
        return []
    try:
        resources = json.loads(text).get("resources") or []
    except (ValueError, AttributeError):
        return []
    jobs = []
    for resource in resources:
        kind = resource.get("resourceType", "")
        if kind in WATCHED:
            try:
                jobs.append((kind, vertex_name_from_uri(resource.get("resourceUri", ""))))
            except ValueError:
                continue
    return jobs


@dataclass
class JobProgress:
    """Remembers what it printed of each job; `observe(task)` prints what is new."""

    emit: Callable[[str], None]
    fetch: Fetch
    seen: dict[str, str] = field(default_factory=dict)  # a job's or a trial's key -> its state
    finished: set[str] = field(default_factory=set)  # jobs looked at once after their task ended
    lines: int = 0

    def observe(self, task: dict[str, Any], task_ended: bool) -> None:
        for kind, name in task_jobs(task):
            if name in self.finished:
                continue
            try:
                job = self.fetch(kind, name)
            except Exception:  # a job the follower cannot read is not worth ending the run over
                continue
            label = task.get("taskName", "?")
            if kind == "HyperparameterTuningJob":
                self._trials(label, name, job)
            else:
                self._state(label, kind, name, job)
            if task_ended:  # the last look: its last trials and state are printed now
                self.finished.add(name)

    def _trials(self, label: str, name: str, job: dict[str, Any]) -> None:
        for trial in job.get("trials") or []:
            key = f"{name}/trials/{trial.get('id')}"
            state = trial.get("state", "")
            before = self.seen.get(key)
            if before is None:
                self.seen[key] = "started"
                self._line(trial.get("startTime"), label,
                           f"trial {trial.get('id')} started   {_parameters(trial)}")  # fmt: skip
            if state in TRIAL_ENDED and self.seen[key] != "ended":
                self.seen[key] = "ended"
                self._line(trial.get("endTime"), label,
                           f"trial {trial.get('id')} {state:<9} {_metrics(trial)}")  # fmt: skip

    def _state(self, label: str, kind: str, name: str, job: dict[str, Any]) -> None:
        state = str(job.get("state", "")).removeprefix("JOB_STATE_").removeprefix("PIPELINE_STATE_")
        if self.seen.get(name) != state:
            self.seen[name] = state
            self._line(job.get("updateTime"), label,
                       f"{_kind_words(kind)} {name.rsplit('/', 1)[-1]} {state}")  # fmt: skip

    def _line(self, when: str | None, label: str, text: str) -> None:
        from vertexkit.pipeline_jobs import clock

        self.lines += 1
        self.emit(f"{clock(when)}  {label:<28} {text}".rstrip())


def _parameters(trial: dict[str, Any]) -> str:
    return " ".join(
        f"{p.get('parameterId')}={_number(p.get('value'))}" for p in trial.get("parameters") or []
    )


def _metrics(trial: dict[str, Any]) -> str:
    metrics = (trial.get("finalMeasurement") or {}).get("metrics") or []
    return " ".join(f"{m.get('metricId')}={_number(m.get('value'))}" for m in metrics)


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _kind_words(kind: str) -> str:
    return {"CustomJob": "custom job", "TrainingPipeline": "training pipeline"}.get(kind, kind)
