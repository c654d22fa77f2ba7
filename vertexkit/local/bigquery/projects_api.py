"""projects.list, projects.getServiceAccount and datasets.undelete.

The local cloud is one project: projects.list answers it alone, with the project number
Resource Manager's local answer gives it (vertexkit/local/projects.py); BigQuery's encryption
service account is named after that number. A deleted dataset is dropped at once (BigQuery
keeps it for the time-travel window), so undelete is refused for a dataset that is gone and
answered 409 for one that exists, as on BigQuery.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import TYPE_CHECKING

from starlette.routing import Route

from vertexkit.local.errors import ApiError, bad_request, refused
from vertexkit.local.projects import project_number

if TYPE_CHECKING:
    from vertexkit.local.bigquery.routes import BigQueryService

UNDELETE_REFUSED = (
    "datasets.undelete: the local BigQuery drops a deleted dataset at once and keeps no "
    "time-travel copy of it to restore"
)


class Projects:
    def __init__(self, service: BigQueryService) -> None:
        self.service = service
        self.project = service.project  # the local cloud's one project

    def routes(self) -> list[Route]:
        route = self.service._route
        return [
            route("/bigquery/v2/projects", self.list_projects, "GET"),
            route("/bigquery/v2/projects/{project}/serviceAccount", self.service_account, "GET"),
            route(
                "/bigquery/v2/projects/{project}/datasets/{dataset}:undelete", self.undelete, "POST"
            ),
        ]

    def list_projects(self, _: dict, query: dict, __: dict) -> dict:
        """ProjectList; maxResults and pageToken page the one project as any list is paged."""
        from vertexkit.local.bigquery.routes import _page_of, _with_token

        page, token = _page_of([self.project], query)
        projects = [_project(project) for project in page]
        body = {
            "kind": "bigquery#projectList",
            "etag": _hash(projects),  # ProjectList.etag: "A hash of the page of results"
            "projects": projects,
            "totalItems": 1,
        }
        return _with_token(body, token)

    def service_account(self, params: dict, _: dict, __: dict) -> dict:
        number = project_number(params["project"])
        return {
            "kind": "bigquery#getServiceAccountResponse",
            "email": f"bq-{number}@bigquery-encryption.iam.gserviceaccount.com",
        }

    def undelete(self, params: dict, _: dict, body: dict) -> dict:
        unknown = sorted(set(body) - {"deletionTime"})
        if unknown:
            raise bad_request(f"{unknown[0]}: unknown field; allowed: deletionTime")
        project, dataset = params["project"], params["dataset"]
        warehouse = self.service.warehouse
        if warehouse.dataset_exists(warehouse.cursor(), project, dataset):
            raise ApiError(409, f"Already Exists: Dataset {project}:{dataset}")
        raise refused(UNDELETE_REFUSED)


def _hash(value: object) -> str:
    digest = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).digest()
    return base64.b64encode(digest[:12]).decode()


def _project(project: str) -> dict:
    return {
        "kind": "bigquery#project",
        "id": project,
        "numericId": project_number(project),
        "projectReference": {"projectId": project},
        "friendlyName": project,
    }
