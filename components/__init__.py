"""vertexkit's reusable KFP components (installed as `vertexkit.components`).

    from vertexkit.components import custom_training_job, upload_model, ...

Each component lives in its own folder (`component.py`: the typed face with its Args docstring);
the logic is in `vertexkit.runtime`. Components are imported on first use, so importing one does
not load the others' dependencies.
"""

from __future__ import annotations

import importlib
from typing import Any

COMPONENTS = (
    "bigquery_query_job",
    "bigquery_export_dataset",
    "gcs_dataset",
    "tabular_dataset",
    "custom_training_job",
    "hyperparameter_tuning_job",
    "upload_model",
    "evaluate_model",
    "compare_models",
    "deploy_model",
    "batch_predict",
    "retraining_window",
    "evaluate_champion",
    "record_decision",
    "record_skip",
)

__all__ = list(COMPONENTS)


def __getattr__(name: str) -> Any:
    if name not in COMPONENTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{name}")
    component = getattr(module, name)
    globals()[name] = component
    return component


def __dir__() -> list[str]:
    return sorted([*globals(), *COMPONENTS])
