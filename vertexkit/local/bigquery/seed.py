"""Public seed data: `bigquery-public-data.ml_datasets.penguins`, filled from the real Palmer
Penguins data so that a query written against BigQuery's public table runs unchanged here.

BigQuery's table was built from the raw LTER data (`penguins_raw`), not from the tidied
`penguins` frame: species are the long names ("Adelie Penguin (Pygoscelis adeliae)", ...), sex is
"MALE"/"FEMALE" (NULL when unknown), every measurement is FLOAT64. The raw frame that the
`palmerpenguins` package ships gives exactly those values; rows keep the package's order.
"""

from __future__ import annotations

import pandas as pd

from vertexkit.local.bigquery.models import Warehouse
from vertexkit.local.bigquery.sql import TableName

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


def penguins_frame() -> pd.DataFrame:
    from palmerpenguins import load_penguins_raw

    raw = load_penguins_raw()
    frame = raw[list(RAW_COLUMNS)].rename(columns=RAW_COLUMNS)
    for column in ("culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"):
        frame[column] = frame[column].astype("float64")
    frame["sex"] = frame["sex"].where(frame["sex"].isin(["MALE", "FEMALE"]), None)
    return frame.reset_index(drop=True)


def seed_public_data(warehouse: Warehouse) -> None:
    """Creates the penguins table on first start; leaves an existing one alone."""
    with warehouse.transaction() as cur:
        if warehouse.table_kind(cur, PENGUINS) is not None:
            return
    warehouse.create_dataset(PENGUINS.project, PENGUINS.dataset, {}, exists_ok=True)
    frame = penguins_frame()
    with warehouse.transaction() as cur:
        warehouse.create_table(cur, PENGUINS, PENGUIN_FIELDS, replace=True)
        cur.register("penguins_frame", frame)
        try:
            cur.execute(f"INSERT INTO {PENGUINS.sql} BY NAME SELECT * FROM penguins_frame")
        finally:
            cur.unregister("penguins_frame")
