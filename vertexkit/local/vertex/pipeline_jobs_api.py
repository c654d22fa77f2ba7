"""Vertex AI's pipeline-job verbs as a narrow handle for another service of the local cloud (the
KFP API): each call goes through the Vertex router's own REST handler, as a REST request would,
so it sees exactly what a client of `/v1/.../pipelineJobs` sees, validation included."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from vertexkit.local.errors import ApiError
from vertexkit.local.kfp.jobs import JobRefused, Resource
from vertexkit.local.vertex.router import VertexRequest, VertexRouter
from vertexkit.specs.errors import SpecError


class PipelineJobsApi:
    def __init__(self, router: VertexRouter, ready: Callable[[], Any], parent: str) -> None:
        self._router = router
        self._ready = ready  # waits for the Vertex areas to be registered
        self.parent = parent

    def _call(self, method: str, path: str, body: Resource | None = None,
              query: dict[str, str] | None = None) -> Any:  # fmt: skip
        self._ready()
        resolved = self._router.resolve(method, path)
        if resolved is None:
            raise JobRefused(404, "NOT_FOUND", f"{method} {path} is not a Vertex method")
        handler, params = resolved
        body = body or {}
        headers = {"content-length": str(len(json.dumps(body)))}
        request = VertexRequest(method, path, params, dict(query or {}), body, headers)
        try:
            return handler(request)
        except ApiError as exc:
            raise JobRefused(exc.code, exc.status, exc.message) from None
        except SpecError as exc:
            raise JobRefused(400, "INVALID_ARGUMENT", str(exc)) from None

    def create(self, job_id: str, body: Resource) -> Resource:
        query = {"pipelineJobId": job_id}
        return self._call("POST", f"{self.parent}/pipelineJobs", body, query)

    def get(self, job_id: str) -> Resource | None:
        try:
            return self._call("GET", f"{self.parent}/pipelineJobs/{job_id}")
        except JobRefused as exc:
            if exc.http_status == 404:
                return None
            raise

    def cancel(self, job_id: str) -> None:
        self._call("POST", f"{self.parent}/pipelineJobs/{job_id}:cancel")

    def delete(self, job_id: str) -> None:
        self._call("DELETE", f"{self.parent}/pipelineJobs/{job_id}")
