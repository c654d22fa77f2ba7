"""The `evaluate_champion` component."""

from __future__ import annotations

from vertexkit.components.evaluate_champion.component import evaluate_champion

__all__ = ["evaluate_champion"]
