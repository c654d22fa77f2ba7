"""Placeholder until this area is built: registers no routes."""

from __future__ import annotations

from vertexkit.local.vertex.backend import VertexBackend
from vertexkit.local.vertex.router import VertexRouter


def register(router: VertexRouter, backend: VertexBackend) -> object:
    return object()
