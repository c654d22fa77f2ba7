"""The Storage APIs' gRPC server: its own port on 127.0.0.1, bound when the local cloud starts
(so `cloud.env()` can export it before any process starts), answering `BigQueryRead` and
`BigQueryWrite` from the warehouse handle.

The methods' message types (`google.cloud.bigquery_storage_v1.types`, about half a second to
import) and the read and write services load on the first call, so binding the port costs
only grpc's import. No stub classes are generated: each method is registered by
its full name with its request parser and response serializer, the raw protobuf messages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc

from vertexkit.local.deferred import Once
from vertexkit.local.lifecycle import Lifecycle

READ_SERVICE = "google.cloud.bigquery.storage.v1.BigQueryRead"
WRITE_SERVICE = "google.cloud.bigquery.storage.v1.BigQueryWrite"
WORKERS = 16  # every open ReadRows or AppendRows stream holds one
UNBOUNDED = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
log = logging.getLogger(__name__)


class BigQueryStorageServer(Lifecycle):
    """Serves the Read and Write APIs on `address` until `close()`."""

    def __init__(self, warehouse: Callable[[], Any], port: int = 0) -> None:
        self._handlers: Once[dict[str, grpc.RpcMethodHandler]] = Once(
            lambda: _method_handlers(warehouse)
        )
        self._server = grpc.server(futures.ThreadPoolExecutor(WORKERS, "vertexkit-bq-storage"),
                                   options=UNBOUNDED)  # fmt: skip
        self._server.add_generic_rpc_handlers([_Lazy(self._handlers)])
        self.port = self._server.add_insecure_port(f"127.0.0.1:{port}")  # loopback only
        if not self.port:
            raise OSError(f"127.0.0.1:{port} is not free for the BigQuery Storage API")
        self._server.start()

    @property
    def address(self) -> str:
        """The gRPC target (`host:port`, no scheme) clients dial."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        """Nothing: the message types load on the first call. Loading them in the warm-up cost
        every local run 0.6 s of CPU (its BigQuery and its tasks share two cores with it) for
        an API most runs never call."""

    def close(self) -> None:
        self._server.stop(grace=None).wait()

    def routes(self) -> list[Any]:
        return []  # gRPC on its own port: nothing on the HTTP server


class _Lazy(grpc.GenericRpcHandler):
    def __init__(self, handlers: Once[dict[str, grpc.RpcMethodHandler]]) -> None:
        self._handlers = handlers

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        return self._handlers.get().get(details.method)


def _method_handlers(warehouse: Callable[[], Any]) -> dict[str, grpc.RpcMethodHandler]:
    from google.cloud.bigquery_storage_v1 import types

    from vertexkit.local.bigquery.storage_api.read import ReadService
    from vertexkit.local.bigquery.storage_api.write import WriteService

    read, write = ReadService(warehouse), WriteService(warehouse)
    unary = [
        (READ_SERVICE, "CreateReadSession", read.create_read_session,
         types.CreateReadSessionRequest),
        (READ_SERVICE, "SplitReadStream", read.split_read_stream, types.SplitReadStreamRequest),
        (WRITE_SERVICE, "CreateWriteStream", write.create_write_stream,
         types.CreateWriteStreamRequest),
        (WRITE_SERVICE, "GetWriteStream", write.get_write_stream, types.GetWriteStreamRequest),
        (WRITE_SERVICE, "FinalizeWriteStream", write.finalize_write_stream,
         types.FinalizeWriteStreamRequest),
        (WRITE_SERVICE, "BatchCommitWriteStreams", write.batch_commit_write_streams,
         types.BatchCommitWriteStreamsRequest),
        (WRITE_SERVICE, "FlushRows", write.flush_rows, types.FlushRowsRequest),
    ]  # fmt: skip
    handlers = {
        f"/{service}/{method}": grpc.unary_unary_rpc_method_handler(
            _unary(answer), request_deserializer=request.pb().FromString,
            response_serializer=_serialize,
        )
        for service, method, answer, request in unary
    }  # fmt: skip
    handlers[f"/{READ_SERVICE}/ReadRows"] = grpc.unary_stream_rpc_method_handler(
        _server_stream(read.read_rows), request_deserializer=types.ReadRowsRequest.pb().FromString,
        response_serializer=_serialize,
    )  # fmt: skip
    handlers[f"/{WRITE_SERVICE}/AppendRows"] = grpc.stream_stream_rpc_method_handler(
        _bidi(write.append_rows), request_deserializer=types.AppendRowsRequest.pb().FromString,
        response_serializer=_serialize,
    )  # fmt: skip
    return handlers


def _serialize(message: Any) -> bytes:
    return message.SerializeToString()


def _abort(context: grpc.ServicerContext, error: Exception) -> None:
    from vertexkit.local.bigquery.query_error import QueryError
    from vertexkit.local.bigquery.storage_api.errors import StorageApiError, from_query_error

    if isinstance(error, QueryError):
        error = from_query_error(error)
    if isinstance(error, StorageApiError):
        context.abort(error.code, error.message)
    log.exception("BigQuery Storage API call failed")
    context.abort(grpc.StatusCode.INTERNAL, f"the local BigQuery failed: {error}")


def _unary(answer: Callable[[Any], Any]) -> Callable[[Any, grpc.ServicerContext], Any]:
    def call(request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return answer(request)
        except Exception as error:  # every fault is a status, never a dropped connection
            _abort(context, error)

    return call


def _server_stream(
    answer: Callable[[Any], Iterator[Any]],
) -> Callable[[Any, grpc.ServicerContext], Iterator[Any]]:
    def call(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        try:
            yield from answer(request)
        except Exception as error:
            _abort(context, error)

    return call


def _bidi(
    answer: Callable[[Iterator[Any]], Iterator[Any]],
) -> Callable[[Iterator[Any], grpc.ServicerContext], Iterator[Any]]:
    def call(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        try:
            yield from answer(requests)
        except Exception as error:
            _abort(context, error)

    return call
