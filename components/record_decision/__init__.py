"""The `record_decision` component."""

from __future__ import annotations

from vertexkit.components.record_decision.component import record_decision

__all__ = ["record_decision"]
