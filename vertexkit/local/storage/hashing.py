"""MD5 and CRC32C as Cloud Storage reports them (base64 of the big-endian digest)."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import BinaryIO

import google_crc32c

CHUNK = 1024 * 1024


class Hasher:
    """Running md5 + crc32c over the bytes of an object, with the count of bytes seen."""

    def __init__(self) -> None:
        self._md5 = hashlib.md5(usedforsecurity=False)
        self._crc = google_crc32c.Checksum()
        self.size = 0

    def update(self, data: bytes | memoryview) -> None:
        self._md5.update(data)
        self._crc.update(bytes(data) if isinstance(data, memoryview) else data)
        self.size += len(data)

    @property
    def md5(self) -> str:
        return base64.b64encode(self._md5.digest()).decode()

    @property
    def crc32c(self) -> str:
        return base64.b64encode(self._crc.digest()).decode()


def hash_file(path: Path | str) -> Hasher:
    hasher = Hasher()
    with open(path, "rb") as stream:
        feed(hasher, stream)
    return hasher


def feed(hasher: Hasher, stream: BinaryIO, out: BinaryIO | None = None) -> None:
    """Hashes a stream to its end, copying it to `out` if given."""
    while chunk := stream.read(CHUNK):
        hasher.update(chunk)
        if out is not None:
            out.write(chunk)


def copy_hashed(source: Path, target: Path) -> Hasher:
    """Copies `source` to `target` (a new file), hashing on the way."""
    hasher = Hasher()
    with open(source, "rb") as src, open(target, "wb") as dst:
        feed(hasher, src, dst)
    return hasher
