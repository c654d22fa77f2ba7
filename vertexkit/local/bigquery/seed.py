"""Public seed data: `bigquery-public-data.ml_datasets.penguins`, filled from the real Palmer
Penguins data so that a query written against BigQuery's public table runs unchanged here.

BigQuery's table was built from the raw LTER data (`penguins_raw`), not from the tidied
`penguins` frame: species are the long names ("Adelie Penguin (Pygoscelis adeliae)", ...), sex is
"MALE"/"FEMALE" (NULL when unknown), every measurement is FLOAT64. The raw CSV that the
`palmerpenguins` package ships gives exactly those values; rows keep the package's order.

The CSV is read with pyarrow, as `palmerpenguins.load_penguins_raw` reads it (pandas' `read_csv`:
`NA` and empty fields are missing), and typed in DuckDB: the local cloud's start on a new home
then needs no pandas (0.13 s of CPU before the first request). The warehouse reads no files
itself (its file system is switched off), so the rows come in as an Arrow table.
`penguins_frame` is the package's own reading, kept for the test that holds the two equal and for
the benchmarks.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from vertexkit.local.bigquery.models import Warehouse
from vertexkit.local.bigquery.sql import TableName

if TYPE_CHECKING:
    import pandas as pd

PENGUINS = TableName("bigquery-public-data", "ml_datasets", "penguins")
PENGUIN_FIELDS = [
    {"name": "species", "type": "STRING", "mode": "NULLABLE"},
    {"name": "island", "type": "STRING", "mode": "NULLABLE"},
    {"name": "culmen_length_mm", "type": "FLOAT", "mode": "NULLABLE"},
    {"name": "culmen_depth_mm", "type": "FLOAT", "mode": "NULLABLE"},
    {"name": "flipper_length_mm", "type": "FLOAT", "mode": "NULLABLE"},
    {"name": "body_mass_g", "type": "FLOAT", "mode": "NULLABLE"},
    {"name": "sex", "type": "STRING", "mode": "NULLABLE"},
]
RAW_COLUMNS = {
    "Species": "species",
    "Island": "island",
    "Culmen Length (mm)": "culmen_length_mm",
    "Culmen Depth (mm)": "culmen_depth_mm",
    "Flipper Length (mm)": "flipper_length_mm",
    "Body Mass (g)": "body_mass_g",
    "Sex": "sex",
}


MEASUREMENTS = ("culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g")


def raw_csv_path() -> Path:
    """Where the package keeps its raw CSV, found without running the package's `__init__`:
    that imports pandas (`importlib.resources.files` runs it)."""
    spec = importlib.util.find_spec("palmerpenguins")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the palmerpenguins package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "penguins-raw.csv"


def raw_csv() -> pa.Table:
    """The package's raw CSV, every field as text, `NA` and empty fields null."""
    from pyarrow import csv

    path = raw_csv_path()
    with path.open("rb") as stream:
        header = stream.readline().decode().strip().split(",")
    options = csv.ConvertOptions(
        column_types={name: pa.string() for name in header},
        null_values=["NA", ""],
        strings_can_be_null=True,
    )
    with path.open("rb") as stream:
        return csv.read_csv(stream, convert_options=options)


def typed_select(relation: str) -> str:
    """The table's columns from the raw CSV's text fields in `relation`, typed as
    `penguins_frame` types them."""
    columns = []
    for raw, column in RAW_COLUMNS.items():
        field = f'"{raw}"'
        if column in MEASUREMENTS:
            columns.append(f"CAST({field} AS DOUBLE) AS {column}")
        elif column == "sex":
            columns.append(f"CASE WHEN {field} IN ('MALE', 'FEMALE') THEN {field} END AS sex")
        else:
            columns.append(f"{field} AS {column}")
    return f"SELECT {', '.join(columns)} FROM {relation}"


def penguins_frame() -> pd.DataFrame:
    from palmerpenguins import load_penguins_raw

    raw = load_penguins_raw()
    frame = raw[list(RAW_COLUMNS)].rename(columns=RAW_COLUMNS)
    for column in MEASUREMENTS:
        frame[column] = frame[column].astype("float64")
    frame["sex"] = frame["sex"].where(frame["sex"].isin(["MALE", "FEMALE"]), None)
    return frame.reset_index(drop=True)


def seed_public_data(warehouse: Warehouse) -> None:
    """Creates the penguins table on first start; leaves an existing one alone."""
    with warehouse.transaction() as cur:
        if warehouse.table_kind(cur, PENGUINS) is not None:
            return
    warehouse.create_dataset(PENGUINS.project, PENGUINS.dataset, {}, exists_ok=True)
    with warehouse.transaction() as cur:
        warehouse.create_table(cur, PENGUINS, PENGUIN_FIELDS, replace=True)
        cur.register("penguins_raw", raw_csv())
        try:
            cur.execute(f"INSERT INTO {PENGUINS.sql} BY NAME {typed_select('penguins_raw')}")
        finally:
            cur.unregister("penguins_raw")
