"""The public penguins table as the seed reads the package's CSV (`raw_csv`, typed by
`typed_select`) holds the same rows, in the same order, as the package's own pandas reading
(`penguins_frame`)."""

from __future__ import annotations

import math
import subprocess
import sys

import duckdb

from vertexkit.local.bigquery.seed import RAW_COLUMNS, penguins_frame, raw_csv, typed_select


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _same(a: object, b: object) -> bool:
    """Equal, or both missing (DuckDB's NULL is pandas' NaN or None)."""
    return (_missing(a) and _missing(b)) or a == b


def test_the_seed_reads_the_csv_as_palmerpenguins_reads_it() -> None:
    connection = duckdb.connect()
    connection.register("penguins_raw", raw_csv())
    rows = connection.execute(typed_select("penguins_raw")).fetchall()
    frame = penguins_frame()
    expected = [tuple(row) for row in frame.itertuples(index=False)]
    assert len(rows) == len(expected) == 344
    assert list(frame.columns) == list(RAW_COLUMNS.values())
    differing = [
        (at, got, want)
        for at, (got, want) in enumerate(zip(rows, expected, strict=True))
        if not all(_same(g, w) for g, w in zip(got, want, strict=True))
    ]
    assert differing == []
    sexes = {row[-1] for row in rows}
    assert sexes == {"MALE", "FEMALE", None}  # "." and NA read as unknown
    assert sum(row[2] is None for row in rows) == 2  # the two rows with no measurements


def test_reading_the_seed_imports_no_pandas() -> None:
    """A new home's start reads the CSV before its first request; pandas (0.2 s of CPU) is not
    needed for that, and `palmerpenguins`' own `__init__` would import it."""
    code = (
        "import sys\n"
        "from vertexkit.local.bigquery.seed import raw_csv\n"
        "assert raw_csv().num_rows == 344\n"
        "print(sorted(m for m in ('pandas', 'palmerpenguins') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
