"""A tabular classifier that follows Vertex AI's training conventions (see `task.py`)."""

from __future__ import annotations

__version__ = "0.1.0"
