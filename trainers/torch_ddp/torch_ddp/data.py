"""Tables from gs:// or local paths (a file, a folder of files, or a `*` glob of Parquet, CSV or
JSONL) and their features: numbers standardised, categories one-hot, the label as class ids."""

from __future__ import annotations

import io
import json
import os
from dataclasses import asdict, dataclass
from typing import Any

import fsspec
import numpy as np
import pandas as pd

READERS = {".parquet": pd.read_parquet, ".csv": pd.read_csv, ".jsonl": None, ".json": None}


def storage_options(uri: str) -> dict[str, Any]:
    """fsspec options: the emulator named by STORAGE_EMULATOR_HOST, else default credentials."""
    emulator = os.environ.get("STORAGE_EMULATOR_HOST")
    if not uri.startswith("gs://") or not emulator:
        return {}
    os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
    endpoint = emulator if "://" in emulator else f"http://{emulator}"
    return {"endpoint_url": endpoint, "token": "anon"}


def filesystem(uri: str) -> tuple[fsspec.AbstractFileSystem, str]:
    return fsspec.core.url_to_fs(uri, **storage_options(uri))


def _files(uri: str) -> list[str]:
    fs, path = filesystem(uri)
    if "*" in path:
        found = fs.glob(path)
    elif fs.isdir(path):
        found = [p for p in fs.find(path) if os.path.splitext(p)[1] in READERS]
    else:
        found = [path]
    if not found:
        raise FileNotFoundError(f"no data files at {uri}")
    return sorted(found)


def read_table(uri: str) -> pd.DataFrame:
    fs, _ = filesystem(uri)
    frames = []
    for path in _files(uri):
        with fs.open(path, "rb") as handle:
            content = io.BytesIO(handle.read())
        reader = READERS.get(os.path.splitext(path)[1])
        frames.append(reader(content) if reader else pd.read_json(content, lines=True))
    return pd.concat(frames, ignore_index=True)


def write_bytes(uri: str, content: bytes) -> None:
    fs, path = filesystem(uri)
    fs.makedirs(os.path.dirname(path), exist_ok=True)
    with fs.open(path, "wb") as handle:
        handle.write(content)


def read_bytes(uri: str) -> bytes | None:
    fs, path = filesystem(uri)
    if not fs.exists(path):
        return None
    with fs.open(path, "rb") as handle:
        return handle.read()


@dataclass
class Features:
    """How raw rows become the model's input: fitted on the training rows, saved with the model."""

    label: str
    classes: list[str]
    numeric: list[str]
    means: list[float]
    stds: list[float]
    categories: dict[str, list[str]]

    @classmethod
    def fit(cls, frame: pd.DataFrame, label: str) -> Features:
        inputs = frame.drop(columns=[label])
        numeric = [c for c in inputs.columns if pd.api.types.is_numeric_dtype(inputs[c])]
        values = inputs[numeric].astype("float64")
        categorical = [c for c in inputs.columns if c not in numeric]
        return cls(
            label=label,
            classes=sorted(str(v) for v in frame[label].dropna().unique()),
            numeric=numeric,
            means=[float(m) for m in values.mean()],
            stds=[float(s) or 1.0 for s in values.std().fillna(1.0)],
            categories={
                c: sorted(str(v) for v in inputs[c].dropna().unique()) for c in categorical
            },
        )

    @property
    def width(self) -> int:
        return len(self.numeric) + sum(len(values) for values in self.categories.values())

    def matrix(self, frame: pd.DataFrame) -> np.ndarray:
        numbers = (frame[self.numeric].astype("float64") - self.means) / self.stds
        columns = [numbers.fillna(0.0).to_numpy()]
        for column, values in self.categories.items():
            text = frame[column].astype(str)
            columns.append(np.stack([(text == v).to_numpy() for v in values], axis=1))
        return np.concatenate(columns, axis=1).astype("float32")

    def targets(self, frame: pd.DataFrame) -> np.ndarray:
        index = {name: i for i, name in enumerate(self.classes)}
        return frame[self.label].astype(str).map(index).to_numpy(dtype="int64")

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)
