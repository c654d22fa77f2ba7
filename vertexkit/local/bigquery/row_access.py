"""Row-level security (rowAccessPolicies). A row access policy changes what every read of its
table answers (only the rows its `filterPredicate` admits, and only to its `grantees`); the
local BigQuery's reads (queries, tabledata.list, extracts, copies) do not apply one, so insert
and update are refused rather than store a policy that would filter nothing. With no policy
ever stored, list answers empty and get, delete, batchDelete and the IAM calls answer 404."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.routing import Route

from vertexkit.local.bigquery.sql import TableName
from vertexkit.local.errors import bad_request, not_found, refused

if TYPE_CHECKING:
    from vertexkit.local.bigquery.routes import BigQueryService

NOT_ENFORCED = (
    "Row-level security is not enforced by the local BigQuery: its queries and table reads "
    "do not apply a row access policy's filterPredicate, so none is stored"
)


class RowAccessPolicies:
    def __init__(self, service: BigQueryService) -> None:
        self.service = service

    def routes(self) -> list[Route]:
        base = "/bigquery/v2/projects/{project}/datasets/{dataset}/tables/{table}/rowAccessPolicies"
        policy = base + "/{policy}"
        route = self.service._route
        return [
            route(base, self.list_policies, "GET"),
            route(base, self.refuse, "POST"),
            route(base + ":batchDelete", self.batch_delete, "POST"),
            route(policy + ":getIamPolicy", self.no_policy, "POST"),
            route(policy + ":testIamPermissions", self.no_policy, "POST"),
            route(policy, self.no_policy, "GET", "DELETE"),
            route(policy, self.refuse, "PUT"),
        ]

    def _require_table(self, params: dict) -> TableName:
        name = TableName(params["project"], params["dataset"], params["table"])
        cur = self.service.warehouse.cursor()
        try:
            self.service.warehouse.require_table(cur, name)
        finally:
            cur.close()
        return name

    def list_policies(self, params: dict, _: dict, __: dict) -> dict:
        """ListRowAccessPoliciesResponse with none: Google leaves the empty list out."""
        self._require_table(params)
        return {}

    def refuse(self, params: dict, _: dict, __: dict) -> dict:
        self._require_table(params)
        raise refused(NOT_ENFORCED)

    def no_policy(self, params: dict, _: dict, __: dict) -> dict:
        name = self._require_table(params)
        raise not_found(_not_found_message(params["policy"], name))

    def batch_delete(self, params: dict, _: dict, body: dict) -> dict:
        name = self._require_table(params)
        ids = body.get("policyIds")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            raise bad_request("policyIds: required, a non-empty list of row access policy ids")
        if "force" in body and not isinstance(body["force"], bool):
            raise bad_request("force must be a boolean")
        raise not_found(_not_found_message(ids[0], name))


def _not_found_message(policy: str, table: TableName) -> str:
    return f"Not found: Row access policy {policy} on table {table.bigquery_id}"
