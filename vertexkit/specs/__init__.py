"""Resource specs and their validation, shared by the local cloud and the components.

PLACEHOLDER until built. Contract used elsewhere:
    validate_custom_job_spec(spec: dict) -> None   # CustomJobSpec, Vertex REST JSON (camelCase)
    validate_tuning_job(job: dict) -> None         # HyperparameterTuningJob REST JSON
    SpecError(ValueError): .field (dotted camelCase path) and a message naming allowed values
"""

from __future__ import annotations

from typing import Any


class SpecError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def validate_custom_job_spec(spec: dict[str, Any]) -> None:
    return None


def validate_tuning_job(job: dict[str, Any]) -> None:
    return None
