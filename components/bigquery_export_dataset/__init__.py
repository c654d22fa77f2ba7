"""The `bigquery_export_dataset` component."""

from __future__ import annotations

from vertexkit.components.bigquery_export_dataset.component import bigquery_export_dataset

__all__ = ["bigquery_export_dataset"]
