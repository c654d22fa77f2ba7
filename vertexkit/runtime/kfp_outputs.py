"""Small helpers for writing KFP output artifacts from component bodies."""

from __future__ import annotations

import json
import os
from typing import Any


def write_json(path: str, value: Any) -> None:
    """Writes `value` as the artifact's file.

    Metrics-like artifacts carry their values in metadata, but `kfp.local` treats an output
    whose file is missing as a cache miss; a real file keeps cached runs cached (and is a
    readable copy of the values on Cloud Storage).
    """
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as handle:
        json.dump(value, handle, indent=2, sort_keys=True, default=str)
