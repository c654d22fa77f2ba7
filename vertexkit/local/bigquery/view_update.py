"""tables.update / tables.patch / tables.insert of a VIEW. A view's schema is its query's
output: BigQuery accepts a schema on a view that names the query's columns (with their types)
and so adds descriptions, and refuses one that adds, drops or retypes a column (REST reference
`Table.schema`: "Describes the schema of this table"; `ViewDefinition.query`). A changed
`view.query` redefines the view."""

from __future__ import annotations

from typing import Any

import duckdb

from vertexkit.local.bigquery.models import _descriptions
from vertexkit.local.bigquery.responses import CANONICAL_TYPE
from vertexkit.local.bigquery.sql import TableName, translate
from vertexkit.local.errors import bad_request


def _kind(field: dict) -> str:
    kind = str(field.get("type") or "").upper()
    return CANONICAL_TYPE.get(kind, kind)


def view_descriptions(name: TableName, current: list[dict], given: list[dict]) -> dict:
    """The descriptions of a view schema that matches the view's columns, else a 400."""
    by_name = {f["name"].lower(): f for f in current}
    named = {str(f.get("name") or "").lower() for f in given}
    for field in given:
        known = by_name.get(str(field.get("name") or "").lower())
        if known is None:
            raise bad_request(
                f"Provided Schema does not match View {name.bigquery_id}: field "
                f"{field.get('name')} is not a column of the view's query"
            )
        if field.get("type") and _kind(field) != _kind(known):
            raise bad_request(
                f"Provided Schema does not match View {name.bigquery_id}: field "
                f"{field['name']} has type {_kind(field)}, the view's query gives {_kind(known)}"
            )
    missing = sorted(set(by_name) - named)
    if missing:
        raise bad_request(
            f"Provided Schema does not match View {name.bigquery_id}. Field {missing[0]} is "
            "missing in new schema"
        )
    return _descriptions(given)


def redefine(cur: duckdb.DuckDBPyConnection, name: TableName, view: dict[str, Any]) -> dict:
    """CREATE OR REPLACE VIEW for a changed view.query; answers the stored `view`."""
    if view.get("useLegacySql") is True:
        raise bad_request("view.useLegacySql: only GoogleSQL views are supported")
    query = str(view.get("query") or "")
    translation = translate(query, name.project)
    cur.execute(f"CREATE OR REPLACE VIEW {name.sql} AS {translation.sql}")
    return {"query": query, "useLegacySql": False}
