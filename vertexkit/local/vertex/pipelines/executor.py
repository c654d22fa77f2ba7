"""vertexkit's executor of the PipelineSpec IR, with the semantics Vertex AI Pipelines gives it.

The reference is the KFP backend's driver (`backend/src/v2/driver/driver.go`, `resolve.go`,
`dag.go` of kubeflow/pipelines); each rule below names where it comes from.
- A DAG's task starts once every task in its `dependentTasks` has ended. Under the default
  trigger strategy (ALL_UPSTREAM_TASKS_SUCCEEDED) a task whose upstream failed does not run; under
  ALL_UPSTREAM_TASKS_COMPLETED (an exit handler's task, `ignore_upstream_failure`) it runs, and an
  input whose producer failed takes the component's default.
- `triggerPolicy.condition` (CEL over the task's input parameters) false: the task ends
  NOT_TRIGGERED (PipelineTaskDetail.State), and what it would have produced is absent.
- `parameterIterator` / `artifactIterator`: the loop's DAG runs once per item, at most
  `iteratorPolicy.parallelismLimit` at once (0: all); the loop task's outputs are each
  iteration's DAG outputs gathered into one list (`dsl.Collected`), flattened across nested loops.
- A DAG output with several selectors (`valueFromOneof`, several `artifactSelectors`) is the
  first whose producer ran (`dsl.OneOf` over If/Elif/Else branches).
- A `taskFinalStatus` input is the producer's PipelineTaskFinalStatus.
- A DAG fails when any of its tasks failed (Vertex's FAIL_SLOW, its default failure policy:
  the tasks that do not depend on the failure still run; FAIL_FAST starts no more).
- `retryPolicy`: up to `maxRetryCount` more tries, `backoffDuration * backoffFactor^n` apart,
  capped at `backoffMaxDuration`.
Each executor task is `leaf`'s; its process is `task_handler`'s.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import re
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vertexkit.local.vertex.pipelines import conditions, leaf, placeholders, task_handler
from vertexkit.local.vertex.pipelines.leaf import ArtifactList, Storage, TaskIO

SUCCEEDED, FAILED, SKIPPED, NOT_TRIGGERED = "SUCCEEDED", "FAILED", "SKIPPED", "NOT_TRIGGERED"
BLOCKED = "BLOCKED"  # not run: an upstream task failed (no task detail, as on Vertex)
ALL_COMPLETED = "ALL_UPSTREAM_TASKS_COMPLETED"
DONE_OK = frozenset({SUCCEEDED, SKIPPED})
WATCH_SECONDS = 0.1  # how often a running task's gcp_resources file is looked at (one stat+read)


class Collected(list):  # type: ignore[type-arg]
    """A loop's gathered output: an outer loop flattens it into its own list."""


@dataclass
class Outcome:
    state: str
    io: TaskIO = field(default_factory=TaskIO)
    error: str | None = None


@dataclass
class Scope:
    """One DAG's execution: its inputs, its tasks' outcomes, where it sits in the run."""

    inputs: TaskIO
    parent_id: int
    path: list[str] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)
    outcomes: dict[str, Outcome] = field(default_factory=dict)


@dataclass
class RunSettings:
    spec: dict[str, Any]
    parameter_values: dict[str, Any]
    root_uri: str
    storage: Storage
    cache_dir: Path | None  # None: caching off for the whole run
    job_placeholders: dict[str, str]
    job_name: str = ""
    fail_fast: bool = False


Emit = Callable[..., None]


class PipelineExecutor:
    """Runs one PipelineSpec; `emit(event, **fields)` reports each task's start and end."""

    def __init__(self, settings: RunSettings, emit: Emit) -> None:
        self.settings = settings
        self.spec = settings.spec
        self.components: dict[str, Any] = self.spec.get("components") or {}
        self.executors: dict[str, Any] = (self.spec.get("deploymentSpec") or {}).get(
            "executors"
        ) or {}
        self.emit = emit
        self._ids = itertools.count(1)
        self._id_lock = threading.Lock()
        self.failures: list[tuple[str, str]] = []  # (task, cause) of each failed executor task
        self._failed = threading.Event()

    # -- the run -----------------------------------------------------------------------------
    def run(self) -> Outcome:
        root = self.spec["root"]
        self.refuse_unrunnable()
        declared = (root.get("inputDefinitions") or {}).get("parameters") or {}
        given = leaf.typed_parameters(declared, self.settings.parameter_values)
        inputs = with_defaults(TaskIO(parameters=given), root)
        return self.run_dag(root, Scope(inputs=inputs, parent_id=0))

    def refuse_unrunnable(self) -> None:
        """Before any task: a container whose program does not exist here (task_handler)."""
        for component_name, task_name in self._executor_tasks():
            component = self.components.get(component_name, {})
            executor = self.executors.get(component.get("executorLabel", ""), {})
            if "container" in executor:
                task_handler.refuse_unless_runnable(task_name, executor["container"])

    def _executor_tasks(self) -> list[tuple[str, str]]:
        dags = [self.spec["root"], *self.components.values()]
        return [
            (task["componentRef"]["name"], name)
            for dag in dags
            for name, task in ((dag.get("dag") or {}).get("tasks") or {}).items()
        ]

    def new_id(self) -> int:
        with self._id_lock:
            return next(self._ids)

    # -- DAGs --------------------------------------------------------------------------------
    def run_dag(self, component: dict[str, Any], scope: Scope) -> Outcome:
        tasks: dict[str, Any] = (component.get("dag") or {}).get("tasks") or {}
        pending = dict(tasks)
        running: dict[concurrent.futures.Future[Outcome], str] = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(tasks))) as pool:
            while pending or running:
                for name in [n for n, t in pending.items() if self._ready(t, scope, tasks)]:
                    task = pending.pop(name)
                    if self._blocked(task, scope):
                        scope.outcomes[name] = Outcome(BLOCKED)
                        continue
                    running[pool.submit(self.run_task, name, task, scope)] = name
                if not running:
                    if pending and not any(self._ready(t, scope, tasks) for t in pending.values()):
                        raise RuntimeError(f"tasks {sorted(pending)} wait on each other")
                    continue
                done, _ = concurrent.futures.wait(running, return_when="FIRST_COMPLETED")
                for future in done:
                    scope.outcomes[running.pop(future)] = future.result()
        failed = any(o.state in (FAILED, BLOCKED) for o in scope.outcomes.values())
        if failed:
            return Outcome(FAILED, error="some tasks failed")
        return Outcome(SUCCEEDED, self.dag_outputs(component, scope))

    def _ready(self, task: dict[str, Any], scope: Scope, tasks: dict[str, Any]) -> bool:
        return all(d in scope.outcomes or d not in tasks for d in task.get("dependentTasks", []))

    def _blocked(self, task: dict[str, Any], scope: Scope) -> bool:
        """Not run: an upstream failed under ALL_UPSTREAM_TASKS_SUCCEEDED, or FAIL_FAST."""
        runs_anyway = (task.get("triggerPolicy") or {}).get("strategy") == ALL_COMPLETED
        if runs_anyway:
            return False
        if self.settings.fail_fast and self._failed.is_set():
            return True
        upstream = [scope.outcomes.get(d) for d in task.get("dependentTasks", [])]
        return any(o is not None and o.state in (FAILED, BLOCKED) for o in upstream)

    def dag_outputs(self, component: dict[str, Any], scope: Scope) -> TaskIO:
        """The DAG's declared outputs from its tasks' (the first selector that ran: OneOf)."""
        declared = (component.get("dag") or {}).get("outputs") or {}
        io = TaskIO()
        for name, spec in (declared.get("parameters") or {}).items():
            selectors = spec.get("valueFromOneof", {}).get("parameterSelectors") or [
                spec.get("valueFromParameter", {})
            ]
            for selector in selectors:
                produced = scope.outcomes.get(selector.get("producerSubtask", ""))
                key = selector.get("outputParameterKey", "")
                if produced and produced.state in DONE_OK and key in produced.io.parameters:
                    io.parameters[name] = produced.io.parameters[key]
                    break
        for name, spec in (declared.get("artifacts") or {}).items():
            for selector in spec.get("artifactSelectors") or []:
                produced = scope.outcomes.get(selector.get("producerSubtask", ""))
                key = selector.get("outputArtifactKey", "")
                if produced and produced.state in DONE_OK and key in produced.io.artifacts:
                    io.artifacts[name] = produced.io.artifacts[key]
                    break
        return io

    # -- one task of a DAG -------------------------------------------------------------------
    def run_task(self, name: str, task: dict[str, Any], scope: Scope) -> Outcome:
        try:
            return self._run_task(name, task, scope)
        except Exception as exc:  # a task that cannot be run fails alone, with its reason
            traceback.print_exc()
            cause = f"{type(exc).__name__}: {exc}"
            task_id, display = self._announce("task_started", name, task, scope)
            self._record_failure(display, cause)
            self.emit("task_failed", task_id=task_id, task=display, error=cause)
            return Outcome(FAILED, error=cause)

    def _run_task(self, name: str, task: dict[str, Any], scope: Scope) -> Outcome:
        component = self.components[task["componentRef"]["name"]]
        inputs = self.resolve_inputs(task, scope)
        condition = (task.get("triggerPolicy") or {}).get("condition")
        if condition and not conditions.evaluate(condition, inputs.parameters):
            self._announce("task_not_triggered", name, task, scope)
            return Outcome(NOT_TRIGGERED)
        if "parameterIterator" in task or "artifactIterator" in task:
            return self.run_loop(name, task, component, inputs, scope)
        if "dag" in component:
            return self.run_sub_dag(name, task, component, inputs, scope)
        return self.run_executor(name, task, component, inputs, scope)

    def _announce(
        self, event: str, name: str, task: dict[str, Any], scope: Scope, **fields: Any
    ) -> tuple[int, str]:
        """A new task ID, and `event` emitted for it under its parent: (ID, display name)."""
        task_id = self.new_id()
        display, unique = self.label(name, task, scope)
        self.emit(event, task_id=task_id, parent=scope.parent_id, task=display, unique=unique,
                  **fields)  # fmt: skip
        return task_id, display

    def label(self, name: str, task: dict[str, Any], scope: Scope) -> tuple[str, str]:
        """(display name, unique name): `train [1]` and `for-loop-2.iteration-1.train`."""
        display = (task.get("taskInfo") or {}).get("name") or name
        if scope.indices:
            display += " " + "".join(f"[{index}]" for index in scope.indices)
        return display, ".".join([*scope.path, name])

    # -- inputs ------------------------------------------------------------------------------
    def resolve_inputs(self, task: dict[str, Any], scope: Scope) -> TaskIO:
        """The task's inputs (`resolve.go`): absent where the producer did not produce them."""
        declared = task.get("inputs") or {}
        io = TaskIO()
        for name, spec in (declared.get("parameters") or {}).items():
            found, value = self._parameter(spec, scope)
            if found:
                io.parameters[name] = value
        _fill_input_placeholders(declared.get("parameters") or {}, io.parameters)
        for name, spec in (declared.get("artifacts") or {}).items():
            listed = self._artifacts(spec, scope)
            if listed is not None:
                io.artifacts[name] = listed
        return io

    def _parameter(self, spec: dict[str, Any], scope: Scope) -> tuple[bool, Any]:
        found, value = self._parameter_source(spec, scope)
        selector = spec.get("parameterExpressionSelector")
        if found and selector:
            value = conditions.select(selector, value)
        return found, value

    def _parameter_source(self, spec: dict[str, Any], scope: Scope) -> tuple[bool, Any]:
        if "componentInputParameter" in spec:
            name = spec["componentInputParameter"]
            return name in scope.inputs.parameters, scope.inputs.parameters.get(name)
        if "runtimeValue" in spec:
            return True, _constant(spec["runtimeValue"])
        if "taskOutputParameter" in spec:
            source = spec["taskOutputParameter"]
            produced = scope.outcomes.get(source["producerTask"])
            key = source["outputParameterKey"]
            if (
                produced is None
                or produced.state not in DONE_OK
                or key not in produced.io.parameters
            ):
                return False, None
            return True, produced.io.parameters[key]
        if "taskFinalStatus" in spec:
            producer = spec["taskFinalStatus"]["producerTask"]
            return True, self._final_status(producer, scope.outcomes.get(producer))
        return False, None

    def _final_status(self, producer: str, outcome: Outcome | None) -> dict[str, Any]:
        """PipelineTaskFinalStatus as the driver gives it (`driver.go`, taskFinalStatus)."""
        state = outcome.state if outcome else FAILED
        failed = state in (FAILED, BLOCKED)
        return {
            "state": "FAILED" if failed else "SUCCEEDED",
            "pipelineJobResourceName": self.settings.job_name,
            "pipelineTaskName": producer,
            "error": {"code": 2, "message": (outcome.error or "") if outcome and failed else ""},
        }

    def _artifacts(self, spec: dict[str, Any], scope: Scope) -> ArtifactList | None:
        if "componentInputArtifact" in spec:
            return scope.inputs.artifacts.get(spec["componentInputArtifact"])
        source = spec.get("taskOutputArtifact")
        if source:
            produced = scope.outcomes.get(source["producerTask"])
            if produced is None or produced.state not in DONE_OK:
                return None
            return produced.io.artifacts.get(source["outputArtifactKey"])
        return None

    # -- loops and sub-DAGs ------------------------------------------------------------------
    def run_sub_dag(
        self,
        name: str,
        task: dict[str, Any],
        component: dict[str, Any],
        inputs: TaskIO,
        scope: Scope,
    ) -> Outcome:
        """A nested pipeline, a condition or an exit handler's body: its own DAG task."""
        task_id, display = self._announce(
            "task_started", name, task, scope, inputs=vertex_artifacts(inputs.artifacts)
        )
        inner = Scope(
            inputs=with_defaults(inputs, component),
            parent_id=task_id,
            path=[*scope.path, name],
            indices=scope.indices,
        )
        outcome = self.run_dag(component, inner)
        self._emit_end(task_id, display, outcome)
        return outcome

    def run_loop(
        self,
        name: str,
        task: dict[str, Any],
        component: dict[str, Any],
        inputs: TaskIO,
        scope: Scope,
    ) -> Outcome:
        task_id, display = self._announce("task_started", name, task, scope)
        try:
            items, item_input, of_artifacts = loop_items(task, inputs)
        except Exception as exc:
            outcome = Outcome(FAILED, error=f"{type(exc).__name__}: {exc}")
            self._record_failure(display, outcome.error or "")
            self._emit_end(task_id, display, outcome)
            return outcome
        limit = int((task.get("iteratorPolicy") or {}).get("parallelismLimit") or 0)
        workers = limit if limit > 0 else max(1, min(len(items), 64))

        def iteration(index: int) -> Outcome:
            values = TaskIO(dict(inputs.parameters), dict(inputs.artifacts))
            if of_artifacts:
                values.artifacts[item_input] = [items[index]]
            else:
                values.parameters[item_input] = items[index]
            inner = Scope(
                inputs=with_defaults(values, component),
                parent_id=task_id,
                path=[*scope.path, name, f"iteration-{index}"],
                indices=[*scope.indices, index],
            )
            return self.run_dag(component, inner)

        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(iteration, range(len(items))))
        if any(r.state == FAILED for r in results):
            outcome = Outcome(FAILED, error="an iteration failed")
        else:
            outcome = Outcome(SUCCEEDED, gathered(component, results))
        self._emit_end(task_id, display, outcome)
        return outcome

    # -- executor tasks ----------------------------------------------------------------------
    def run_executor(
        self,
        name: str,
        task: dict[str, Any],
        component: dict[str, Any],
        inputs: TaskIO,
        scope: Scope,
    ) -> Outcome:
        executor = self.executors[component["executorLabel"]]
        inputs = typed_inputs(with_defaults(inputs, component), component)
        task_id = self.new_id()
        display, unique = self.label(name, task, scope)
        system = self.system_placeholders(name, task_id)
        # the cache key sees the placeholders as written (a run's own name would defeat it)
        keyed = TaskIO(dict(inputs.parameters), inputs.artifacts)
        inputs.parameters = _resolve_system(inputs.parameters, system)
        with task_handler.task_slot():
            self.emit(
                "task_started",
                task_id=task_id,
                parent=scope.parent_id,
                task=display,
                unique=unique,
                inputs=vertex_artifacts(inputs.artifacts),
            )
            # the console's task log is the driver log's lines from here to the status line
            print(f"Executing task '{display}'", flush=True)
            if "importer" in executor:
                outcome = Outcome(
                    SUCCEEDED, TaskIO(artifacts=leaf.importer_outputs(executor["importer"], inputs))
                )
                self._emit_end(task_id, display, outcome, component)
                return outcome
            outcome = self._container(
                name,
                task,
                component,
                executor["container"],
                inputs,
                display,
                task_id,
                system,
                keyed,
            )
            # inside the slot: the recorded end comes before the next task's start
            self._emit_end(task_id, display, outcome, component)
        return outcome

    def system_placeholders(self, name: str, task_id: int) -> dict[str, str]:
        """Vertex's job placeholders and the task's own (`dsl.PIPELINE_TASK_NAME_PLACEHOLDER`)."""
        job = self.settings.job_name or "local-run"
        return {
            **self.settings.job_placeholders,
            "{{$.pipeline_task_name}}": name,
            "{{$.pipeline_task_uuid}}": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{job}/{task_id}")),
            "{{$.pipeline_job_uuid}}": str(uuid.uuid5(uuid.NAMESPACE_URL, job)),
        }

    def _container(
        self,
        name: str,
        task: dict[str, Any],
        component: dict[str, Any],
        container: dict[str, Any],
        inputs: TaskIO,
        display: str,
        task_id: int,
        system: dict[str, str],
        keyed: TaskIO,
    ) -> Outcome:
        task_uri = f"{self.settings.root_uri.rstrip('/')}/{name}_{task_id}"
        task_dir = Path(self.settings.storage.path(task_uri))
        planned = leaf.planned_outputs(component, task_uri)
        key = leaf.cache_key(keyed, component, container, task)
        cached = self._cached(task, key)
        if cached is not None:
            return Outcome(SKIPPED, cached)
        executor_input = leaf.executor_input(inputs, planned, component, task_dir)
        resolver = leaf.CommandResolver(executor_input, self.settings.storage, system)
        _prepare_folders(executor_input, self.settings.storage)
        command = resolver.resolve_all(
            [*(container.get("command") or []), *(container.get("args") or [])]
        )
        env = {
            e["name"]: resolver.resolve_text(str(e.get("value", "")))
            for e in container.get("env") or []
        }
        with _ResourceWatch(executor_input, lambda text: self._emit_resources(task_id, text)):
            result = self._with_retries(task, display, container.get("image", ""), command, env)
        if result.exit_code != 0:
            cause = result.error or f"the task exited with {result.exit_code}"
            self._record_failure(display, cause)
            return Outcome(FAILED, error=cause)
        produced = leaf.read_outputs(executor_input, component, self.settings.storage)
        self._store_cache(task, key, produced)
        return Outcome(SUCCEEDED, produced)

    def _with_retries(
        self,
        task: dict[str, Any],
        display: str,
        image: str,
        command: list[str],
        env: dict[str, str],
    ) -> task_handler.TaskResult:
        policy = task.get("retryPolicy") or {}
        tries = 1 + int(policy.get("maxRetryCount") or 0)
        delay = _seconds(policy.get("backoffDuration"))
        factor = float(policy.get("backoffFactor") or 2.0)
        cap = _seconds(policy.get("backoffMaxDuration")) or 3600.0
        for attempt in range(tries):
            result = task_handler.TaskProcess(display, image, command, env).run()
            if result.exit_code == 0 or attempt == tries - 1:
                return result
            wait = min(delay * factor**attempt, cap)
            print(
                f"[{display}] failed (try {attempt + 1} of {tries}); retrying in {wait:g} s",
                flush=True,
            )
            time.sleep(wait)
        return result

    # -- the cache ---------------------------------------------------------------------------
    def _cache_on(self, task: dict[str, Any]) -> bool:
        return self.settings.cache_dir is not None and bool(
            (task.get("cachingOptions") or {}).get("enableCache", False)
        )

    def _cache_entry(self, key: str) -> Path:
        """A fingerprint is looked up within the pipeline's name (`cacheutils/cache.go`,
        `GetExecutionCache`: fingerprint, pipelineName and namespace)."""
        assert self.settings.cache_dir is not None
        pipeline = (self.spec.get("pipelineInfo") or {}).get("name") or "pipeline"
        return self.settings.cache_dir / pipeline / f"{key}.json"

    def _cached(self, task: dict[str, Any], key: str) -> TaskIO | None:
        if not self._cache_on(task):
            return None
        entry = self._cache_entry(key)
        if not entry.is_file():
            return None
        stored = json.loads(entry.read_text())
        return TaskIO(stored.get("parameters", {}), stored.get("artifacts", {}))

    def _store_cache(self, task: dict[str, Any], key: str, produced: TaskIO) -> None:
        if not self._cache_on(task):
            return
        entry = self._cache_entry(key)
        entry.parent.mkdir(parents=True, exist_ok=True)
        temporary = entry.with_suffix(f".{threading.get_ident()}.tmp")
        temporary.write_text(
            json.dumps({"parameters": produced.parameters, "artifacts": produced.artifacts})
        )
        temporary.replace(entry)

    # -- events ------------------------------------------------------------------------------
    def _emit_resources(self, task_id: int, text: str) -> None:
        self.emit("task_resources", task_id=task_id, gcp_resources=text)

    def _record_failure(self, display: str, cause: str) -> None:
        self.failures.append((display, cause))
        self._failed.set()

    def _emit_end(
        self, task_id: int, display: str, outcome: Outcome, component: dict | None = None
    ) -> None:
        kind = {SUCCEEDED: "task_succeeded", SKIPPED: "task_cached"}.get(
            outcome.state, "task_failed"
        )
        if component is not None:
            print(f"Task '{display}' finished with status {outcome.state}", flush=True)
        fields: dict[str, Any] = {"task_id": task_id, "task": display}
        if outcome.state in DONE_OK:
            fields["outputs"] = vertex_artifacts(outcome.io.artifacts)
            fields["execution_metadata"] = {
                f"output:{k}": json_value(v) for k, v in outcome.io.parameters.items()
            }
        else:
            fields["error"] = outcome.error or "the task failed"
        self.emit(kind, **fields)


class _ResourceWatch:
    """While a task runs, its `gcp_resources` output file (GCPC's GcpResources JSON, written by
    the launcher or component as soon as its job exists: `vertexkit/runtime/gcp_resources.py`)
    is read every WATCH_SECONDS; each new content is reported, so the job's task detail names
    the running task's job before the task ends, as Vertex's console links a running task's
    job."""

    def __init__(self, executor_input: dict[str, Any], report: Callable[[str], None]) -> None:
        declared = executor_input["outputs"]["parameters"].get("gcp_resources") or {}
        self.path = Path(declared["outputFile"]) if declared.get("outputFile") else None
        self.report = report
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen = ""

    def __enter__(self) -> _ResourceWatch:
        if self.path is not None:
            self._thread = threading.Thread(target=self._watch, daemon=True, name="resources")
            self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(WATCH_SECONDS):
            self._check()

    def _check(self) -> None:
        assert self.path is not None
        try:
            text = self.path.read_text()
        except OSError:
            return
        if text.strip() and text != self._seen:
            try:
                json.loads(text)
            except ValueError:  # half written: the next look reads it whole
                return
            self._seen = text
            self.report(text)


def with_defaults(inputs: TaskIO, component: dict[str, Any]) -> TaskIO:
    """Inputs with the component's defaults where unset; an optional one stays unset."""
    declared = (component.get("inputDefinitions") or {}).get("parameters") or {}
    parameters = dict(inputs.parameters)
    for name, spec in declared.items():
        if name not in parameters and "defaultValue" in spec:
            parameters[name] = spec["defaultValue"]
    return TaskIO(parameters, dict(inputs.artifacts))


def typed_inputs(inputs: TaskIO, component: dict[str, Any]) -> TaskIO:
    declared = (component.get("inputDefinitions") or {}).get("parameters") or {}
    plain = {name: _plain(value) for name, value in inputs.parameters.items()}
    return TaskIO(leaf.typed_parameters(declared, plain), inputs.artifacts)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, Collected) else value


def loop_items(task: dict[str, Any], inputs: TaskIO) -> tuple[list[Any], str, bool]:
    """(the items, the iteration's input name, whether they are artifacts)."""
    if "artifactIterator" in task:
        iterator = task["artifactIterator"]
        name = iterator["items"]["inputArtifact"]
        return list(inputs.artifacts.get(name) or []), iterator["itemInput"], True
    iterator = task["parameterIterator"]
    items = iterator["items"]
    if "raw" in items:
        value: Any = json.loads(items["raw"])
    else:
        value = inputs.parameters[items["inputParameter"]]
        if isinstance(value, str):
            value = json.loads(value)
    if not isinstance(value, list):
        raise TypeError(f"ParallelFor items must be a list, got {type(value).__name__}")
    return value, iterator["itemInput"], False


def gathered(component: dict[str, Any], results: list[Outcome]) -> TaskIO:
    """A loop's outputs (`dsl.Collected`): every iteration's, an inner loop's flattened."""
    declared = (component.get("dag") or {}).get("outputs") or {}
    io = TaskIO()
    for name in declared.get("parameters") or {}:
        values = Collected()
        for result in results:
            if name in result.io.parameters:
                value = result.io.parameters[name]
                values.extend(value) if isinstance(value, Collected) else values.append(value)
        io.parameters[name] = values
    for name in declared.get("artifacts") or {}:
        io.artifacts[name] = [a for r in results for a in r.io.artifacts.get(name, [])]
    return io


_INPUT_IN_CONSTANT = re.compile(r"\{\{\$\.inputs\.parameters\['([^']+)'\]\}\}")


def _fill_input_placeholders(declared: dict[str, Any], values: dict[str, Any]) -> None:
    """A constant that holds the task's other inputs, as the KFP SDK compiles an f-string of
    pipeline channels (`f"{gcs_root}/data"` -> the constant
    `{{$.inputs.parameters['pipelinechannel--gcs_root']}}/data` beside that input), gets their
    values before the task runs, as Vertex does (and kfp.local, `placeholder_utils`)."""
    for name, spec in declared.items():
        if "runtimeValue" in spec and name in values:
            values[name] = _filled(values[name], values)


def _filled(value: Any, values: dict[str, Any]) -> Any:
    """`value` with the placeholders in its strings filled, in lists and structs too (a
    component's `args` list constant holds `{{$.inputs.parameters['pipelinechannel--x']}}`)."""
    if isinstance(value, str):
        if "{{$.inputs" not in value:
            return value
        return _INPUT_IN_CONSTANT.sub(lambda m: _as_text(values.get(m[1], m[0])), value)
    if isinstance(value, list):
        return [_filled(item, values) for item in value]
    if isinstance(value, dict):
        return {key: _filled(item, values) for key, item in value.items()}
    return value


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _constant(runtime_value: dict[str, Any]) -> Any:
    if "constant" in runtime_value:
        return runtime_value["constant"]
    old = runtime_value.get("constantValue") or {}  # the IR before KFP 2.0
    for key in ("stringValue", "intValue", "doubleValue"):
        if key in old:
            return int(old[key]) if key == "intValue" else old[key]
    return None


def _resolve_system(value: Any, system: dict[str, str]) -> Any:
    """Vertex's placeholders inside parameter values (`dsl.PIPELINE_JOB_NAME_PLACEHOLDER`)."""
    if isinstance(value, str):
        return placeholders.resolve(value, system)
    if isinstance(value, list):
        return [_resolve_system(v, system) for v in value]
    if isinstance(value, dict):
        return {k: _resolve_system(v, system) for k, v in value.items()}
    return value


def _prepare_folders(executor_input: dict[str, Any], storage: Storage) -> None:
    """The launcher makes each output's folder before the task runs (`launcher_v2.go`)."""
    outputs = executor_input["outputs"]
    Path(outputs["outputFile"]).parent.mkdir(parents=True, exist_ok=True)
    for entry in outputs["parameters"].values():
        Path(entry["outputFile"]).parent.mkdir(parents=True, exist_ok=True)
    for entry in outputs["artifacts"].values():
        for artifact in entry["artifacts"]:
            Path(storage.path(artifact["uri"])).parent.mkdir(parents=True, exist_ok=True)


def _seconds(duration: Any) -> float:
    """A protobuf Duration's JSON (`"3s"`, `"0.5s"`) in seconds."""
    if not duration:
        return 0.0
    return float(str(duration).rstrip("s") or 0)


def json_value(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def vertex_artifacts(artifacts: dict[str, ArtifactList]) -> dict[str, Any]:
    """Artifacts in PipelineTaskDetail's shape: `{name: {"artifacts": [Artifact]}}`."""
    return {
        name: {
            "artifacts": [
                {
                    "displayName": a["name"].rsplit("/", 1)[-1],
                    "uri": a["uri"],
                    "schemaTitle": a["type"]["schemaTitle"],
                    "schemaVersion": a["type"].get("schemaVersion", "0.0.1"),
                    "state": "LIVE",
                    "metadata": json_value(a.get("metadata") or {}),
                }
                for a in listed
            ]
        }
        for name, listed in artifacts.items()
    }
