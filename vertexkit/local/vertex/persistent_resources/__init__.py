"""Vertex AI persistent resources: `routes` serves them, `jobs` checks a job naming one."""
