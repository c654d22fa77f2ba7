"""Local Cloud Storage: the JSON API over files under VERTEXKIT_HOME/storage."""
