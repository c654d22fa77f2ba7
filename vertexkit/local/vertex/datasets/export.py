"""A tabular dataset exported for a training pipeline's trainer, as Vertex exports it.

The rows are split (fraction, predefined or timestamp split; 80/10/10 when none is named) and
written where `inputDataConfig` says:
- `gcsDestination`: CSV with a header under
  `<outputUriPrefix>/dataset-<id>-tables-<timestamp>/{training,validation,test}-00000-of-00001.csv`,
  AIP_DATA_FORMAT=csv and AIP_*_DATA_URI the `.../training-*` wildcards;
- `bigqueryDestination`: tables `training`, `validation`, `test` in a new BigQuery dataset
  `dataset_<id>_tables_<timestamp>` of the project, AIP_DATA_FORMAT=bigquery and the URIs
  `bq://project.dataset_..._<timestamp>.training` etc.
"""

from __future__ import annotations

import zlib
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from vertexkit.local.bigquery.table_name import TableName
from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.datasets.sources import read_frame
from vertexkit.local.vertex.store import Resource
from vertexkit.specs.datasets import PREDEFINED_VALUES, fractions_of

if TYPE_CHECKING:  # the frames come from `read_frame`, which loads pandas when a dataset is read
    import pandas as pd

SPLITS = ("training", "validation", "test")
ENV_NAMES = {
    "training": "AIP_TRAINING_DATA_URI",
    "validation": "AIP_VALIDATION_DATA_URI",
    "test": "AIP_TEST_DATA_URI",
}


class ExportError(ValueError):
    """The dataset cannot be split as asked (a missing column): fails the pipeline."""


def export_splits(
    backend: VertexBackend, dataset: Resource, config: dict[str, Any]
) -> dict[str, str]:
    """Writes the splits where `config` says; returns the AIP_* variables the trainer gets."""
    frame = read_frame(backend, dataset)
    parts = split_rows(frame, config, seed=zlib.crc32(dataset["name"].encode()))
    dataset_id = dataset["name"].rsplit("/", 1)[1]
    now = datetime.now(timezone.utc)
    if config.get("bigqueryDestination"):
        project = config["bigqueryDestination"]["outputUri"].removeprefix("bq://")
        return write_bigquery(backend, parts, project, bigquery_dataset_name(dataset_id, now))
    prefix = config["gcsDestination"]["outputUriPrefix"].rstrip("/")
    folder = f"{prefix}/dataset-{dataset_id}-tables-{now.isoformat(timespec='milliseconds')}"
    return write_csv(backend, parts, folder.replace("+00:00", "Z"))


def bigquery_dataset_name(dataset_id: str, now: datetime) -> str:
    stamp = now.strftime("%Y_%m_%dT%H_%M_%S_") + f"{now.microsecond // 1000:03d}Z"
    return f"dataset_{dataset_id}_tables_{stamp}"


# -- splitting ------------------------------------------------------------------------------------
def split_rows(frame: pd.DataFrame, config: dict[str, Any], seed: int) -> dict[str, pd.DataFrame]:
    if config.get("predefinedSplit"):
        return predefined(frame, config["predefinedSplit"]["key"])
    if config.get("timestampSplit"):
        key = config["timestampSplit"]["key"]
        _require_column(frame, key, "timestampSplit")
        ordered = frame.sort_values(key, kind="stable").reset_index(drop=True)
        return by_fractions(ordered, fractions_of(config))
    import numpy as np  # with the frame's pandas: not at import, Vertex's areas load on start

    shuffled = frame.iloc[np.random.default_rng(seed).permutation(len(frame))]
    return by_fractions(shuffled.reset_index(drop=True), fractions_of(config))


def by_fractions(
    frame: pd.DataFrame, fractions: tuple[float, float, float]
) -> dict[str, pd.DataFrame]:
    """Consecutive slices of `frame`; rows past the fractions' sum are left out, as on Vertex."""
    import numpy as np

    bounds = np.rint(np.cumsum([0.0, *fractions]) * len(frame)).astype(int)
    return {name: frame.iloc[bounds[i] : bounds[i + 1]] for i, name in enumerate(SPLITS)}


def predefined(frame: pd.DataFrame, key: str) -> dict[str, pd.DataFrame]:
    """Rows go where their `key` column says; other values are ignored (Vertex's rule)."""
    _require_column(frame, key, "predefinedSplit")
    return {name: frame[frame[key] == name] for name in PREDEFINED_VALUES}


def _require_column(frame: pd.DataFrame, key: str, split: str) -> None:
    if key not in frame.columns:
        raise ExportError(
            f"inputDataConfig.{split}.key: the dataset has no column {key!r}; its columns are "
            f"{', '.join(map(str, frame.columns))}"
        )


# -- writing --------------------------------------------------------------------------------------
def write_csv(
    backend: VertexBackend, parts: dict[str, pd.DataFrame], folder: str
) -> dict[str, str]:
    env = {"AIP_DATA_FORMAT": "csv"}
    bucket, _, path = folder.removeprefix("gs://").partition("/")
    for split, rows in parts.items():
        data = rows.to_csv(index=False).encode()
        backend.storage.write_object(bucket, f"{path}/{split}-00000-of-00001.csv", data, "text/csv")
        env[ENV_NAMES[split]] = f"{folder}/{split}-*"
    return env


def write_bigquery(
    backend: VertexBackend, parts: dict[str, pd.DataFrame], project: str, dataset: str
) -> dict[str, str]:
    warehouse = backend.cloud.warehouse()
    warehouse.create_dataset(project, dataset, {"location": "US"})
    env = {"AIP_DATA_FORMAT": "bigquery"}
    for split, rows in parts.items():
        table = TableName(project, dataset, split)
        with warehouse.transaction(table) as cur:
            cur.register("split_rows", rows)
            cur.execute(f"CREATE TABLE {table.sql} AS SELECT * FROM split_rows")
            cur.unregister("split_rows")
            warehouse.touch_table(cur, table)
        env[ENV_NAMES[split]] = f"bq://{project}.{dataset}.{split}"
    return env
