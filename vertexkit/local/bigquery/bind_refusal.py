"""A refusal DuckDB raises while it binds a statement, before any row is read, as BigQuery
refuses a query whatever rows it would see: the one mechanism behind the GEOGRAPHY checks
(`geography_checks`) and the INTERVAL ones (`intervals`).

`refused_when(condition, message)` is SQL that is TRUE, folded to a constant by DuckDB's
optimizer, unless `condition` (a test of `typeof(...)`, which DuckDB resolves while binding)
holds, when binding fails. `struct_extract` needs a constant key, so a key built from the
message fails the bind with "Could not find key ... in struct"; `refusal` reads the message back
out of DuckDB's error (`jobs._duckdb_message`). DuckDB's `error()` would do the same at run time
only, and is volatile: refused where a window's PARTITION BY or ORDER BY holds the check.
"""

from __future__ import annotations

import re

REFUSED = "bq-refused: "  # the struct key's prefix, read back by `refusal`
REFUSAL = re.compile(rf'Could not find key "{REFUSED}(.*)" in struct')


def refused_when(condition: str, message: str) -> str:
    """SQL: TRUE, or a failed bind with `message` (SQL text) where `condition` (SQL) holds."""
    return (
        f"struct_extract({{'ok': TRUE}}, CASE WHEN {condition} THEN '{REFUSED}' || {message} "
        "ELSE 'ok' END)"
    )


def refusal(duckdb_message: str) -> str | None:
    """The message of a failed `refused_when`, from DuckDB's error; else None."""
    match = REFUSAL.search(duckdb_message)
    return match.group(1) if match else None
