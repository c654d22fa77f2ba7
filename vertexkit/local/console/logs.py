"""A training job's logs as the console shows and streams them: `job.log`, then each replica's
(`workerpool0-0.log`, per trial for a tuning job), read from the training runner's folder.

The page shows each file's tail and remembers where it stopped; while the job runs, the page
polls `logs.json?from=FILE:OFFSET...` for the bytes after that. While the job runs only whole
lines are sent (a line, or a UTF-8 character, is never cut in two); once it has ended, the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vertexkit.local.errors import bad_request

TAIL_BYTES = 64 * 1024  # the most a page shows of one file at first, or gets in one poll
MAX_FILES = 200


@dataclass(frozen=True)
class Chunk:
    """`file`'s text from where the reader stopped to `offset` (where it stops now)."""

    file: str
    text: str
    offset: int
    skipped: int = 0  # bytes left out because there were more than TAIL_BYTES new ones


def log_files(job_dir: Path) -> list[tuple[str, Path]]:
    """(name relative to the job's folder, path): job.log first, then replicas by trial."""
    if not job_dir.is_dir():
        return []
    replicas = sorted(job_dir.rglob("workerpool*.log"), key=lambda p: (len(p.parts), p))
    files = [p for p in [job_dir / "job.log", *replicas] if p.is_file()]
    return [(p.relative_to(job_dir).as_posix(), p) for p in files[:MAX_FILES]]


def read_chunk(name: str, path: Path, offset: int, whole_lines: bool) -> Chunk:
    """The bytes after `offset` (the last TAIL_BYTES of them at most)."""
    size = path.stat().st_size
    start = offset if offset <= size else 0  # a shorter file was rewritten: start over
    skipped = max(size - start - TAIL_BYTES, 0)
    with path.open("rb") as file:
        file.seek(start + skipped)
        data = file.read(size - start - skipped)
    if whole_lines and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]  # nothing when no line is complete yet
    end = start + skipped + len(data)
    return Chunk(name, data.decode(errors="replace"), end, skipped)


def parse_offsets(values: list[str]) -> dict[str, int]:
    """`from=FILE:OFFSET` values -> {file: offset}; a bad one is a 400 naming the field."""
    offsets = {}
    for value in values:
        name, _, number = value.rpartition(":")
        if not name or not number.isdigit():
            raise bad_request(f"from: {value!r} is not FILE:OFFSET (an offset in bytes, >= 0).")
        offsets[name] = int(number)
    return offsets


def new_chunks(job_dir: Path, offsets: dict[str, int], running: bool) -> list[Chunk]:
    """Each log file's new text; a file the page has not seen yet starts at its tail."""
    chunks = []
    for name, path in log_files(job_dir):
        chunk = read_chunk(name, path, offsets.get(name, 0), whole_lines=running)
        if chunk.text or chunk.skipped or name not in offsets:
            chunks.append(chunk)
    return chunks
