"""Batch prediction jobs: the list on the Training page and a job's own page (the model it ran,
where its instances came from and its results went, how many rows succeeded or failed), read from
the stored BatchPredictionJob."""

from __future__ import annotations

from typing import Any

from vertexkit.local.console import runs
from vertexkit.local.console.html import Markup, el, fragment
from vertexkit.local.console.pages import badge, key_values, layout, resource_url, table

Resource = dict[str, Any]
HEADERS = ["job", "state", "created", "duration", "model", "succeeded", "failed"]


def model_link(job: Resource) -> Any:
    name = job.get("model", "")
    return el("a", name.rsplit("/", 1)[-1], href=resource_url(name)) if name else ""


def counts(job: Resource) -> tuple[str, str]:
    stats = job.get("completionStats") or {}
    return str(stats.get("successfulCount", "")), str(stats.get("failedCount", ""))


def source(job: Resource) -> str:
    config = job.get("inputConfig") or {}
    uris = (config.get("gcsSource") or {}).get("uris") or []
    table_uri = (config.get("bigquerySource") or {}).get("inputUri", "")
    return ", ".join(uris) or table_uri


def destination(job: Resource) -> str:
    info = job.get("outputInfo") or {}
    return info.get("gcsOutputDirectory") or info.get("bigqueryOutputTable") or ""


def job_rows(jobs: list[Resource]) -> list[list[Any]]:
    return [
        [
            el("a", job.get("displayName", ""), href=resource_url(job["name"])),
            badge(job.get("state", "")),
            runs.when(job.get("createTime")),
            runs.duration(job),
            model_link(job),
            *counts(job),
        ]
        for job in jobs
    ]


def jobs_section(jobs: list[Resource]) -> Markup:
    return fragment(
        el("h2", "Batch prediction jobs"),
        table(HEADERS, job_rows(jobs), "No batch prediction jobs yet."),
    )


def batch_prediction_page(job: Resource) -> Markup:
    succeeded, failed = counts(job)
    summary = {
        "state": badge(job.get("state", "")),
        "model": model_link(job),
        "created": runs.when(job.get("createTime")),
        "duration": runs.duration(job),
        "instances from": source(job),
        "instance format": (job.get("inputConfig") or {}).get("instancesFormat", ""),
        "results in": destination(job),
        "succeeded rows": succeeded,
        "failed rows": failed,
        "error": (job.get("error") or {}).get("message", ""),
    }
    return layout(
        job.get("displayName", job["name"]),
        "training",
        el("p", el("code", job["name"])),
        key_values(summary),
    )
