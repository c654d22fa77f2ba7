"""Runs one pipeline job with `kfp.local`, in its own process, and reports task events.

    python -m vertexkit.local.vertex.pipelines.driver JOB_DIR

JOB_DIR/run.json holds the pipeline spec, parameter values, pipeline root and caching settings
(written by the local cloud). Task events go to JOB_DIR/events.jsonl, one JSON object a line,
which the local cloud tails into the job's `jobDetail.taskDetails`.

The seam: both kfp.local orchestrators run every leaf task through
`kfp.local.orchestrator.task_executor.execute_single_task(task_name, ...)`, and a task that
really runs (not a cache hit) goes through `task_dispatcher.run_single_task_implementation`.
Wrapping those two functions gives each task's start, end, status and cache hit without
parsing kfp's log lines (an importer always runs: it is never a cache hit). A task is named by
its display name with its loop indices (`train [1]`), as the progress lines show it.

A finished task's event also carries its outputs the way Vertex reports them in
`PipelineTaskDetail`: artifacts as `{name: {"artifacts": [{uri, schemaTitle, metadata}]}}`
and output parameters as `output:NAME` keys of the task's execution metadata.

What else makes kfp.local run a pipeline the way Vertex does, each in its own module:
- executor inputs (here): output artifacts get `gs://` URIs under the pipeline root (a bucket of
  the local Cloud Storage), and whole numbers inside list/struct parameters stay integers;
- `task_handler`: the task process (packages_to_install in `task_envs`, `.path` of a `gs://`
  URI through `task_main`, at most `maxParallel` tasks at once, the task's error);
- `dag_runner`: a DAG's ready tasks and a loop's iterations run at once;
- `placeholders`: Vertex's pipeline placeholders (`{{$.pipeline_google_cloud_project_id}}`, ...)
  resolve to the job's values, so GCPC operators' defaults work.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
import threading
import traceback
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from vertexkit import gc_tuning
from vertexkit.kfp_loader import import_kfp
from vertexkit.local.vertex.pipelines import dag_runner, placeholders, task_handler
from vertexkit.local.vertex.pipelines.standby import CLIENTS, LAZY, WARM, WORKERS_FLAG
from vertexkit.local.vertex.pipelines.task_envs import TaskEnvironments
from vertexkit.local.vertex.pipelines.task_main import GCS_MOUNT_ENV
from vertexkit.local.vertex.pipelines.warm_tasks import WarmWorkers, fork_available

RUN_FILE = "run.json"
EVENTS_FILE = "events.jsonl"
_ITERATION = re.compile(r"-iteration-(\d+)")


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


def task_label(task_name: str, task_spec: Any, pipeline_resource_name: str) -> tuple[str, str]:
    """(display name, unique name) of a task as Vertex shows them: the task's display name
    (`set_display_name`, else its name) with its loop indices, `train [1]`, and the dotted path
    of the loops it runs in, `for-loop-2.iteration-1.train`."""
    display = getattr(getattr(task_spec, "task_info", None), "name", "") or task_name
    iterations = _ITERATION.findall(pipeline_resource_name)
    if iterations:
        display += " " + "".join(f"[{index}]" for index in iterations)
    scopes = pipeline_resource_name.split("/")[1:]  # the first part is the run itself
    unique = ".".join(
        [*(scope.replace("-iteration-", ".iteration-") for scope in scopes), task_name]
    )
    return display, unique


def _hook_task_events(events: EventLog, recorder: OutputRecorder) -> None:
    """Wraps kfp.local's per-task seam: a start and an end event for every leaf task."""
    from kfp.local import importer_handler, status, task_dispatcher
    from kfp.local.orchestrator import task_executor

    execute_single_task = task_executor.execute_single_task
    run_single_task = task_dispatcher.run_single_task_implementation
    run_importer = importer_handler.run_importer
    ids = itertools.count(1)
    local = threading.local()

    def run_and_mark(*args: Any, **kwargs: Any) -> Any:
        local.executed = True
        task_handler.refuse_unless_runnable(kwargs["executor_spec"].container)
        return run_single_task(*args, **kwargs)

    def import_and_mark(*args: Any, **kwargs: Any) -> Any:
        local.executed = True  # an importer runs every time: it is never served from cache
        return run_importer(*args, **kwargs)

    def execute_with_events(task_name: str, *args: Any, **kwargs: Any) -> Any:
        task_id = next(ids)
        local.executed = False
        display, unique = task_label(
            task_name, kwargs.get("task_spec"), kwargs.get("pipeline_resource_name", "")
        )
        context = task_handler.current_task()
        context.label, context.error = display, None
        with task_handler.task_slot():
            events.write("task_started", task_id=task_id, task=display, unique=unique)
            try:
                outputs, task_status = execute_single_task(task_name, *args, **kwargs)
            except Exception as exc:  # a task that cannot start fails alone, with its reason
                traceback.print_exc()
                error = f"{type(exc).__name__}: {exc}"
                events.write("task_failed", task_id=task_id, task=display, error=error)
                return {}, status.Status.FAILURE
        if task_status == status.Status.SUCCESS:
            kind = "task_succeeded" if local.executed else "task_cached"
            schemas = _declared_schemas(kwargs.get("task_spec"), kwargs.get("components"))
            events.write(kind, task_id=task_id, task=display, **recorder.fields(outputs, schemas))
        else:
            error = context.error or "the task failed"
            events.write("task_failed", task_id=task_id, task=display, error=error)
        return outputs, task_status

    task_executor.execute_single_task = execute_with_events
    task_dispatcher.run_single_task_implementation = run_and_mark
    importer_handler.run_importer = import_and_mark


def _hook_executor_input(recorder: OutputRecorder) -> None:
    """Executor inputs as Vertex writes them: output artifacts under the pipeline root by their
    `gs://` URI, and whole numbers inside list and struct parameters as integers (Vertex's
    launcher prints a protobuf number 20.0 as `20`; Python's json_format would say 20.0)."""
    from kfp.local import executor_input_utils

    artifact_list = executor_input_utils.artifact_type_schema_to_artifact_list
    to_dict = executor_input_utils.executor_input_to_dict

    def gs_artifact_list(name: str, artifact_type: Any, task_root: str) -> Any:
        listed = artifact_list(name=name, artifact_type=artifact_type, task_root=task_root)
        for artifact in listed.artifacts:
            artifact.uri = recorder.uri(artifact.uri)
        return listed

    def integral_dict(executor_input: Any, component_spec: Any) -> dict[str, Any]:
        converted = to_dict(executor_input=executor_input, component_spec=component_spec)
        values = converted.get("inputs", {}).get("parameterValues", {})
        for name, value in values.items():
            if isinstance(value, (list, dict)):
                values[name] = whole_numbers_as_int(value)
        return converted

    executor_input_utils.artifact_type_schema_to_artifact_list = gs_artifact_list
    executor_input_utils.executor_input_to_dict = integral_dict


def _hook_vertex_placeholders(settings: dict[str, Any]) -> None:
    """Vertex's placeholders first, then kfp.local's own resolution of the rest (see the
    `placeholders` module): every element of a task's command and every string parameter value
    goes through `resolve_individual_placeholder`."""
    from kfp.local import placeholder_utils

    values = placeholders.job_placeholders(settings)
    resolve_individual = placeholder_utils.resolve_individual_placeholder

    def resolve_vertex_first(
        element: str, executor_input_dict: dict[str, Any], **kwargs: Any
    ) -> Any:
        element = placeholders.resolve(element, values)
        element = placeholders.resolve_escaped_executor_input(element, executor_input_dict)
        resolved = resolve_individual(element, executor_input_dict=executor_input_dict, **kwargs)
        if isinstance(resolved, str):  # a parameter's value may carry one (a worker pool spec)
            resolved = placeholders.resolve_escaped_executor_input(resolved, executor_input_dict)
        return resolved

    placeholder_utils.resolve_individual_placeholder = resolve_vertex_first


def whole_numbers_as_int(value: Any) -> Any:
    """`{"n": 20.0, "r": 0.5}` -> `{"n": 20, "r": 0.5}`, through lists and dicts."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [whole_numbers_as_int(item) for item in value]
    if isinstance(value, dict):
        return {key: whole_numbers_as_int(item) for key, item in value.items()}
    return value


def _typed_parameters(spec: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """Vertex carries parameter values as protobuf Values, so integers arrive as 3.0."""
    declared = spec.get("root", {}).get("inputDefinitions", {}).get("parameters", {})
    typed = dict(values)
    for name, value in values.items():
        kind = declared.get(name, {}).get("parameterType")
        if kind == "NUMBER_INTEGER" and isinstance(value, float) and value.is_integer():
            typed[name] = int(value)
        elif kind in ("LIST", "STRUCT"):
            typed[name] = whole_numbers_as_int(value)
    return typed


def storage_root(settings: dict[str, Any]) -> str | None:
    """The local Cloud Storage folder that holds every bucket: the pipeline root's path less its
    `gs://` URI's bucket and path."""
    path, uri = settings["pipelineRoot"].rstrip("/"), settings.get("pipelineRootUri") or ""
    inside = uri.removeprefix("gs://").rstrip("/")
    if not uri.startswith("gs://") or not path.endswith("/" + inside):
        return None
    return path[: -len(inside) - 1]


def _install_task_handler(settings: dict[str, Any], workers: WarmWorkers | None) -> None:
    max_parallel = int(settings.get("maxParallel") or os.cpu_count() or 1)
    env_root = Path(settings.get("taskEnvRoot") or Path(settings["cacheRoot"]).parent / "task-envs")
    handler_settings = task_handler.HandlerSettings(
        environments=TaskEnvironments(env_root),
        gcs_mount=storage_root(settings),
        max_parallel=max_parallel,
        workers=workers,
    )
    task_handler.install(handler_settings)
    dag_runner.install(max_parallel)
    # kfp.local warns that a display name has no effect; here it names the task's details.
    warnings.filterwarnings("ignore", message=r".*settings \['display_name'\] have no effect")


def _start_task_workers(gcs_mount: str | None, lazy: bool = False) -> WarmWorkers | None:
    """The run's warm task workers (`warm_tasks`), or None: every task in a plain process.
    Started first, so they import their modules while the driver imports kfp.local; with
    `lazy`, with the first task that runs. The job's spec (`WarmWorkers.expect`) says what the
    full one imports."""
    if not fork_available():
        print(f"tasks run in plain processes: fork is not available on {sys.platform}")
        return None
    env = dict(os.environ)
    if gcs_mount:
        env[GCS_MOUNT_ENV] = gcs_mount
    return WarmWorkers(env, lazy=lazy)


def _read_settings(job_dir: Path) -> dict[str, Any]:
    return json.loads((job_dir / RUN_FILE).read_text())


def run(job_dir: Path) -> int:
    import_kfp()
    settings = _read_settings(job_dir)
    workers = None
    if settings.get("warmTasks", True):
        workers = _start_task_workers(storage_root(settings))
    return run_with(job_dir, settings, workers)


def run_with(job_dir: Path, settings: dict[str, Any], workers: WarmWorkers | None) -> int:
    """Runs the job with these task workers (None: plain processes); closes them at the end."""
    if workers is not None:
        workers.expect(settings["pipelineSpec"])
    try:
        events = EventLog(job_dir / EVENTS_FILE)
        recorder = OutputRecorder(settings["pipelineRoot"], settings.get("pipelineRootUri"))
        _hook_task_events(events, recorder)
        _hook_executor_input(recorder)
        _hook_vertex_placeholders(settings)
        _install_task_handler(settings, workers)
        return _run_pipeline(settings, events)
    finally:
        if workers is not None:
            workers.close()


def standby(storage_home: str, mode: str = WARM) -> int:
    """A driver started before its job (see `standby`): workers and kfp.local first, then the
    job's folder, one line on stdin (none: the local cloud closed without a job for it).
    `mode` (standby's WARM, CLIENTS, LAZY): what the task workers do meanwhile."""
    workers = _start_task_workers(storage_home, lazy=mode == LAZY)
    if workers is not None and mode == CLIENTS:
        workers.expect_clients()
    _import_kfp_local()

    line = sys.stdin.readline().strip()
    if not line:
        if workers is not None:
            workers.close()
        return 0
    job_dir = Path(line)
    _log_to(job_dir / "driver.log")
    print(f"standby driver {os.getpid()}: running {job_dir.name}", flush=True)
    settings = _read_settings(job_dir)
    if workers is not None and not settings.get("warmTasks", True):
        workers.close()
        workers = None
    return run_with(job_dir, settings, workers)


def _import_kfp_local() -> None:
    """What `run_with` imports, so the standby has done it when its job comes."""
    import_kfp()
    from kfp import components, local  # noqa: F401
    from kfp.local import executor_input_utils, importer_handler, placeholder_utils  # noqa: F401
    from kfp.local.orchestrator import task_executor  # noqa: F401


def _log_to(path: Path) -> None:
    """This process's stdout and stderr to `path` from now on (the job's driver log)."""
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _run_pipeline(settings: dict[str, Any], events: EventLog) -> int:
    from kfp import components, local

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


def main(argv: list[str]) -> None:
    """`JOB_DIR`, or `--standby STORAGE_HOME [--workers MODE]`. Runs the job, then leaves
    without tearing the interpreter down: every event is flushed (EventLog writes through), and
    the local cloud marks the job ended when this process ends."""
    gc_tuning.collect_less_often()
    if argv[0] == "--standby":
        flags = dict(zip(argv[2::2], argv[3::2], strict=False))
        code = standby(argv[1], flags.get(WORKERS_FLAG, WARM))
    else:
        code = run(Path(argv[0]))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
