"""The `evaluate_model` component."""

from __future__ import annotations

from vertexkit.components.evaluate_model.component import evaluate_model

__all__ = ["evaluate_model"]
