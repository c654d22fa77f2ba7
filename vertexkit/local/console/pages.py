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


def task_badge(state: str) -> Markup:
    """A task's state in Vertex's words (Cached, Not triggered, ...), its class the state."""
    return el("span", runs.task_label(state), class_=f"badge state-{state}", data_state=state)


def typed_values(values: dict[str, tuple[Any, str]], empty: str = "None.", **attrs: Any) -> Markup:
    """Parameters with their declared types (`NUMBER_INTEGER` shown as `int`, ...)."""
    rows = [
        [key, el("span", PARAMETER_TYPES.get(kind, kind.lower()), class_="type"), show_value(value)]
        for key, (value, kind) in values.items()
    ]
    return table(["name", "type", "value"], rows, empty, **{"class_": "kv params", **attrs})


PARAMETER_TYPES = {
    "NUMBER_INTEGER": "int",
    "NUMBER_DOUBLE": "float",
    "STRING": "str",
    "BOOLEAN": "bool",
    "LIST": "list",
    "STRUCT": "dict",
    "TASK_FINAL_STATUS": "PipelineTaskFinalStatus",
}


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
    if isinstance(value, bool):
        return "true" if value else "false"
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
@dataclass(frozen=True)
class RunFilter:
    """The runs list's filter: a run state (`SUCCEEDED`, ...) and a pipeline name; "" is any."""

    state: str = ""
    pipeline: str = ""

    def keeps(self, job: Resource) -> bool:
        state_ok = not self.state or runs.short_state(job.get("state", "")) == self.state
        return state_ok and (not self.pipeline or runs.pipeline_name(job) == self.pipeline)


RUN_STATES = ("RUNNING", "PENDING", "SUCCEEDED", "FAILED", "CANCELLING", "CANCELLED")


def select(name: str, label: str, options: list[str], chosen: str) -> Markup:
    return el(
        "label",
        label,
        " ",
        el(
            "select",
            el("option", "any", value=""),
            [el("option", o, value=o, selected=o == chosen or None) for o in options],
            name=name,
            id=f"filter-{name}",
        ),
    )


def run_filter_form(jobs: list[Resource], wanted: RunFilter) -> Markup:
    pipelines = sorted({runs.pipeline_name(job) for job in jobs} - {""})
    return el(
        "form",
        select("state", "State", list(RUN_STATES), wanted.state),
        select("pipeline", "Pipeline", pipelines, wanted.pipeline),
        el("button", "Filter", type="submit"),
        el("a", "clear", href=f"{ROOT}/pipelines") if wanted != RunFilter() else None,
        method="get",
        action=f"{ROOT}/pipelines",
        class_="toolbar run-filter",
    )


def runs_list(
    jobs: list[Resource], schedules: dict[str, str], wanted: RunFilter | None = None
) -> Markup:
    """The runs, each with a checkbox: Compare sends the checked ones (a GET, nothing changes)."""
    wanted = wanted or RunFilter()
    shown = [job for job in jobs if wanted.keeps(job)]
    rows = [[compare_box(job), *run_row(job, schedules)] for job in shown]
    headers = ["", "run", "pipeline", "state", "started", "duration", "schedule"]
    empty = "No pipeline runs yet." if not jobs else "No run matches the filter."
    form = el(
        "form",
        el("div", el("button", "Compare selected runs", type="submit"), class_="toolbar")
        if shown
        else None,
        table(headers, rows, empty, class_="runs"),
        method="get",
        action=f"{ROOT}/compare",
        class_="compare-runs",
    )
    count = el("p", f"{len(shown)} of {len(jobs)} runs", class_="count") if jobs else None
    return layout("Pipeline runs", "pipelines", run_filter_form(jobs, wanted), count, form)


def compare_box(job: Resource) -> Markup:
    label = f"select {job.get('displayName') or runs.job_id(job)} to compare"
    return el("input", type="checkbox", name="run", value=job["name"], aria_label=label)


def run_title(job: Resource) -> Markup:
    """A run as the list shows it: its display name, and its own ID under it (runs of one
    pipeline often share a display name; the ID is each run's own)."""
    ident = runs.job_id(job)
    shown = job.get("displayName") or ident
    return fragment(
        el("a", shown, href=resource_url(job["name"]), class_="run-name"),
        el("br"),
        el("small", ident, class_="run-id") if shown != ident else None,
    )


def run_row(job: Resource, schedules: dict[str, str]) -> list[Any]:
    schedule = job.get("scheduleName")
    return [
        run_title(job),
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
    states = runs.shown_task_states(job, graph.nodes)
    links = {name: resource_url(job["name"], task=name) for name in graph.nodes}
    error = runs.run_error(job)
    values: Resource = {
        "run": el("code", runs.job_id(job)),
        "pipeline": runs.pipeline_name(job),
        "state": badge(job.get("state", "")),
        "created": runs.when(job.get("createTime")),
        "started": runs.when(job.get("startTime")),
        "duration": el("span", runs.duration(job), id="run-duration"),
        "schedule": schedule,
        "error": error,
    }
    kfp_run = (job.get("labels") or {}).get(KFP_RUN_LABEL)
    if kfp_run:  # a run of the local KFP API: this job is what runs it
        values["KFP run"] = el("a", kfp_run, href=f"/apis/v2beta1/runs/{kfp_run}")
    summary = key_values(values)
    failed = runs.failed_tasks(job)
    top_error = (
        el(
            "p",
            el("strong", "Run failed: "),
            error,
            " ",
            [
                el("a", f"open {name}", href=resource_url(job["name"], task=name))
                for name, _ in failed[:1]
            ],
            class_="error",
            id="run-error",
        )
        if error
        else None
    )
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
        top_error,
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
        typed_values(runs.typed_pipeline_parameters(job), id="pipeline-parameters"),
    ]
    live = resource_url(job["name"]) + "/state.json" if runs.is_running(job) else None
    return layout(job.get("displayName") or runs.job_id(job), "pipelines", *body, live_url=live)


def task_panel(job: Resource, view: TaskView) -> Markup:
    detail = runs.task_details(job).get(view.name, {})
    _, input_artifacts = runs.task_inputs(job, view.name)
    input_artifacts = {
        k: v for k, v in input_artifacts.items() if not k.startswith(runs.CHANNEL_PREFIX)
    }
    outputs = runs.typed_output_parameters(job, view.name)
    gcp = outputs.pop("gcp_resources", (None, ""))[0]
    state = runs.shown_task_states(job, [view.name])[view.name]
    sections = [
        el("h2", view.name),
        key_values(
            {
                "state": task_badge(state),
                "started": runs.when(detail.get("startTime")),
                "duration": runs.duration(detail),
                "error": (detail.get("error") or {}).get("message", ""),
            }
        ),
        el("h3", "Parameters"),
        typed_values(runs.task_parameters(job, view.name), id="task-parameters"),
        el("h3", "Output artifacts"),
        artifact_list(
            {k: v.get("artifacts") or [] for k, v in (detail.get("outputs") or {}).items()}, view
        ),
        el("h3", "Output parameters"),
        typed_values(outputs),
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
    resource = metadata.get("resourceName")
    link = (
        el("p", el("a", f"open {resource}", href=resource_url(resource.split("@", 1)[0]),
                   class_="resource-link"))
        if isinstance(resource, str) and ("/models/" in resource or "/endpoints/" in resource)
        else None
    )  # fmt: skip
    return fragment(
        link,
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


def producer_link(producer: Any) -> Markup | str:
    """`run (ID) · task`, each a link: the pipeline run and the task in it that made it."""
    if producer is None:
        return ""
    return el(
        "span",
        el("a", producer.run_label, href=resource_url(producer.run), class_="run-link"),
        " · task ",
        el("a", producer.task, href=resource_url(producer.run, task=producer.task),
           class_="task-link"),
        class_="made-by",
    )  # fmt: skip


def model_page(
    model: Resource,
    versions: list[Resource],
    evaluations: dict[str, list[Resource]],
    made_by: dict[str, Any] | None = None,
    endpoint_names: dict[str, str] | None = None,
) -> Markup:
    made_by = made_by or {}
    endpoint_names = endpoint_names or {}
    rows = [
        [
            el("strong", v.get("versionId", "")),
            el(
                "span", [el("span", alias, class_="alias") for alias in v.get("versionAliases", [])]
            ),
            runs.when(v.get("versionCreateTime") or v.get("createTime")),
            producer_link(made_by.get(v.get("versionId", ""))),
            v.get("artifactUri", ""),
            fragment(
                [
                    el(
                        "a",
                        endpoint_names.get(d.get("endpoint", ""))
                        or d.get("endpoint", "").rsplit("/", 1)[-1],
                        " ",
                        el("small", d.get("endpoint", "").rsplit("/", 1)[-1]),
                        href=resource_url(d.get("endpoint", "")),
                        class_="endpoint-link",
                    )
                    for d in v.get("deployedModels", [])
                ]
            ),
        ]
        for v in versions
    ]
    sections = [
        table(
            ["version", "aliases", "created", "made by", "artifact", "deployed to"],
            rows,
            class_="versions",
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


@dataclass
class EndpointView:
    """What the endpoint page reads beside the endpoint: each deployed model's version display
    name (by deployed model ID), and a sample instance in the served model's feature order."""

    model_names: dict[str, str] = field(default_factory=dict)
    sample: list[Any] | None = None
    feature_columns: list[str] = field(default_factory=list)


def sample_request(view: EndpointView) -> str:
    return json.dumps([view.sample]) if view.sample is not None else "[]"


def endpoint_page(
    endpoint: Resource,
    token: str,
    instances: str = "",
    result: Resource | None = None,
    error: str = "",
    view: EndpointView | None = None,
) -> Markup:
    view = view or EndpointView()
    split = endpoint.get("trafficSplit") or {}
    rows = [
        [
            el(
                "a",
                view.model_names.get(d.get("id", "")) or d.get("displayName", ""),
                href=resource_url(d.get("model", "")),
                class_="deployed-model",
            ),
            el("code", f"{d.get('model', '').rsplit('/', 1)[-1]}@{d.get('modelVersionId', '')}"),
            d.get("id", ""),
            f"{split.get(d.get('id', ''), 0)}%",
        ]
        for d in endpoint.get("deployedModels") or []
    ]
    order = (
        el(
            "p",
            "Feature order: ",
            el("code", ", ".join(view.feature_columns), id="feature-order"),
            class_="hint",
        )
        if view.feature_columns
        else None
    )
    form = el(
        "form",
        el("input", type="hidden", name=CSRF_FIELD, value=token),
        el("input", type="hidden", name="name", value=endpoint["name"]),
        el("label", "Instances (a JSON list of rows)", for_="instances"),
        order,
        el(
            "textarea",
            instances or sample_request(view),
            name="instances",
            id="instances",
            rows="5",
        ),
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
        table(
            ["model", "version", "deployed model ID", "traffic"],
            rows,
            "Nothing deployed.",
            class_="deployed",
        ),
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
    job: Resource,
    logs: list[Chunk] | None = None,
    logs_url: str | None = None,
    producer: Any = None,
) -> Markup:
    return layout(
        job.get("displayName", job["name"]),
        "training",
        job_summary(job, **{"pipeline task": producer_link(producer)} if producer else {}),
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
    job: Resource,
    logs: list[Chunk] | None = None,
    logs_url: str | None = None,
    producer: Any = None,
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
        job_summary(
            job,
            metric=f"{metric.get('metricId', '')} ({metric.get('goal', '')})",
            **{"pipeline task": producer_link(producer)} if producer else {},
        ),
        el("h2", "Trials"),
        charts.trial_chart(values, best),
        table(
            ["trial", "state", "parameters", "metric", ""], rows, "No trials yet.", class_="trials"
        ),
        el("h2", "Worker pools"),
        worker_pools(job.get("trialJobSpec") or {}),
        log_sections(logs or [], logs_url),
    )


def schedule_job(schedule: Resource) -> Resource:
    return (schedule.get("createPipelineJobRequest") or {}).get("pipelineJob") or {}


def schedule_parameters(schedule: Resource) -> Markup:
    """The parameter values the schedule's runs get (`name=value`, integers as integers)."""
    job = schedule_job(schedule)
    given = (job.get("runtimeConfig") or {}).get("parameterValues") or {}
    kinds = runs.pipeline_parameter_types(job)
    shown = [
        el("code", f"{key}={json.dumps(runs.typed(value, kinds.get(key, '')))}")
        for key, value in sorted(given.items())
    ]
    return el("span", [(item, " ") for item in shown], class_="params") if shown else "defaults"


def schedules_list(schedules: list[Resource], token: str) -> Markup:
    rows = []
    for s in schedules:
        state = s.get("state", "")
        act = ("pause", "Pause") if state == "ACTIVE" else ("resume", "Resume")
        rows.append(
            [
                el("a", s.get("displayName", ""), href=resource_url(s["name"])),
                runs.pipeline_name(schedule_job(s)),
                s.get("cron", ""),
                schedule_parameters(s),
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
        table(
            ["schedule", "pipeline", "cron", "parameters", "state", "next run", "runs", ""],
            rows,
            "No schedules yet.",
            class_="schedules",
        ),
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
                "pipeline": runs.pipeline_name(schedule_job(schedule)),
            }
        ),
        el("h2", "Parameters"),
        typed_values(
            runs.typed_pipeline_parameters(schedule_job(schedule)), id="schedule-parameters"
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
