"""Small-object upload throughput of the local Cloud Storage (issue 12, part 5).

UPLOADS objects of 1 KiB each through google-cloud-storage (`blob.upload_from_string`) against
the local cloud, against writing the same bytes to as many plain files, in the same run. The
ratio is what the REST round trip and the object metadata commit cost.

    .venv/bin/python -m benchmarks storage_uploads   [UPLOADS=1000]
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from vertexkit.local import LocalCloud

UPLOADS = int(os.environ.get("UPLOADS", 1000))
PAYLOAD = os.urandom(1024)


def through_the_client(home: Path) -> float:
    with LocalCloud(home=home) as cloud:
        bucket = cloud.context().storage_client().create_bucket("uploads-benchmark")
        bucket.blob("warm").upload_from_string(PAYLOAD)  # warm the connection pool
        started = time.perf_counter()
        for index in range(UPLOADS):
            bucket.blob(f"objects/{index:05d}.bin").upload_from_string(PAYLOAD)
        return time.perf_counter() - started


def plain_files(folder: Path) -> float:
    (folder / "objects").mkdir()
    started = time.perf_counter()
    for index in range(UPLOADS):
        (folder / "objects" / f"{index:05d}.bin").write_bytes(PAYLOAD)
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as folder:
        local = through_the_client(Path(home))
        plain = plain_files(Path(folder))
    print(f"{UPLOADS} uploads of {len(PAYLOAD)} bytes")
    print(f"{'':<28}{'per second':>12}{'per upload':>12}")
    for name, seconds in (("local Cloud Storage", local), ("plain file writes", plain)):
        print(f"{name:<28}{UPLOADS / seconds:>12.0f}{seconds / UPLOADS * 1000:>10.3f}ms")
    print(f"ratio: {local / plain:.0f}x")


if __name__ == "__main__":
    main()
