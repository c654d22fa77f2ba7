"""The component runtime: the engine behind each component's typed face.

Components parse their inputs, call ONE function from here, and write their outputs. Everything
here talks to Google Cloud only through the clients a `vertexkit.context.CloudContext` builds, so
the same code drives Vertex AI and the local cloud.

Shared building blocks:
- `gcp_resources`: GCPC's `GcpResources` JSON, written as soon as a resource exists and read back to
  resume that resource on a retry.
- `polling`: exponential backoff polling (sub-second first, capped).
- `cancellation`: SIGTERM cancels the resource being polled, then the process exits.
"""

from __future__ import annotations
