"""The one place that decides where the Google clients point.

A `CloudContext` is a project, a region and, optionally, emulator endpoints. It is read from
explicit arguments or from the environment variables that `vertexkit local up` prints:

    STORAGE_EMULATOR_HOST, BIGQUERY_EMULATOR_HOST, BIGQUERY_STORAGE_EMULATOR_HOST (the BigQuery
    Storage Read and Write APIs' gRPC `host:port`), VERTEX_AI_EMULATOR_HOST, GOOGLE_CLOUD_PROJECT,
    GOOGLE_CLOUD_REGION (optional, default us-central1).

Nothing else in vertexkit asks "am I local?": everything builds its clients from a context.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported lazily: the clients are heavy and a component may need only one
    import gcsfs
    from google.cloud import aiplatform_v1, bigquery, storage

STORAGE_ENV = "STORAGE_EMULATOR_HOST"
BIGQUERY_ENV = "BIGQUERY_EMULATOR_HOST"
BIGQUERY_STORAGE_ENV = "BIGQUERY_STORAGE_EMULATOR_HOST"
VERTEX_ENV = "VERTEX_AI_EMULATOR_HOST"
PROJECT_ENV = "GOOGLE_CLOUD_PROJECT"
REGION_ENV = "GOOGLE_CLOUD_REGION"
DEFAULT_REGION = "us-central1"


@dataclass(frozen=True)
class CloudContext:
    """Project, region and endpoints shared by every client vertexkit creates."""

    project: str
    region: str = DEFAULT_REGION
    storage_endpoint: str | None = None
    bigquery_endpoint: str | None = None
    vertex_endpoint: str | None = None
    # gRPC `host:port`, plaintext; after the others, which callers may pass by position
    bigquery_storage_endpoint: str | None = None
    extra_env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, project: str | None = None, region: str | None = None) -> CloudContext:
        """Builds a context from explicit values, falling back to the environment."""
        project = project or os.environ.get(PROJECT_ENV) or os.environ.get("CLOUD_ML_PROJECT_ID")
        if not project:
            raise ValueError(
                f"no project: pass one or set {PROJECT_ENV} (vertexkit local up prints it)"
            )
        return cls(
            project=project,
            region=region or os.environ.get(REGION_ENV) or DEFAULT_REGION,
            storage_endpoint=os.environ.get(STORAGE_ENV) or None,
            bigquery_endpoint=os.environ.get(BIGQUERY_ENV) or None,
            bigquery_storage_endpoint=os.environ.get(BIGQUERY_STORAGE_ENV) or None,
            vertex_endpoint=os.environ.get(VERTEX_ENV) or None,
        )

    @property
    def is_emulated(self) -> bool:
        return bool(self.storage_endpoint or self.bigquery_endpoint or self.vertex_endpoint)

    def env(self) -> dict[str, str]:
        """The environment variables that reproduce this context in another process."""
        values = {PROJECT_ENV: self.project, REGION_ENV: self.region}
        for name, value in (
            (STORAGE_ENV, self.storage_endpoint),
            (BIGQUERY_ENV, self.bigquery_endpoint),
            (BIGQUERY_STORAGE_ENV, self.bigquery_storage_endpoint),
            (VERTEX_ENV, self.vertex_endpoint),
        ):
            if value:
                values[name] = value
        if self.storage_endpoint:
            # gcsfs probes hierarchical-namespace support on every call unless told not to;
            # against a local server each probe waits for a time-out (about 60 s).
            values["GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT"] = "false"
        return {**values, **self.extra_env}

    def _credentials(self) -> Any:
        from google.auth.credentials import AnonymousCredentials

        return AnonymousCredentials()

    def storage_client(self) -> storage.Client:
        from google.cloud import storage

        if self.storage_endpoint:
            return storage.Client(
                project=self.project,
                credentials=self._credentials(),
                client_options={"api_endpoint": self.storage_endpoint},
            )
        return storage.Client(project=self.project)

    def bigquery_client(self) -> bigquery.Client:
        from google.cloud import bigquery

        if self.bigquery_endpoint:
            return bigquery.Client(
                project=self.project,
                location="US",
                credentials=self._credentials(),
                client_options={"api_endpoint": self.bigquery_endpoint},
            )
        return bigquery.Client(project=self.project)

    def gcs_filesystem(self) -> gcsfs.GCSFileSystem:
        if self.storage_endpoint:
            # gcsfs reads this when first imported, so it must be set before the import.
            os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
        import gcsfs

        if self.storage_endpoint:
            return gcsfs.GCSFileSystem(
                project=self.project, endpoint_url=self.storage_endpoint, token="anon"
            )
        return gcsfs.GCSFileSystem(project=self.project)

    def storage_options(self) -> dict[str, Any]:
        """`storage_options` for pandas/fsspec `gs://` paths."""
        if self.storage_endpoint:
            os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")  # read on import
            return {"project": self.project, "endpoint_url": self.storage_endpoint, "token": "anon"}
        return {"project": self.project}

    def vertex_client_options(self) -> dict[str, Any]:
        if self.vertex_endpoint:
            return {"api_endpoint": self.vertex_endpoint}
        return {"api_endpoint": f"{self.region}-aiplatform.googleapis.com"}

    def vertex_transport(self) -> str:
        # A plain-HTTP endpoint is reachable only through the REST transport.
        return "rest" if self.vertex_endpoint else "grpc"

    def init_aiplatform(self, **kwargs: Any) -> None:
        """Points the high-level `google.cloud.aiplatform` SDK at this context."""
        from google.cloud import aiplatform

        if self.vertex_endpoint:
            kwargs.setdefault("credentials", self._credentials())
            kwargs.setdefault("api_endpoint", self.vertex_endpoint)
            kwargs.setdefault("api_transport", "rest")
        aiplatform.init(project=self.project, location=self.region, **kwargs)

    def job_client(self) -> aiplatform_v1.JobServiceClient:
        from vertexkit.runtime.gapic import aiplatform_v1

        return self._gapic(aiplatform_v1.JobServiceClient)

    def model_client(self) -> aiplatform_v1.ModelServiceClient:
        from vertexkit.runtime.gapic import aiplatform_v1

        return self._gapic(aiplatform_v1.ModelServiceClient)

    def endpoint_client(self) -> aiplatform_v1.EndpointServiceClient:
        from vertexkit.runtime.gapic import aiplatform_v1

        return self._gapic(aiplatform_v1.EndpointServiceClient)

    def prediction_client(self) -> aiplatform_v1.PredictionServiceClient:
        from vertexkit.runtime.gapic import aiplatform_v1

        return self._gapic(aiplatform_v1.PredictionServiceClient)

    def pipeline_client(self) -> aiplatform_v1.PipelineServiceClient:
        from vertexkit.runtime.gapic import aiplatform_v1

        return self._gapic(aiplatform_v1.PipelineServiceClient)

    def dataset_client(self) -> aiplatform_v1.DatasetServiceClient:
        from vertexkit.runtime.gapic import aiplatform_v1

        return self._gapic(aiplatform_v1.DatasetServiceClient)

    def _gapic(self, client_cls: type) -> Any:
        if self.vertex_endpoint:
            return client_cls(
                credentials=self._credentials(),
                transport="rest",
                client_options=self.vertex_client_options(),
            )
        return client_cls(client_options=self.vertex_client_options())

    @property
    def parent(self) -> str:
        return f"projects/{self.project}/locations/{self.region}"


@contextmanager
def environ_set(values: dict[str, str]) -> Iterator[None]:
    """`os.environ` with `values` set (Google's clients read their endpoints from it), restored
    whole afterwards."""
    saved = dict(os.environ)
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
