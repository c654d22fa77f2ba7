"""Resource Manager's `projects.get` (v1 and v3): the project number the SDK asks for.

The SDK asks who owns a staging bucket (`Bucket.project_number` against `projects.get`), so
both answers come from one function: a stable 12-digit number derived from the project ID.
`google.cloud.aiplatform` itself calls `projects.get` through `resourcemanager.ProjectsClient`
with its default gRPC transport on Google's host (no endpoint setting reaches it); these
routes serve the REST clients that are pointed here (`client_options` + `transport="rest"`).
"""

from __future__ import annotations

import hashlib
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from vertexkit.local.errors import ApiError
from vertexkit.specs import SpecError
from vertexkit.specs.naming import validate_project_id

CREATED = "2024-01-01T00:00:00.000Z"
DEFAULT_PROJECT = "local-project"  # the project every local cloud answers for


def project_number(project_id: str) -> str:
    """A stable number of 12 digits (no leading zero) for a project ID."""
    digest = int(hashlib.sha256(project_id.encode()).hexdigest(), 16)
    return str(100_000_000_000 + digest % 900_000_000_000)


def numbered_name(name: str) -> str:
    """A resource name as Vertex answers it: `projects/<id>/...` with the project's number."""
    head, _, rest = name.partition("/")
    project, _, tail = rest.partition("/")
    if head != "projects" or project.isdigit():
        return name
    return f"projects/{project_number(project)}" + (f"/{tail}" if tail else "")


class ProjectsService:
    """Answers for every valid project ID, and for the number of a project it has named."""

    def __init__(self, known: list[str]) -> None:
        self.by_number = {project_number(p): p for p in known}

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/v1/projects/{project}", self.get_v1, methods=["GET"]),
            Route("/v3/projects/{project}", self.get_v3, methods=["GET"]),
        ]

    def project_id(self, key: str) -> str:
        if key.isdigit():
            if key not in self.by_number:
                raise ApiError(403, f"The caller does not have permission on projects/{key}.")
            return self.by_number[key]
        try:
            validate_project_id(key, "name")
        except SpecError as exc:
            raise ApiError(400, str(exc)) from exc
        self.by_number.setdefault(project_number(key), key)
        return key

    async def get_v1(self, request: Request) -> JSONResponse:
        project = self.project_id(request.path_params["project"])
        return JSONResponse(v1_project(project))

    async def get_v3(self, request: Request) -> JSONResponse:
        project = self.project_id(request.path_params["project"])
        return JSONResponse(v3_project(project))


def v1_project(project: str) -> dict[str, Any]:
    return {
        "projectNumber": project_number(project),
        "projectId": project,
        "lifecycleState": "ACTIVE",
        "name": project,
        "createTime": CREATED,
    }


def v3_project(project: str) -> dict[str, Any]:
    return {
        "name": f"projects/{project_number(project)}",
        "projectId": project,
        "state": "ACTIVE",
        "displayName": project,
        "createTime": CREATED,
        "updateTime": CREATED,
        "etag": 'W/"local"',
    }
