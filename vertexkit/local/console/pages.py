"""The console's pages as HTML, built from resources (dicts) only: no I/O here.

Every value goes through `el`, which escapes it; links are built from resource names, which the
local cloud validated when it created them, and are escaped as attributes all the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from vertexkit.local.console import charts, dag, runs
from vertexkit.local.console.html import Markup, el, fragment
from vertexkit.local.console.logs import Chunk
from vertexkit.local.console.security import CSRF_FIELD
from vertexkit.local.kfp.runs import LABEL_RUN as KFP_RUN_LABEL

Resource = dict[str, Any]
ROOT = "/console"
NAV = [
    ("pipelines", "Pipelines"),
    ("training", "Training"),
    ("models", "Models"),
    ("endpoints", "Endpoints"),
    ("schedules", "Schedules"),
    ("bigquery", "BigQuery"),
    ("storage", "Storage"),
]


def resource_url(name: str, **query: str) -> str:
    url = f"{ROOT}/{quote(name, safe='/@-_.')}"
    return f"{url}?{urlencode(query)}" if query else url


def layout(title: str, active: str, *body: Any, live_url: str | None = None) -> Markup:
    nav = el(
        "nav",
        el("a", "vertexkit local console", href=f"{ROOT}/", class_="brand"),
        [
            el("a", label, href=f"{ROOT}/{key}", class_="active" if key == active else None)
            for key, label in NAV
        ],
    )
    document = el(
        "html",
        el(
            "head",
            el("meta", charset="utf-8"),
            el("title", f"{title} · vertexkit console"),
            el("link", rel="stylesheet", href=f"{ROOT}/static/console.css"),
            el("script", src=f"{ROOT}/static/console.js", defer=True),
        ),
        el("body", nav, el("main", el("h1", title), *body, data_live=live_url)),
        lang="en",
    )
    return Markup("<!doctype html>\n" + document)


def badge(state: str) -> Markup:
    short = runs.short_state(state)
    return el("span", short, class_=f"badge state-{short}")


def table(
    headers: list[str], rows: list[list[Any]], empty: str = "Nothing yet.", **attrs: Any
) -> Markup:
    if not rows:
        return el("p", empty, class_="empty")
    return el(
        "table",
        el("thead", el("tr", [el("th", h) for h in headers])),
        el("tbody", [el("tr", [el("td", cell) for cell in row]) for row in rows]),
        **attrs,
    )


def key_values(values: Resource, empty: str = "None.") -> Markup:
    rows = [[key, show_value(value)] for key, value in values.items()]
    return table(["name", "value"], rows, empty, class_="kv")


def show_value(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return el("code", json.dumps(value, sort_keys=True))
    return value


def action_form(action: str, label: str, token: str, danger: bool = False, **fields: str) -> Markup:
    """A POST form to a console action, carrying the CSRF token."""
    hidden = [el("input", type="hidden", name=k, value=v) for k, v in fields.items()]
    return el(
        "form",
        el("input", type="hidden", name=CSRF_FIELD, value=token),
        hidden,
        el("button", label, type="submit", class_="danger" if danger else None),
        method="post",
        action=f"{ROOT}/actions/{action}",
        class_="action",
    )


# -- pipeline runs --------------------------------------------------------------------------------
def runs_list(jobs: list[Resource], schedules: dict[str, str]) -> Markup:
    """The runs, each with a checkbox: Compare sends the checked ones (a GET, nothing changes)."""
    rows = [[compare_box(job), *run_row(job, schedules)] for job in jobs]
    headers = ["", "run", "pipeline", "state", "started", "duration", "schedule"]
    form = el(
        "form",
        el("div", el("button", "Compare selected runs", type="submit"), class_="toolbar")
        if jobs
        else None,
        table(headers, rows, "No pipeline runs yet.", class_="runs"),
        method="get",
        action=f"{ROOT}/compare",
        class_="compare-runs",
    )
    return layout("Pipeline runs", "pipelines", form)


def compare_box(job: Resource) -> Markup:
    label = f"select {job.get('displayName') or runs.job_id(job)} to compare"
    return el("input", type="checkbox", name="run", value=job["name"], aria_label=label)


def run_row(job: Resource, schedules: dict[str, str]) -> list[Any]:
    schedule = job.get("scheduleName")
    return [
        el("a", job.get("displayName") or runs.job_id(job), href=resource_url(job["name"])),
        runs.pipeline_name(job),
        badge(job.get("state", "")),
        runs.when(job.get("startTime") or job.get("createTime")),
        runs.duration(job),
        el("a", schedules.get(schedule, schedule), href=resource_url(schedule)) if schedule else "",
    ]


@dataclass
class TaskView:
    """What the task panel needs besides the job: its log and how to show artifacts."""

    name: str
    log: str = ""
    artifact_text: dict[str, str] = field(default_factory=dict)  # uri -> preview text


def run_page(job: Resource, token: str, task: TaskView | None = None, schedule: str = "") -> Markup:
    graph = dag.build_graph(job.get("pipelineSpec") or {})
    states = runs.task_states(job)
    links = {name: resource_url(job["name"], task=name) for name in graph.nodes}
    values: Resource = {
        "pipeline": runs.pipeline_name(job),
        "state": badge(job.get("state", "")),
        "created": runs.when(job.get("createTime")),
        "started": runs.when(job.get("startTime")),
        "duration": el("span", runs.duration(job), id="run-duration"),
        "schedule": schedule,
        "error": (job.get("error") or {}).get("message", ""),
    }
    kfp_run = (job.get("labels") or {}).get(KFP_RUN_LABEL)
    if kfp_run:  # a run of the local KFP API: this job is what runs it
        values["KFP run"] = el("a", kfp_run, href=f"/apis/v2beta1/runs/{kfp_run}")
    summary = key_values(values)
    cancel = (
        action_form("cancel", "Cancel run", token, danger=True, name=job["name"])
        if runs.is_running(job)
        else None
    )
    retry = (
        action_form("retry", "Retry", token, name=job["name"])
        if job.get("state") in runs.RETRYABLE_STATES
        else None
    )
    body = [
        el(
            "div",
            el("span", "state ", badge(job.get("state", "")), id="run-state"),
            cancel,
            retry,
            class_="toolbar",
        ),
        el(
            "div",
            el(
                "section", dag.draw(graph, states, links, task.name if task else ""), class_="graph"
            ),
            el(
                "section",
                task_panel(job, task) if task else el("p", "Select a task.", class_="empty"),
                class_="panel",
            ),
            class_="run",
        ),
        el("h2", "Run"),
        summary,
        el("h2", "Pipeline parameters"),
        key_values(runs.pipeline_parameters(job)),
    ]
    live = resource_url(job["name"]) + "/state.json" if runs.is_running(job) else None
    return layout(job.get("displayName") or runs.job_id(job), "pipelines", *body, live_url=live)


def task_panel(job: Resource, view: TaskView) -> Markup:
    detail = runs.task_details(job).get(view.name, {})
    parameters, input_artifacts = runs.task_inputs(job, view.name)
    outputs = runs.output_parameters(detail)
    gcp = outputs.pop("gcp_resources", None)
    sections = [
        el("h2", view.name),
        key_values(
            {
                "state": badge(detail.get("state", "PENDING")),
                "started": runs.when(detail.get("startTime")),
                "duration": runs.duration(detail),
                "error": (detail.get("error") or {}).get("message", ""),
            }
        ),
        el("h3", "Parameters"),
        key_values(parameters),
        el("h3", "Output artifacts"),
        artifact_list(
            {k: v.get("artifacts") or [] for k, v in (detail.get("outputs") or {}).items()}, view
        ),
        el("h3", "Output parameters"),
        key_values(outputs),
        el("h3", "Input artifacts"),
        artifact_list(input_artifacts, view),
    ]
    if gcp:
        sections += [el("h3", "Cloud resources"), gcp_resources(gcp)]
    sections += [
        el("h3", "Log"),
        el("pre", view.log or "No log lines for this task.", class_="log"),
    ]
    return fragment(sections)


def gcp_resources(value: Any) -> Markup:
    rows = [
        [kind, el("a", uri, href=resource_url(local)) if local else uri]
        for kind, uri, local in runs.gcp_resource_links(value)
    ]
    return table(["type", "resource"], rows, class_="gcp-resources")


def artifact_list(artifacts: dict[str, list[Resource]], view: TaskView) -> Markup:
    items = [
        el(
            "div",
            el("h4", name, " ", el("small", a.get("schemaTitle", ""))),
            el("p", el("code", a.get("uri", ""))),
            artifact_body(a, view),
            class_="artifact",
        )
        for name, listed in artifacts.items()
        for a in listed
    ]
    return fragment(items) if items else el("p", "None.", class_="empty")


def artifact_body(artifact: Resource, view: TaskView) -> Markup:
    schema = artifact.get("schemaTitle", "")
    metadata = artifact.get("metadata") or {}
    uri = artifact.get("uri", "")
    if schema == "system.Metrics":
        return key_values({k: v for k, v in metadata.items() if k != "display_name"})
    if schema == "system.ClassificationMetrics":
        labels, rows = charts.classification_parts(metadata)
        roc = charts.roc_points(metadata)
        return el(
            "div",
            charts.confusion_matrix(labels, rows) if rows else None,
            charts.roc_curve(roc) if roc else None,
            class_="charts",
        )
    if schema in ("system.HTML", "system.Markdown"):
        kind = "html" if schema == "system.HTML" else "text"  # Markdown is shown as its text
        # Untrusted: served under CSP sandbox and framed with every sandbox flag off.
        return el(
            "iframe",
            src=f"{ROOT}/artifact?{urlencode({'uri': uri, 'type': kind})}",
            sandbox="",
            class_="artifact-frame",
            title=artifact.get("displayName", "artifact"),
        )
    preview = view.artifact_text.get(uri)
    return fragment(
        key_values(metadata, "No metadata."),
        el("pre", preview, class_="preview") if preview else None,
    )


# -- model registry and endpoints -----------------------------------------------------------------
def model_title(model: Resource, versions: list[Resource]) -> str:
    """A model's display name is its versions' (the registry keeps it per version): the
    `default` version's, else the latest's."""
    default = (model.get("aliases") or {}).get("default")
    chosen = next((v for v in versions if v.get("versionId") == default), None)
    chosen = chosen or (versions[-1] if versions else {})
    return chosen.get("displayName") or model["name"].rsplit("/", 1)[-1]


def models_list(models: list[tuple[Resource, list[Resource]]]) -> Markup:
    rows = [
        [
            el("a", model_title(model, versions), href=resource_url(model["name"])),
            model["name"],
            len(versions),
            ", ".join(f"{a}→{v}" for a, v in sorted(model.get("aliases", {}).items())),
        ]
        for model, versions in models
    ]
    return layout(
        "Model Registry",
        "models",
        table(["model", "resource", "versions", "aliases"], rows, "No models yet."),
    )


def model_page(
    model: Resource, versions: list[Resource], evaluations: dict[str, list[Resource]]
) -> Markup:
    rows = [
        [
            el("strong", v.get("versionId", "")),
            el(
                "span", [el("span", alias, class_="alias") for alias in v.get("versionAliases", [])]
            ),
            runs.when(v.get("versionCreateTime") or v.get("createTime")),
            v.get("artifactUri", ""),
            fragment(
                [
                    el(
                        "a",
                        d.get("endpoint", "").rsplit("/", 1)[-1],
                        href=resource_url(d.get("endpoint", "")),
                    )
                    for d in v.get("deployedModels", [])
                ]
            ),
        ]
        for v in versions
    ]
    sections = [
        table(
            ["version", "aliases", "created", "artifact", "deployed to"], rows, class_="versions"
        ),
    ]
    for version in versions:
        for evaluation in evaluations.get(version.get("versionId", ""), []):
            sections += evaluation_section(version, evaluation)
    return layout(model_title(model, versions), "models", *sections)


def evaluation_section(version: Resource, evaluation: Resource) -> list[Markup]:
    metrics = evaluation.get("metrics") or {}
    labels, rows = charts.classification_parts(metrics)
    roc = charts.roc_points(metrics)  # Vertex's `confidenceMetrics`, as KFP's artifact names it
    scalars = {k: v for k, v in metrics.items() if not isinstance(v, (dict, list))}
    return [
        el(
            "h2",
            f"Evaluation of version {version.get('versionId', '')}: ",
            evaluation.get("displayName", ""),
        ),
        key_values(scalars),
        el(
            "div",
            charts.confusion_matrix(labels, rows) if rows else None,
            charts.roc_curve(roc) if roc else None,
            class_="charts",
        ),
    ]


def endpoints_list(endpoints: list[Resource]) -> Markup:
    rows = [
        [
            el("a", e.get("displayName", ""), href=resource_url(e["name"])),
            e["name"],
            len(e.get("deployedModels") or []),
            traffic_text(e),
        ]
        for e in endpoints
    ]
    return layout(
        "Endpoints",
        "endpoints",
        table(["endpoint", "resource", "deployed models", "traffic"], rows, "No endpoints yet."),
    )


def traffic_text(endpoint: Resource) -> str:
    return ", ".join(f"{k}: {v}%" for k, v in sorted((endpoint.get("trafficSplit") or {}).items()))


def endpoint_page(
    endpoint: Resource,
    token: str,
    instances: str = "",
    result: Resource | None = None,
    error: str = "",
) -> Markup:
    split = endpoint.get("trafficSplit") or {}
    rows = [
        [
            d.get("id", ""),
            d.get("displayName", ""),
            el(
                "a",
                f"{d.get('model', '')}@{d.get('modelVersionId', '')}",
                href=resource_url(d.get("model", "")),
            ),
            f"{split.get(d.get('id', ''), 0)}%",
        ]
        for d in endpoint.get("deployedModels") or []
    ]
    form = el(
        "form",
        el("input", type="hidden", name=CSRF_FIELD, value=token),
        el("input", type="hidden", name="name", value=endpoint["name"]),
        el("label", "Instances (a JSON list)", for_="instances"),
        el("textarea", instances or "[]", name="instances", id="instances", rows="5"),
        el("button", "Predict", type="submit"),
        method="post",
        action=f"{ROOT}/actions/predict",
        class_="predict",
    )
    outcome = None
    if result is not None:
        outcome = el("pre", json.dumps(result, indent=2, sort_keys=True), id="prediction")
    elif error:
        outcome = el("p", error, class_="error", id="prediction-error")
    return layout(
        endpoint.get("displayName", endpoint["name"]),
        "endpoints",
        el("p", el("code", endpoint["name"])),
        el("h2", "Deployed models"),
        table(["id", "name", "model version", "traffic"], rows, "Nothing deployed."),
        el("h2", "Test the endpoint"),
        form,
        outcome,
    )


# -- training, tuning, schedules ------------------------------------------------------------------
def jobs_list(
    custom: list[Resource], tuning: list[Resource], pipelines: Markup | None = None
) -> Markup:
    """Custom and tuning jobs; `pipelines` is the training pipelines' section, when given."""

    def rows(jobs: list[Resource]) -> list[list[Any]]:
        return [
            [
                el("a", j.get("displayName", ""), href=resource_url(j["name"])),
                badge(j.get("state", "")),
                runs.when(j.get("createTime")),
                runs.duration(j),
            ]
            for j in jobs
        ]

    headers = ["job", "state", "created", "duration"]
    return layout(
        "Training",
        "training",
        el("h2", "Custom jobs"),
        table(headers, rows(custom), "No custom jobs yet."),
        el("h2", "Hyperparameter tuning jobs"),
        table(headers, rows(tuning), "No tuning jobs yet."),
        pipelines,
    )


def worker_pools(spec: Resource) -> Markup:
    rows = [
        [
            i,
            (p.get("machineSpec") or {}).get("machineType", ""),
            (p.get("machineSpec") or {}).get("acceleratorType", ""),
            (p.get("machineSpec") or {}).get("acceleratorCount", ""),
            p.get("replicaCount", ""),
        ]
        for i, p in enumerate(spec.get("workerPoolSpecs") or [])
    ]
    return table(["pool", "machine", "accelerator", "count", "replicas"], rows)


def log_sections(logs: list[Chunk], logs_url: str | None = None) -> Markup:
    """Each log file's tail; with `logs_url` (the job runs) the script appends new lines."""
    sections: list[Markup] = []
    for chunk in logs:
        sections += log_section(chunk)
    return el(
        "section",
        el("h2", "Logs"),
        el("p", "No logs yet.", class_="empty") if not logs else None,
        sections,
        id="logs",
        data_logs=logs_url,
    )


def log_section(chunk: Chunk) -> list[Markup]:
    skipped = f"… ({chunk.skipped} earlier bytes not shown)\n" if chunk.skipped else ""
    return [
        el("h3", chunk.file),
        el(
            "pre", skipped + chunk.text, class_="log", data_log=chunk.file, data_offset=chunk.offset
        ),
    ]


def job_summary(job: Resource, **more: Any) -> Markup:
    return key_values(
        {
            "state": el("span", badge(job.get("state", "")), id="job-state"),
            **more,
            "created": runs.when(job.get("createTime")),
            "duration": runs.duration(job),
            "error": (job.get("error") or {}).get("message", ""),
        }
    )


def custom_job_page(
    job: Resource, logs: list[Chunk] | None = None, logs_url: str | None = None
) -> Markup:
    return layout(
        job.get("displayName", job["name"]),
        "training",
        job_summary(job),
        el("h2", "Worker pools"),
        worker_pools(job.get("jobSpec") or {}),
        log_sections(logs or [], logs_url),
    )


def trial_metric(trial: Resource) -> float | None:
    metrics = (trial.get("finalMeasurement") or {}).get("metrics") or []
    return float(metrics[0]["value"]) if metrics and "value" in metrics[0] else None


def best_trial(job: Resource) -> str | None:
    goal = (((job.get("studySpec") or {}).get("metrics") or [{}])[0]).get("goal", "MAXIMIZE")
    scored = [
        (trial_metric(t), t["id"]) for t in job.get("trials") or [] if trial_metric(t) is not None
    ]
    if not scored:
        return None
    pick = max if goal == "MAXIMIZE" else min
    return pick(scored, key=lambda pair: pair[0])[1]


def tuning_job_page(
    job: Resource, logs: list[Chunk] | None = None, logs_url: str | None = None
) -> Markup:
    best = best_trial(job)
    trials = job.get("trials") or []
    rows = [
        [
            el("strong", t["id"]) if t["id"] == best else t["id"],
            badge(t.get("state", "")),
            ", ".join(
                f"{p.get('parameterId')}={p.get('value')}" for p in t.get("parameters") or []
            ),
            trial_metric(t),
            "best" if t["id"] == best else "",
        ]
        for t in trials
    ]
    values = [(t["id"], m) for t in trials if (m := trial_metric(t)) is not None]
    metric = ((job.get("studySpec") or {}).get("metrics") or [{}])[0]
    return layout(
        job.get("displayName", job["name"]),
        "training",
        job_summary(job, metric=f"{metric.get('metricId', '')} ({metric.get('goal', '')})"),
        el("h2", "Trials"),
        charts.trial_chart(values, best),
        table(
            ["trial", "state", "parameters", "metric", ""], rows, "No trials yet.", class_="trials"
        ),
        el("h2", "Worker pools"),
        worker_pools(job.get("trialJobSpec") or {}),
        log_sections(logs or [], logs_url),
    )


def schedules_list(schedules: list[Resource], token: str) -> Markup:
    rows = []
    for s in schedules:
        state = s.get("state", "")
        act = ("pause", "Pause") if state == "ACTIVE" else ("resume", "Resume")
        rows.append(
            [
                el("a", s.get("displayName", ""), href=resource_url(s["name"])),
                s.get("cron", ""),
                badge(state),
                runs.when(s.get("nextRunTime")),
                s.get("startedRunCount", "0"),
                action_form(act[0], act[1], token, name=s["name"])
                if state in ("ACTIVE", "PAUSED")
                else "",
            ]
        )
    decisions = el(
        "p",
        el("a", "Retraining decisions", href=f"{ROOT}/decisions", id="decisions-link"),
        ": champion vs challenger over time, from the retraining pipeline's decision table.",
    )
    return layout(
        "Schedules",
        "schedules",
        table(["schedule", "cron", "state", "next run", "runs", ""], rows, "No schedules yet."),
        decisions,
    )


def schedule_page(schedule: Resource, jobs: list[Resource], token: str) -> Markup:
    return layout(
        schedule.get("displayName", schedule["name"]),
        "schedules",
        key_values(
            {
                "state": badge(schedule.get("state", "")),
                "cron": schedule.get("cron", ""),
                "next run": runs.when(schedule.get("nextRunTime")),
                "runs started": schedule.get("startedRunCount", "0"),
            }
        ),
        el("h2", "Runs"),
        table(
            ["run", "pipeline", "state", "started", "duration", "schedule"],
            [run_row(j, {}) for j in jobs],
            "No runs yet.",
        ),
    )


def error_page(status: int, message: str) -> Markup:
    return layout(f"Error {status}", "", el("p", message, class_="error"))
