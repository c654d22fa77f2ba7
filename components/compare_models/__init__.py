"""The `compare_models` component."""

from __future__ import annotations

from vertexkit.components.compare_models.component import compare_models

__all__ = ["compare_models"]
