"""The `record_skip` component."""

from __future__ import annotations

from vertexkit.components.record_skip.component import record_skip

__all__ = ["record_skip"]
