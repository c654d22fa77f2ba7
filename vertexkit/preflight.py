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

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from vertexkit.context import CloudContext
from vertexkit.specs import SpecError
from vertexkit.specs.inputs import check_component_inputs

FUNCTION_FLAG = "--function_to_execute"
PLACEHOLDER = "{{$"
TIMEOUT_S = 60  # a dry run plans the query; a large local table may take a few seconds


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
    """Online checks that create nothing: the source query dry-runs, the source table exists.

    Two calls of BigQuery's REST API on the local cloud (a local run's only target), made here
    rather than through google-cloud-bigquery: that client imports pandas and pyarrow, half a
    second of CPU on the run's start, for a dry run (`jobs.insert` with `dryRun`, as the
    client's `query` sends it) and a `tables.get`."""
    name = "source_query" if values.get("source_query") else "source_table"
    try:
        if values.get("source_query"):
            _dry_run(context, values["source_query"], values.get("bq_location") or None)
        if values.get("source_table"):
            _get_table(context, values["source_table"])
    except _Refused as exc:
        raise PreflightError(f"--param {name}: {exc}") from None


class _Refused(Exception):
    """A 400 or 404 from BigQuery: its first error's message."""


def _dry_run(context: CloudContext, query: str, location: str | None) -> None:
    reference = {"projectId": context.project, **({"location": location} if location else {})}
    body = {
        "jobReference": reference,
        "configuration": {
            "query": {"query": query, "useLegacySql": False, "useQueryCache": False},
            "dryRun": True,
        },
    }
    _bigquery(context, "POST", f"projects/{context.project}/jobs", body)


def _get_table(context: CloudContext, table: str) -> None:
    """`tables.get` of `[PROJECT.]DATASET.TABLE` (the project defaults to the context's)."""
    parts = table.rsplit(".", 2)
    if len(parts) < 2:
        raise _Refused(f"{table!r} is not a table: give DATASET.TABLE or PROJECT.DATASET.TABLE")
    project, dataset, name = (
        urllib.parse.quote(part, safe="")
        for part in ([context.project] if len(parts) == 2 else []) + parts
    )
    _bigquery(context, "GET", f"projects/{project}/datasets/{dataset}/tables/{name}")


def _bigquery(context: CloudContext, method: str, path: str, body: Any = None) -> None:
    url = f"{(context.bigquery_endpoint or '').rstrip('/')}/bigquery/v2/{path}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S):
            return
    except urllib.error.HTTPError as exc:
        if exc.code not in (400, 404):
            raise
        error = json.loads(exc.read() or b"{}").get("error") or {}
        reasons = error.get("errors") or [{}]
        raise _Refused(reasons[0].get("message") or error.get("message", exc.reason)) from None
