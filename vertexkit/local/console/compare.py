"""Compare pipeline runs: parameters and metrics side by side, differing rows highlighted.

Metrics come from each run's `system.Metrics` artifacts (one row per scalar, named
`task.output.key`) and `system.ClassificationMetrics` artifacts (a confusion matrix per run),
read from `jobDetail.taskDetails` as the run page reads them.
"""

from __future__ import annotations

import json
from typing import Any

from vertexkit.local.console import charts, runs
from vertexkit.local.console.html import Markup, el
from vertexkit.local.console.pages import badge, layout, resource_url

Resource = dict[str, Any]
MIN_RUNS, MAX_RUNS = 2, 10
MISSING = "—"


def run_metrics(job: Resource) -> dict[str, Any]:
    """`task.output.key` -> value, for every scalar of the run's Metrics artifacts."""
    found = {}
    for task, detail in sorted(runs.task_details(job).items()):
        for output, artifact in output_artifacts(detail, "system.Metrics"):
            for key, value in sorted((artifact.get("metadata") or {}).items()):
                if key != "display_name" and not isinstance(value, (dict, list)):
                    found[f"{task}.{output}.{key}"] = value
    return found


def run_confusion_matrices(job: Resource) -> dict[str, tuple[list[str], list[list[float]]]]:
    """`task.output` -> (labels, rows) of the run's ClassificationMetrics artifacts."""
    found = {}
    for task, detail in sorted(runs.task_details(job).items()):
        for output, artifact in output_artifacts(detail, "system.ClassificationMetrics"):
            labels, rows = charts.classification_parts(artifact.get("metadata") or {})
            if rows:
                found[f"{task}.{output}"] = (labels, rows)
    return found


def output_artifacts(detail: Resource, schema: str) -> list[tuple[str, Resource]]:
    return [
        (output, artifact)
        for output, listed in sorted((detail.get("outputs") or {}).items())
        for artifact in listed.get("artifacts") or []
        if artifact.get("schemaTitle") == schema
    ]


def side_by_side(values: list[dict[str, Any]]) -> list[tuple[str, list[Any], bool]]:
    """(key, each run's value, whether they differ), keys in first-seen order."""
    keys = list(dict.fromkeys(key for per_run in values for key in per_run))
    rows = []
    for key in keys:
        cells = [per_run.get(key, MISSING) for per_run in values]
        shown = {json.dumps(cell, sort_keys=True, default=str) for cell in cells}
        rows.append((key, cells, len(shown) > 1))
    return rows


def comparison_table(headers: list[Any], rows: list[tuple[str, list[Any], bool]]) -> Markup:
    if not rows:
        return el("p", "None.", class_="empty")
    body = [
        el(
            "tr",
            el("th", key, scope="row"),
            [el("td", show(cell)) for cell in cells],
            class_="differs" if differs else None,
        )
        for key, cells, differs in rows
    ]
    return el(
        "table",
        el("thead", el("tr", el("th", ""), [el("th", h) for h in headers])),
        el("tbody", body),
        class_="compare",
    )


def show(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return el("code", json.dumps(value, sort_keys=True))
    return value


def matrices_table(headers: list[Any], jobs: list[Resource]) -> Markup:
    per_run = [run_confusion_matrices(job) for job in jobs]
    keys = list(dict.fromkeys(key for matrices in per_run for key in matrices))
    rows = [
        (key, [charts.confusion_matrix(*m[key]) if key in m else MISSING for m in per_run], False)
        for key in keys
    ]
    return comparison_table(headers, rows)


def run_header(job: Resource) -> Markup:
    """The run's name and, beneath it, its id: runs of one pipeline share a display name."""
    return el(
        "a",
        job.get("displayName") or runs.job_id(job),
        el("br"),
        el("small", runs.job_id(job)),
        href=resource_url(job["name"]),
    )


def compare_page(jobs: list[Resource]) -> Markup:
    headers = [run_header(job) for job in jobs]
    summary = [
        ("pipeline", [runs.pipeline_name(j) for j in jobs]),
        ("state", [badge(j.get("state", "")) for j in jobs]),
        ("started", [runs.when(j.get("startTime")) for j in jobs]),
        ("duration", [runs.duration(j) for j in jobs]),
    ]
    return layout(
        f"Compare {len(jobs)} runs",
        "pipelines",
        comparison_table(headers, [(k, cells, False) for k, cells in summary]),
        el("p", "Highlighted rows differ between the runs.", class_="empty"),
        el("h2", "Parameters"),
        comparison_table(headers, side_by_side([runs.pipeline_parameters(j) for j in jobs])),
        el("h2", "Metrics"),
        comparison_table(headers, side_by_side([run_metrics(j) for j in jobs])),
        el("h2", "Confusion matrices"),
        matrices_table(headers, jobs),
    )


def checked_run_names(names: list[str]) -> list[str]:
    """The `run` query values: 2 to 10 distinct runs, in the order given. Raises ValueError
    naming the field."""
    distinct = list(dict.fromkeys(n for n in names if n))
    if not MIN_RUNS <= len(distinct) <= MAX_RUNS:
        raise ValueError(
            f"run: select {MIN_RUNS} to {MAX_RUNS} different runs to compare (got {len(distinct)})."
        )
    not_runs = [n for n in distinct if "/pipelineJobs/" not in n]
    if not_runs:
        raise ValueError(f"run: {not_runs[0]!r} is not a pipeline job name.")
    return distinct
