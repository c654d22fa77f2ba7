"""The one handle the KFP API has on the local cloud: Vertex AI's pipeline-job verbs (create, get,
cancel, delete) in one location, answered as the Vertex REST API answers them. The server builds
it (`vertexkit.local.vertex.pipeline_jobs_api`); the KFP service knows nothing else of Vertex."""

from __future__ import annotations

from typing import Any, Protocol

Resource = dict[str, Any]


class JobRefused(Exception):
    """The Vertex API refused a request: its HTTP status, its status word and its message."""

    def __init__(self, http_status: int, status: str, message: str) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.status = status
        self.message = message


class PipelineJobs(Protocol):
    parent: str  # projects/PROJECT/locations/LOCATION: where the backing jobs live

    def create(self, job_id: str, body: Resource) -> Resource:
        """POST pipelineJobs?pipelineJobId=: the created job (raises JobRefused)."""
        ...

    def get(self, job_id: str) -> Resource | None:
        """The job as Vertex answers it, or None when there is none."""
        ...

    def cancel(self, job_id: str) -> None: ...

    def delete(self, job_id: str) -> None: ...
