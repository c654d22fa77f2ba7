"""The warehouse file (`bigquery.duckdb`) checked whole at the local cloud's start, before any
service opens it, with nothing heavier than a read of its headers (DuckDB itself loads later, in
the warm-up: a damaged file found then would have let the cloud print its exports and answer
Vertex and Storage requests first).

DuckDB's file is a main header (the magic `DUCK` at byte 8), two database headers at 4 KiB and
8 KiB (the one with the higher iteration is current: where its metadata and free list start,
and the block size), then the blocks. A file DuckDB wrote is never empty and holds every block
its current header points to (its block count is not a bound: DuckDB truncates free blocks off
the end without lowering it), so a file that is empty, has no header, or ends before the
metadata was cut after it was written: the start is refused, naming the file and a copy of it.
A cut that leaves the metadata but loses table data is found when DuckDB opens the file
(`Warehouse`, `models.open_database`): a table whose blocks lie past the end.
"""

from __future__ import annotations

import struct
from pathlib import Path

from vertexkit.local.state import StateError, backup_copy

DATABASE_FILE = "bigquery.duckdb"  # under the BigQuery service's own folder
HEADER_SIZE = 4096
MAGIC = b"DUCK"
MAGIC_OFFSET = 8
DATABASE_HEADERS = (HEADER_SIZE, 2 * HEADER_SIZE)
# A database header: checksum, iteration, meta block, free list, block count, block size (u64).
DATABASE_HEADER = struct.Struct("<6Q")
NO_BLOCK = 2**64 - 1  # an empty database's meta block and free list
BLOCK_ID_BITS = 2**56 - 1  # a meta block pointer: the block id, and an index in its top byte


class DamagedDatabaseError(StateError):
    """The warehouse file cannot be opened: the service refuses to start rather than start
    empty; the message names the file and the copy kept of it."""

    def __init__(self, path: Path, why: str) -> None:
        backup = backup_copy(path)
        super().__init__(
            f"The local BigQuery cannot start: {path} is damaged ({why}); a copy was kept as "
            f"{backup}. The file is left as it is so no table is lost silently: restore it from "
            "a backup, or move it aside to start with an empty BigQuery (which loses its tables)."
        )
        self.path = path
        self.backup = backup


def check_warehouse_file(path: Path) -> None:
    """Raises DamagedDatabaseError for a warehouse file that is cut short; absent is fine (the
    first start creates it)."""
    if not path.exists():
        return
    problem = _problem(path)
    if problem:
        raise DamagedDatabaseError(path, problem)


def _problem(path: Path) -> str | None:
    size = path.stat().st_size
    if size == 0:
        return "it is empty (0 bytes)"
    with path.open("rb") as file:
        head = file.read(3 * HEADER_SIZE)
    if len(head) < 3 * HEADER_SIZE or head[MAGIC_OFFSET : MAGIC_OFFSET + 4] != MAGIC:
        return f"it is not a DuckDB database ({size} bytes, no DuckDB header)"
    headers = [DATABASE_HEADER.unpack_from(head, offset) for offset in DATABASE_HEADERS]
    _, _, meta_block, free_list, _, block_size = max(headers, key=lambda header: header[1])
    blocks_in_file = (size - 3 * HEADER_SIZE) // block_size if block_size else 0
    for pointer in (meta_block, free_list):
        if pointer != NO_BLOCK and (pointer & BLOCK_ID_BITS) >= blocks_in_file:
            return (
                f"it is cut short: {size} bytes, {blocks_in_file} blocks, and its header points "
                f"to block {pointer & BLOCK_ID_BITS}"
            )
    return None


def cut_table(size: int, block_size: int, max_block_id: int) -> str | None:
    """The problem of a file of `size` bytes whose tables use blocks up to `max_block_id`."""
    blocks_in_file = (size - 3 * HEADER_SIZE) // block_size
    if max_block_id >= blocks_in_file:
        return (
            f"it is cut short: {size} bytes, {blocks_in_file} blocks, and a table's data is in "
            f"block {max_block_id}"
        )
    return None
