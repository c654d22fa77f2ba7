"""The Storage APIs' errors as Google gives them: a gRPC status code and a message."""

from __future__ import annotations

import grpc

from vertexkit.local.bigquery.query_error import QueryError

# BigQuery's REST error reasons -> the gRPC code the Storage APIs answer the same fault with.
REASON_CODES = {
    "notFound": grpc.StatusCode.NOT_FOUND,
    "duplicate": grpc.StatusCode.ALREADY_EXISTS,
    "accessDenied": grpc.StatusCode.PERMISSION_DENIED,
    "notImplemented": grpc.StatusCode.UNIMPLEMENTED,
}


class StorageApiError(Exception):
    """A request the Storage API refuses: the status code and message the caller sees."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(field: str, problem: str) -> StorageApiError:
    """INVALID_ARGUMENT naming the request field, as Google's messages do."""
    return StorageApiError(grpc.StatusCode.INVALID_ARGUMENT, f"{field}: {problem}")


def from_query_error(error: QueryError) -> StorageApiError:
    """A warehouse refusal (a missing table, a bad row restriction) in the Storage API's form."""
    code = REASON_CODES.get(error.reason, grpc.StatusCode.INVALID_ARGUMENT)
    if error.message.startswith("not supported by the local BigQuery"):
        code = grpc.StatusCode.UNIMPLEMENTED  # a local refusal, never Google's answer
    return StorageApiError(code, error.message)
