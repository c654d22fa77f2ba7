"""The `hyperparameter_tuning_job` component."""

from __future__ import annotations

from vertexkit.components.hyperparameter_tuning_job.component import hyperparameter_tuning_job

__all__ = ["hyperparameter_tuning_job"]
