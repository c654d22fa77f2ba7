"""The one lifecycle of the local cloud's parts: each service the server holds and each Vertex
area. The server and the Vertex service call these on every part, in order, with no check of
what a part has: a part overrides only what it does."""

from __future__ import annotations


class Lifecycle:
    def start(self) -> None:
        """Loads what the part deferred and starts its background work. Idempotent: a second
        call returns at once, or raises again what the first raised (a refused state file)."""

    def warm(self) -> None:
        """Starts what a request is likely to need (a deployed model's framework), once nothing
        is importing any more: two threads importing at once can deadlock an import."""

    def close(self) -> None:
        """Ends the part's work (its jobs and processes) and frees its files."""
