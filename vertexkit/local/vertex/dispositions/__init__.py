"""Every field a Vertex AI create/update request can carry, and what the local cloud does with it.

Requests are parsed with the `aiplatform_v1` types, so an unknown field is already a 400; the
gap this closes is a KNOWN field accepted and silently ignored. Each (message, field) reachable
from a request's resource message has one declared disposition (`table.py`); the tests walk
Google's descriptors and fail on a field with none, so a new field in a new client release is
decided, not ignored.

`python -m vertexkit.local.vertex.dispositions --write` regenerates docs/field-dispositions.md.
"""

from vertexkit.local.vertex.dispositions.model import (
    HONOURED,
    NO_LOCAL_EFFECT,
    OUTPUT_ONLY,
    REFUSED,
    UNDECIDED,
    Disposition,
    FieldRef,
)
from vertexkit.local.vertex.dispositions.walk import ROOTS, walk_roots

__all__ = [
    "HONOURED",
    "NO_LOCAL_EFFECT",
    "OUTPUT_ONLY",
    "REFUSED",
    "ROOTS",
    "UNDECIDED",
    "Disposition",
    "FieldRef",
    "walk_roots",
]
