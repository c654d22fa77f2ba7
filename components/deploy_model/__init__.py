"""The `deploy_model` component."""

from __future__ import annotations

from vertexkit.components.deploy_model.component import deploy_model

__all__ = ["deploy_model"]
