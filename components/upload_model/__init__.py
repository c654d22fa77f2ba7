"""The `upload_model` component."""

from __future__ import annotations

from vertexkit.components.upload_model.component import upload_model

__all__ = ["upload_model"]
