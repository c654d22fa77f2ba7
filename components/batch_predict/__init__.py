"""The `batch_predict` component."""

from __future__ import annotations

from vertexkit.components.batch_predict.component import batch_predict

__all__ = ["batch_predict"]
