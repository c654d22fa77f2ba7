"""The `custom_training_job` component."""

from __future__ import annotations

from vertexkit.components.custom_training_job.component import custom_training_job

__all__ = ["custom_training_job"]
