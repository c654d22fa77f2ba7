"""The local cloud's state databases, checked before anything reads them, and the answer to a
write that fails for want of disk.

A state database (vertex.sqlite, the storage sidecar) is created whole or not at all (built
under a temporary name, then renamed), so an existing file that is empty, is not SQLite, fails
`PRAGMA quick_check` or lacks the schema version row was damaged after we wrote it: the start
is refused with a `StateError` naming the file and a copy of it, never answered by a silently
empty cloud.
"""

from __future__ import annotations

import errno
import filecmp
import os
import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse

from vertexkit.local.errors import ApiError

META_TABLE = "vertexkit_meta"
META_SCHEMA = f"CREATE TABLE IF NOT EXISTS {META_TABLE} (key TEXT PRIMARY KEY, value TEXT);"
# Errors that mean "the disk (or the file size limit) is full", not a bug of ours.
DISK_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


class StateError(ValueError):
    """A state file the local cloud will not start on; the message names it and its copy."""


# -- state databases ---------------------------------------------------------------------------
def open_state_database(path: Path, schema: str, version: int, kind: str) -> sqlite3.Connection:
    """A connection to the state database at `path` (created when absent), checked whole.

    `schema` is idempotent DDL; `kind` names what the file holds ("vertex", "storage")."""
    if not path.exists():
        _create(path, schema, version, kind)
    problem = _problem(path, kind, version)
    if problem:
        raise StateError(_refusal(path, problem))
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(schema)
    return db


def _create(path: Path, schema: str, version: int, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".creating")
    temp.unlink(missing_ok=True)
    db = sqlite3.connect(temp, isolation_level=None)
    try:
        db.executescript(f"BEGIN; {schema} {META_SCHEMA} COMMIT;")
        _stamp(db, version, kind)
    finally:
        db.close()
    os.replace(temp, path)


def _stamp(db: sqlite3.Connection, version: int, kind: str) -> None:
    db.executescript(META_SCHEMA)
    rows = [("kind", kind), ("schema_version", str(version))]
    db.executemany(f"INSERT OR REPLACE INTO {META_TABLE} VALUES (?, ?)", rows)


def _problem(path: Path, kind: str, version: int) -> str | None:
    """What is wrong with an existing state database, or None."""
    if path.stat().st_size == 0:
        return "is empty (0 bytes): its records are gone"
    db = sqlite3.connect(path, isolation_level=None)
    try:
        return _content_problem(db, kind, version)
    except sqlite3.DatabaseError as exc:
        return f"is not a readable SQLite database ({exc})"
    finally:
        db.close()


def _content_problem(db: sqlite3.Connection, kind: str, version: int) -> str | None:
    # quick_check: every page and record, but neither UNIQUE constraints nor each index against
    # its table, in O(N) (SQLite's docs); integrity_check cost 90 ms at every start on a home of
    # 100 pipeline runs (14 MB), 16 ms now. A torn write or a cut file damages pages: both find it.
    checks = [row[0] for row in db.execute("PRAGMA quick_check(5)")]
    if checks != ["ok"]:
        return f"is damaged (quick_check: {'; '.join(checks)})"
    stamped = dict(_meta_rows(db))
    if not stamped:
        return _unstamped_problem(db, kind, version)
    if stamped.get("kind") != kind:
        return f"holds {stamped.get('kind')!r} state, not {kind!r}"
    if int(stamped.get("schema_version") or 0) > version:
        return (
            f"was written by a newer vertexkit (schema {stamped['schema_version']}; "
            f"this one reads up to {version})"
        )
    return None


def _meta_rows(db: sqlite3.Connection) -> list[tuple[str, str]]:
    if not _has_table(db, META_TABLE):
        return []
    return db.execute(f"SELECT key, value FROM {META_TABLE}").fetchall()


def _unstamped_problem(db: sqlite3.Connection, kind: str, version: int) -> str | None:
    """A home from before the version row holds tables but no row: stamp it; anything else
    (a valid but foreign or empty database) is not ours."""
    tables = db.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
    if not tables:
        return "holds no tables: its records are gone"
    _stamp(db, version, kind)
    return None


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    query = "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?"
    return db.execute(query, (name,)).fetchone() is not None


def _refusal(path: Path, problem: str) -> str:
    backup = backup_copy(path)
    return (
        f"State file {path} {problem}. A copy is at {backup}. The local cloud does not start on "
        f"it (that would lose its records silently): restore {path.name} from a copy, or move it "
        "away to start with empty state."
    )


def backup_copy(path: Path) -> Path:
    """Copies the file (and its WAL, if any) to `<file>.damaged-<UTC timestamp>`, once: a copy
    of the same damage kept by an earlier start is named again instead of copied twice."""
    earlier = _earlier_copy(path)
    if earlier:
        return earlier
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    backup = path.with_name(f"{path.name}.damaged-{stamp}")
    shutil.copy2(path, backup)
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        shutil.copy2(wal, backup.with_name(backup.name + "-wal"))
    return backup


def _earlier_copy(path: Path) -> Path | None:
    size = path.stat().st_size
    for copy in sorted(path.parent.glob(f"{path.name}.damaged-*")):
        if copy.name.endswith("-wal") or copy.stat().st_size != size:
            continue
        if filecmp.cmp(path, copy, shallow=False) and _same_wal(path, copy):
            return copy
    return None


def _same_wal(path: Path, copy: Path) -> bool:
    wal, copied = path.with_name(path.name + "-wal"), copy.with_name(copy.name + "-wal")
    if not wal.exists():
        return not copied.exists()
    return copied.exists() and filecmp.cmp(wal, copied, shallow=False)


# -- a full disk -------------------------------------------------------------------------------
def disk_full_error(exc: BaseException) -> ApiError | None:
    """The 507 answer for a write that failed because the disk is full, or None."""
    if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
        where = f" writing {exc.filename}" if exc.filename else ""
        reason = f"{exc.strerror}{where}"
    elif isinstance(exc, sqlite3.OperationalError) and _sqlite_full(exc):
        reason = f"a state database could not be written ({exc})"
    else:
        return None
    return ApiError(
        507,
        f"Insufficient storage: the local cloud's disk is full: {reason}. Free space under "
        "the local cloud's home and retry.",
        reason="insufficientStorage",
        status="RESOURCE_EXHAUSTED",
    )


def _sqlite_full(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code == sqlite3.SQLITE_FULL if code is not None else "disk is full" in str(exc)


async def disk_full_handler(_: Request, exc: Exception) -> JSONResponse:
    """Starlette handler for OSError and sqlite3.OperationalError: a full disk is a 507 with
    the reason; any other error goes on to the server's 500."""
    error = disk_full_error(exc)
    if error is None:
        raise exc
    return JSONResponse(error.body(), status_code=error.code)
