"""Runs one pipeline job with `kfp.local`, in its own process, and reports task events.

    python -m vertexkit.local.vertex.pipelines.driver JOB_DIR

JOB_DIR/run.json holds the pipeline spec, parameter values, pipeline root and caching settings
(written by the local cloud). Task events go to JOB_DIR/events.jsonl, one JSON object a line,
which the local cloud tails into the job's `jobDetail.taskDetails`.

The seam: both kfp.local orchestrators run every leaf task through
`kfp.local.orchestrator.task_executor.execute_single_task(task_name, ...)`, and a task that
really runs (not a cache hit) goes through `task_dispatcher.run_single_task_implementation`.
Wrapping those two functions gives each task's start, end, status and cache hit without
parsing kfp's log lines.

A finished task's event also carries its outputs the way Vertex reports them in
`PipelineTaskDetail`: artifacts as `{name: {"artifacts": [{uri, schemaTitle, metadata}]}}`
(paths under the pipeline root shown as the `gs://` URIs they are on the local Cloud Storage)
and output parameters as `output:NAME` keys of the task's execution metadata.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import sys
import threading
import traceback
from collections import deque
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

RUN_FILE = "run.json"
EVENTS_FILE = "events.jsonl"
ERROR_TAIL_LINES = 15


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class EventLog:
    """Appends events to the JSON-lines file; flushed per line so the service sees them live."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, event: str, **fields: Any) -> None:
        line = json.dumps({"event": event, "time": _now(), **fields})
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()


class _TaskOutput(io.TextIOBase):
    """Passes stdout through and keeps each thread's last lines: a failed task's traceback.

    kfp.local prints a task's merged stdout/stderr from the thread that runs the task, so a
    per-thread tail is the task's own output even when ParallelFor runs tasks in threads.
    """

    def __init__(self, target: TextIO) -> None:
        self._target = target
        self._local = threading.local()

    def tail(self) -> deque[str]:
        if not hasattr(self._local, "lines"):
            self._local.lines = deque(maxlen=ERROR_TAIL_LINES)
        return self._local.lines

    def write(self, text: str) -> int:
        self._target.write(text)
        self.tail().extend(line for line in text.splitlines() if line.strip())
        return len(text)

    def flush(self) -> None:
        self._target.flush()


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# kfp.local's own lines around a task's output: rules and "12:00:00.123 - ERROR - Task ..." logs.
_KFP_DECORATION = re.compile(r"^(-{10,}|\d\d:\d\d:\d\d\.\d+ - [A-Z]+ - .*)$")


def _error_summary(lines: list[str]) -> str:
    """The exception line of a traceback (or the program's last error line), with the tail."""
    lines = [_ANSI.sub("", line) for line in lines]
    exception_lines = [
        line
        for line in lines
        if not line.startswith((" ", "\t", "Traceback")) and not _KFP_DECORATION.match(line)
    ]
    headline = exception_lines[-1].strip() if exception_lines else "the task exited non-zero"
    return headline + ("\n" + "\n".join(lines) if lines else "")


class OutputRecorder:
    """Turns kfp.local's task outputs into Vertex's task-detail fields (see the module doc)."""

    def __init__(self, root_path: str, root_uri: str | None) -> None:
        self._root_path = root_path.rstrip("/")
        self._root_uri = root_uri.rstrip("/") if root_uri else None

    def fields(
        self, outputs: dict[str, Any] | None, schemas: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """`schemas`: the component's declared artifact types (kfp.local reports a type it
        does not know, such as google.VertexModel, as system.Artifact; Vertex reports it)."""
        artifacts: dict[str, Any] = {}
        parameters: dict[str, Any] = {}
        for name, value in (outputs or {}).items():
            if _is_artifact(value) or (
                isinstance(value, list) and value and all(map(_is_artifact, value))
            ):
                listed = value if isinstance(value, list) else [value]
                schema = (schemas or {}).get(name)
                artifacts[name] = {"artifacts": [self._artifact(a, schema) for a in listed]}
            else:
                parameters[f"output:{name}"] = _json_value(value)
        return {"outputs": artifacts, "execution_metadata": parameters}

    def _artifact(self, artifact: Any, schema: str | None) -> dict[str, Any]:
        return {
            "displayName": artifact.name,
            "uri": self.uri(artifact.uri),
            "schemaTitle": schema or artifact.schema_title,
            "schemaVersion": getattr(artifact, "schema_version", "0.0.1"),
            "state": "LIVE",
            "metadata": _json_value(dict(artifact.metadata or {})),
        }

    def uri(self, uri: str) -> str:
        if self._root_uri and (uri == self._root_path or uri.startswith(self._root_path + "/")):
            return self._root_uri + uri[len(self._root_path) :]
        return uri


def _declared_schemas(task_spec: Any, components: Any) -> dict[str, str]:
    """Output artifact name -> schema title, from the task's component spec."""
    try:
        component = components[task_spec.component_ref.name]
        declared = component.output_definitions.artifacts
        return {name: spec.artifact_type.schema_title for name, spec in declared.items()}
    except (AttributeError, KeyError, TypeError):
        return {}


def _is_artifact(value: Any) -> bool:
    from kfp import dsl

    return isinstance(value, dsl.Artifact)


def _json_value(value: Any) -> Any:
    """A value a protobuf Struct can hold (what Vertex stores metadata as)."""
    return json.loads(json.dumps(value, default=str))


def _hook_task_events(events: EventLog, output: _TaskOutput, recorder: OutputRecorder) -> None:
    from kfp.local import status, task_dispatcher
    from kfp.local.orchestrator import task_executor

    execute_single_task = task_executor.execute_single_task
    run_single_task = task_dispatcher.run_single_task_implementation
    ids = itertools.count(1)
    local = threading.local()

    def run_and_mark(*args: Any, **kwargs: Any) -> Any:
        local.executed = True
        return run_single_task(*args, **kwargs)

    def execute_with_events(task_name: str, *args: Any, **kwargs: Any) -> Any:
        task_id = next(ids)
        local.executed = False
        output.tail().clear()
        events.write("task_started", task_id=task_id, task=task_name)
        try:
            outputs, task_status = execute_single_task(task_name, *args, **kwargs)
        except BaseException as exc:
            events.write("task_failed", task_id=task_id, task=task_name, error=repr(exc))
            raise
        if task_status == status.Status.SUCCESS:
            kind = "task_succeeded" if local.executed else "task_cached"
            schemas = _declared_schemas(kwargs.get("task_spec"), kwargs.get("components"))
            events.write(kind, task_id=task_id, task=task_name, **recorder.fields(outputs, schemas))
        else:
            error = _error_summary(list(output.tail()))
            events.write("task_failed", task_id=task_id, task=task_name, error=error)
        return outputs, task_status

    task_executor.execute_single_task = execute_with_events
    task_dispatcher.run_single_task_implementation = run_and_mark


def _typed_parameters(spec: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """Vertex carries parameter values as protobuf Values, so integers arrive as 3.0."""
    declared = spec.get("root", {}).get("inputDefinitions", {}).get("parameters", {})
    typed = dict(values)
    for name, value in values.items():
        kind = declared.get(name, {}).get("parameterType")
        if kind == "NUMBER_INTEGER" and isinstance(value, float) and value.is_integer():
            typed[name] = int(value)
    return typed


def run(job_dir: Path) -> int:
    from kfp import components, local

    settings = json.loads((job_dir / RUN_FILE).read_text())
    events = EventLog(job_dir / EVENTS_FILE)
    output = _TaskOutput(sys.stdout)
    sys.stdout = output  # type: ignore[assignment]
    recorder = OutputRecorder(settings["pipelineRoot"], settings.get("pipelineRootUri"))
    _hook_task_events(events, output, recorder)
    local.init(
        runner=local.SubprocessRunner(use_venv=False),
        pipeline_root=settings["pipelineRoot"],
        enable_caching=settings["enableCaching"],
        cache_root=settings["cacheRoot"],
        raise_on_error=True,
    )
    spec = settings["pipelineSpec"]
    events.write("pipeline_started")
    try:
        pipeline = components.load_component_from_text(json.dumps(spec))
        pipeline(**_typed_parameters(spec, settings.get("parameterValues", {})))
    except Exception as exc:  # any failure, task or spec, ends the job FAILED with its reason
        traceback.print_exc()
        events.write("pipeline_failed", error=f"{type(exc).__name__}: {exc}")
        return 1
    events.write("pipeline_succeeded")
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1])))
