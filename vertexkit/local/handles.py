"""What a service may know of the local cloud that holds it, built by the server: never the
server itself, so no service reaches another's state or routes through it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vertexkit.context import CloudContext


@dataclass(frozen=True)
class CloudHandles:
    env: Callable[[], dict[str, str]]  # the exports that point Google's clients at the cloud
    context: Callable[[], CloudContext]  # the same, as a client context
    warehouse: Callable[[], Any]  # BigQuery's DuckDB warehouse (built on first use)
