"""What the console reads, handed to it by the server: the services' read side, never the
local cloud itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vertexkit.local.storage.routes import StorageService
from vertexkit.local.vertex.router import Handler
from vertexkit.local.vertex.store import ResourceStore


@dataclass(frozen=True)
class ConsoleSources:
    project: str
    vertex_store: ResourceStore  # every Vertex resource, as the REST API answers it
    vertex_home: Path  # job and pipeline logs
    storage: StorageService
    registry: Callable[[], Any]  # the model registry area: models, versions, endpoints
    warehouse: Callable[[], Any]  # BigQuery's DuckDB warehouse (built on first use)
    # A Vertex REST handler for (method, path), the console's actions call it as REST does.
    resolve_vertex: Callable[[str, str], tuple[Handler, dict[str, str]] | None]
    # A resource name as the Vertex store keys it (the project's ID where a URL has its number).
    vertex_key: Callable[[str], str]
    # A page's names and links with the project number, as the APIs and the CLI show them.
    vertex_shown: Callable[[str], str]
