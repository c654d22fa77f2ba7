"""Checks a pipeline before a run creates anything.

A pipeline run fails late and costs money when an input is wrong: the query and export tasks
would already have run. `check_pipeline` walks the compiled pipeline spec (nested DAGs of
`dsl.If`, `ParallelFor` and `ExitHandler` included), works out each task's inputs that are known
before the run (constants, pipeline parameters and component defaults) and applies the rules its
component applies at run time (`vertexkit.specs.inputs`), so a user's own pipeline built from
our components gets the same checks as the built-in ones. `check_data` then dry-runs the source
query. A failure is a `PreflightError` naming the pipeline parameter (or the task and input).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vertexkit.context import CloudContext
from vertexkit.specs import SpecError
from vertexkit.specs.inputs import check_component_inputs

FUNCTION_FLAG = "--function_to_execute"
PLACEHOLDER = "{{$"


class PreflightError(ValueError):
    pass


@dataclass(frozen=True)
class Known:
    """An input value known before the run, and the pipeline parameter it came from."""

    value: Any
    parameter: str | None = None


def check_pipeline(spec: dict[str, Any], values: dict[str, Any]) -> None:
    """Applies each task's component rules to its known inputs; raises PreflightError."""
    known = {name: Known(value, name) for name, value in values.items()}
    _check_dag(spec, spec.get("root") or {}, known)


def _check_dag(spec: dict[str, Any], component: dict[str, Any], known: dict[str, Known]) -> None:
    for task_name, task in ((component.get("dag") or {}).get("tasks") or {}).items():
        child = spec["components"][task["componentRef"]["name"]]
        inputs = _component_defaults(child) | _task_inputs(task, known)
        if "dag" in child:
            _check_dag(spec, child, inputs)
        else:
            _check_task(task_name, _our_function(spec, child), inputs)


def _component_defaults(component: dict[str, Any]) -> dict[str, Known]:
    declared = (component.get("inputDefinitions") or {}).get("parameters") or {}
    return {
        name: Known(definition["defaultValue"])
        for name, definition in declared.items()
        if "defaultValue" in definition
    }


def _task_inputs(task: dict[str, Any], known: dict[str, Known]) -> dict[str, Known]:
    inputs: dict[str, Known] = {}
    for name, source in ((task.get("inputs") or {}).get("parameters") or {}).items():
        if "componentInputParameter" in source:
            if source["componentInputParameter"] in known:
                inputs[name] = known[source["componentInputParameter"]]
        elif "runtimeValue" in source:
            constant = source["runtimeValue"].get("constant")
            if not (isinstance(constant, str) and PLACEHOLDER in constant):
                inputs[name] = Known(constant)
    return inputs


def _our_function(spec: dict[str, Any], component: dict[str, Any]) -> str | None:
    """The vertexkit component function an executor runs; None for any other component."""
    executors = (spec.get("deploymentSpec") or {}).get("executors") or {}
    container = (executors.get(component.get("executorLabel", "")) or {}).get("container") or {}
    args = list(container.get("args") or [])
    source = " ".join(str(part) for part in container.get("command") or [])
    if FUNCTION_FLAG not in args[:-1] or "from vertexkit" not in source:
        return None
    return args[args.index(FUNCTION_FLAG) + 1]


def _check_task(task_name: str, function: str | None, inputs: dict[str, Known]) -> None:
    if function is None:
        return
    try:
        check_component_inputs(function, {name: known.value for name, known in inputs.items()})
    except SpecError as exc:
        source = inputs.get(exc.field)
        where = f"task {task_name}, input {exc.field}"
        if source is not None and source.parameter:
            raise PreflightError(f"--param {source.parameter}: {exc.reason} ({where})") from None
        raise PreflightError(f"{where}: {exc.reason}") from None


def check_data(context: CloudContext, values: dict[str, Any]) -> None:
    """Online checks that create nothing: the source query dry-runs, the source table exists."""
    from google.api_core import exceptions
    from google.cloud import bigquery

    client = context.bigquery_client()
    location = values.get("bq_location") or None
    try:
        if values.get("source_query"):
            config = bigquery.QueryJobConfig(dry_run=True, use_query_cache=False)
            client.query(values["source_query"], job_config=config, location=location)
        if values.get("source_table"):
            client.get_table(values["source_table"])
    except (exceptions.BadRequest, exceptions.NotFound) as exc:
        name = "source_query" if values.get("source_query") else "source_table"
        reason = exc.errors[0].get("message") if exc.errors else exc.message.splitlines()[0]
        raise PreflightError(f"--param {name}: {reason}") from None
