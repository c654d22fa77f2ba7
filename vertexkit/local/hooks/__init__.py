"""A folder for PYTHONPATH: `sitecustomize` points Google's clients at the local cloud.

Processes the local cloud starts get it from `process_env`; `vertexkit local exec` gives it to
a user's command. It is imported as top-level modules there (not as `vertexkit.local.hooks`),
so a process pays only for this folder's two small modules, never for vertexkit's.
"""

from pathlib import Path

HOOKS_DIR = Path(__file__).resolve().parent
