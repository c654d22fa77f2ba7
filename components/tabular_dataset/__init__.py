"""The `tabular_dataset` component."""

from __future__ import annotations

from vertexkit.components.tabular_dataset.component import tabular_dataset

__all__ = ["tabular_dataset"]
