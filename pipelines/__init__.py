"""Pipelines composed from vertexkit components (installed as `vertexkit.pipelines`).

`training` and `tuning` are the built-ins that `vertexkit compile` writes to `compiled/`.
"""
