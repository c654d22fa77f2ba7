"""Placeholder: the BigQuery v2 REST routes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.routing import BaseRoute


class BigQueryService:
    def __init__(self, home: Path, storage: Any, cloud: Any) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)

    def routes(self) -> list[BaseRoute]:
        return []
