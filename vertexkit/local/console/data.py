"""The Data pages: BigQuery datasets and tables (schema and first rows), Cloud Storage buckets
and objects (browsable by folder, each object downloadable). Read through the services' own
stores: the warehouse (DuckDB) and the object store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from vertexkit.local.bigquery.sql import TableName
from vertexkit.local.console.html import Markup, el
from vertexkit.local.console.pages import ROOT, layout, table
from vertexkit.local.errors import ApiError

if TYPE_CHECKING:
    from vertexkit.local.console.sources import ConsoleSources

PREVIEW_ROWS = 20
PUBLIC_PROJECTS = ("bigquery-public-data",)


def link(page: str, label: str, **query: str) -> Markup:
    return el("a", label, href=f"{ROOT}/{page}?{urlencode(query)}")


def bigquery_page(sources: ConsoleSources, query: dict[str, str]) -> Markup:
    project = query.get("project") or sources.project
    dataset, table_id = query.get("dataset", ""), query.get("table", "")
    warehouse = sources.warehouse()
    try:
        if dataset and table_id:
            body = table_section(warehouse, TableName(project, dataset, table_id))
        elif dataset:
            rows = [
                [link("bigquery", name, project=project, dataset=dataset, table=name), kind]
                for name, kind in warehouse.list_tables(project, dataset)
            ]
            body = [el("h2", f"{project}.{dataset}"), table(["table", "type"], rows)]
        else:
            body = datasets_section(warehouse, (project, *PUBLIC_PROJECTS))
    except ApiError as error:
        body = [el("p", error.message, class_="error")]
    return layout("BigQuery", "bigquery", body)


def datasets_section(warehouse: Any, projects: tuple[str, ...]) -> list[Markup]:
    rows = [
        [project, link("bigquery", name, project=project, dataset=name)]
        for project in projects
        for name in warehouse.list_datasets(project, include_hidden=False)
    ]
    return [table(["project", "dataset"], rows, "No datasets yet.")]


def table_section(warehouse: Any, name: TableName) -> list[Markup]:
    cur = warehouse.cursor()
    try:
        warehouse.require_table(cur, name)
        schema = warehouse.table_schema(cur, name)
        count = warehouse.count_rows(cur, name)
    finally:
        cur.close()
    preview = warehouse.read_page(name, 0, PREVIEW_ROWS).to_pylist()
    columns = [field["name"] for field in schema]
    return [
        el("h2", f"{name.project}.{name.dataset}.{name.table}"),
        el("p", f"{count} rows"),
        el("h3", "Schema"),
        table(
            ["column", "type", "mode"],
            [[f["name"], f.get("type", ""), f.get("mode", "")] for f in schema],
        ),
        el("h3", f"First {min(PREVIEW_ROWS, count)} rows"),
        table(columns, [[row.get(c) for c in columns] for row in preview], "No rows."),
    ]


def storage_page(sources: ConsoleSources, query: dict[str, str]) -> Markup:
    store = sources.storage.store
    bucket, prefix = query.get("bucket", ""), query.get("prefix", "")
    try:
        if bucket:
            body = objects_section(store, bucket, prefix)
        else:
            rows = [
                [link("storage", b["name"], bucket=b["name"])]
                for b in store.list_buckets(sources.project)
            ]
            body = [table(["bucket"], rows, "No buckets yet.")]
    except ApiError as error:
        body = [el("p", error.message, class_="error")]
    return layout("Cloud Storage", "storage", body)


def objects_section(store: Any, bucket: str, prefix: str) -> list[Markup]:
    listing = store.list(bucket, prefix=prefix, delimiter="/", max_results=500)
    rows: list[list[Any]] = [
        [link("storage", p.removeprefix(prefix), bucket=bucket, prefix=p), "folder", ""]
        for p in listing.prefixes
    ]
    rows += [
        [
            el(
                "a",
                item.name.removeprefix(prefix),
                href=f"{ROOT}/download?{urlencode({'uri': f'gs://{bucket}/{item.name}'})}",
            ),
            item.content_type,
            item.size,
        ]
        for item in listing.items
    ]
    parent = prefix.rstrip("/").rpartition("/")[0]
    up = link("storage", "↑ up", bucket=bucket, prefix=parent + "/" if parent else "")
    return [
        el("h2", f"gs://{bucket}/{prefix}"),
        up if prefix else None,
        table(["name", "type", "bytes"], rows, "Empty."),
    ]
