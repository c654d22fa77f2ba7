"""tables.getIamPolicy / setIamPolicy / testIamPermissions: the table's policy is stored with
the table's own catalog entry (it goes when the table does). See iam.py for what a policy
means to a local cloud of one owner."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.routing import Route

from vertexkit.local.bigquery import iam
from vertexkit.local.bigquery.sql import TableName

if TYPE_CHECKING:
    from vertexkit.local.bigquery.routes import BigQueryService

POLICY_KEY = "iamPolicy"


class TableIam:
    def __init__(self, service: BigQueryService) -> None:
        self.service = service
        self.warehouse = service.warehouse

    def routes(self) -> list[Route]:
        table = "/bigquery/v2/projects/{project}/datasets/{dataset}/tables/{table}"
        route = self.service._route
        return [
            route(table + ":getIamPolicy", self.get_policy, "POST"),
            route(table + ":setIamPolicy", self.set_policy, "POST"),
            route(table + ":testIamPermissions", self.test_permissions, "POST"),
        ]

    def _stored(self, name: TableName) -> dict | None:
        cur = self.warehouse.cursor()
        try:
            self.warehouse.require_table(cur, name)
            return self.warehouse.table_extras(cur, name).get(POLICY_KEY)
        finally:
            cur.close()

    def get_policy(self, params: dict, _: dict, body: dict) -> dict:
        iam.check_get_request(body)
        return iam.answer(self._stored(_name(params)))

    def set_policy(self, params: dict, _: dict, body: dict) -> dict:
        name = _name(params)
        self.service._check_writable(name.project)
        with self.warehouse.transaction(name) as cur:
            self.warehouse.require_table(cur, name)
            extras = self.warehouse.table_extras(cur, name)
            extras[POLICY_KEY] = iam.updated_policy(extras.get(POLICY_KEY), body)
            self.warehouse.put_table_extras(cur, name, extras)  # not a change of the table's data
        return iam.answer(extras[POLICY_KEY])

    def test_permissions(self, params: dict, _: dict, body: dict) -> dict:
        self._stored(_name(params))  # 404 for a table that does not exist
        return iam.permissions_held(body)


def _name(params: dict) -> TableName:
    return TableName(params["project"], params["dataset"], params["table"])
