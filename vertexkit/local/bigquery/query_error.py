"""BigQuery's answer for a query it rejects, and the local BigQuery's refusal of a construct it
cannot answer as BigQuery does."""

from __future__ import annotations


class QueryError(Exception):
    """A query BigQuery would reject; `reason` is BigQuery's error reason."""

    def __init__(self, message: str, reason: str = "invalidQuery") -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


def not_supported(construct: str) -> QueryError:
    """A 400 invalidQuery naming the construct: never a different answer from BigQuery's."""
    return QueryError(f"not supported by the local BigQuery: {construct}")
