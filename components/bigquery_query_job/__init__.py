"""The `bigquery_query_job` component."""

from __future__ import annotations

from vertexkit.components.bigquery_query_job.component import bigquery_query_job

__all__ = ["bigquery_query_job"]
