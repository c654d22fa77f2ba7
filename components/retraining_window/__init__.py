"""The `retraining_window` component."""

from __future__ import annotations

from vertexkit.components.retraining_window.component import retraining_window

__all__ = ["retraining_window"]
