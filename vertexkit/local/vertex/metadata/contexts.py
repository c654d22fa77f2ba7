"""Contexts the service itself writes into a location's default metadata store.

Vertex makes the `default` store on first use, and a pipeline job, when it starts, puts its
run there: a `system.Pipeline` context per pipeline name (`contexts/<pipeline name>`, what
`aiplatform.get_pipeline_df(pipeline=...)` reads) and a `system.PipelineRun` context per job
(`contexts/<job id>`, child of the pipeline's; what `PipelineJob.submit(experiment=...)` adds
to the experiment). Areas other than metadata call this module, never its routes.
"""

from __future__ import annotations

import sqlite3

from vertexkit.local.vertex.store import Resource, ResourceStore, now_rfc3339

STORES = "metadataStores"
CONTEXTS = "metadataContexts"  # the store collection of metadata contexts (metadata routes)
DEFAULT_STORE = "default"
SCHEMA_VERSION = "0.0.1"  # the version Vertex gives its system.* schemas


def default_store(store: ResourceStore, location: str) -> str:
    """The name of `location`'s default metadata store, made if it does not exist yet."""
    name = f"{location}/{STORES}/{DEFAULT_STORE}"
    if store.find(name) is None:
        now = now_rfc3339()
        _insert_once(store, STORES, name, {"name": name, "createTime": now, "updateTime": now,
                                           "state": {}})  # fmt: skip
    return name


def ensure_context(
    store: ResourceStore,
    location: str,
    context_id: str,
    schema_title: str,
    parents: list[str] | None = None,
) -> Resource:
    """The context `context_id` of the default store, made with this schema if missing."""
    name = f"{default_store(store, location)}/contexts/{context_id}"
    existing = store.find(name)
    if existing is not None:
        return existing
    now = now_rfc3339()
    context: Resource = {
        "name": name,
        "displayName": context_id,
        "schemaTitle": schema_title,
        "schemaVersion": SCHEMA_VERSION,
        "metadata": {},
        "createTime": now,
        "updateTime": now,
        "etag": now,
    }
    if parents:
        context["parentContexts"] = list(parents)
    _insert_once(store, CONTEXTS, name, context)
    return store.get(name, kind="Context")


def _insert_once(store: ResourceStore, collection: str, name: str, body: Resource) -> None:
    # Two jobs of one pipeline may start together: the second finds the first's row.
    try:
        store.insert(collection, name, body)
    except sqlite3.IntegrityError:
        pass
