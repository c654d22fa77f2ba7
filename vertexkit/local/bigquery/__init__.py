"""Local BigQuery: the v2 REST API over DuckDB."""
