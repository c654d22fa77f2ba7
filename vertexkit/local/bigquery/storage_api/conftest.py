"""Google's Storage API clients on the local cloud's gRPC port, as a user builds them against an
emulator: a transport on a plaintext channel (a process started by the local cloud gets the
same from the client hook with no arguments at all)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import grpc
import pytest
from google.cloud import bigquery
from google.cloud.bigquery_storage_v1 import BigQueryReadClient, BigQueryWriteClient
from google.cloud.bigquery_storage_v1.services.big_query_read.transports import (
    BigQueryReadGrpcTransport,
)
from google.cloud.bigquery_storage_v1.services.big_query_write.transports import (
    BigQueryWriteGrpcTransport,
)

from vertexkit.local import LocalCloud

_datasets = itertools.count()


@pytest.fixture(scope="module")
def read_client(local_cloud: LocalCloud) -> BigQueryReadClient:
    target = local_cloud.context().bigquery_storage_endpoint
    assert target
    return BigQueryReadClient(transport=BigQueryReadGrpcTransport(
        channel=grpc.insecure_channel(target)))  # fmt: skip


@pytest.fixture(scope="module")
def write_client(local_cloud: LocalCloud) -> BigQueryWriteClient:
    target = local_cloud.context().bigquery_storage_endpoint
    assert target
    return BigQueryWriteClient(transport=BigQueryWriteGrpcTransport(
        channel=grpc.insecure_channel(target)))  # fmt: skip


@pytest.fixture(scope="module")
def bq(local_cloud: LocalCloud) -> bigquery.Client:
    return local_cloud.context().bigquery_client()


@pytest.fixture
def dataset(bq: bigquery.Client) -> Iterator[str]:
    name = f"storage_api_{next(_datasets)}"
    bq.create_dataset(name)
    yield name
    bq.delete_dataset(name, delete_contents=True)
