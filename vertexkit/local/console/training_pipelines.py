"""Training pipelines: the list on the Training page and a pipeline's own page (its state, the
backing custom job it ran, the model it uploaded), read from the stored TrainingPipeline."""

from __future__ import annotations

from typing import Any

from vertexkit.local.console import runs
from vertexkit.local.console.html import Markup, el, fragment
from vertexkit.local.console.pages import (
    badge,
    key_values,
    layout,
    resource_url,
    table,
    worker_pools,
)

Resource = dict[str, Any]


def backing_job(pipeline: Resource) -> str:
    return (pipeline.get("trainingTaskMetadata") or {}).get("backingCustomJob", "")


def uploaded_model(pipeline: Resource) -> Resource | None:
    """The uploaded version (the pipeline names it in `modelToUpload` once it succeeded)."""
    model = pipeline.get("modelToUpload") or {}
    return model if model.get("name") else None


def job_link(pipeline: Resource) -> Any:
    name = backing_job(pipeline)
    return el("a", name.rsplit("/", 1)[-1], href=resource_url(name)) if name else ""


def model_link(pipeline: Resource) -> Any:
    model = uploaded_model(pipeline)
    if model is None:
        return ""
    label = f"{model.get('displayName') or model['name'].rsplit('/', 1)[-1]} "
    label += f"v{model.get('versionId', '')}"
    return el("a", label, href=resource_url(model["name"]), class_="uploaded-model")


def pipeline_rows(pipelines: list[Resource]) -> list[list[Any]]:
    return [
        [
            el("a", p.get("displayName", ""), href=resource_url(p["name"])),
            badge(p.get("state", "")),
            runs.when(p.get("createTime")),
            runs.duration(p),
            job_link(p),
            model_link(p),
        ]
        for p in pipelines
    ]


PIPELINE_HEADERS = ["pipeline", "state", "created", "duration", "custom job", "model"]


def training_pipeline_page(pipeline: Resource) -> Markup:
    summary = {
        "state": badge(pipeline.get("state", "")),
        "task": pipeline.get("trainingTaskDefinition", "").rsplit("/", 1)[-1],
        "created": runs.when(pipeline.get("createTime")),
        "started": runs.when(pipeline.get("startTime")),
        "duration": runs.duration(pipeline),
        "backing custom job": job_link(pipeline),
        "uploaded model": model_link(pipeline),
        "error": (pipeline.get("error") or {}).get("message", ""),
    }
    return layout(
        pipeline.get("displayName", pipeline["name"]),
        "training",
        el("p", el("code", pipeline["name"])),
        key_values(summary),
        el("h2", "Worker pools"),
        worker_pools(pipeline.get("trainingTaskInputs") or {}),
    )


def pipelines_section(pipelines: list[Resource]) -> Markup:
    return fragment(
        el("h2", "Training pipelines"),
        table(PIPELINE_HEADERS, pipeline_rows(pipelines), "No training pipelines yet."),
    )
