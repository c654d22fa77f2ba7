"""The `gcs_dataset` component."""

from __future__ import annotations

from vertexkit.components.gcs_dataset.component import gcs_dataset

__all__ = ["gcs_dataset"]
