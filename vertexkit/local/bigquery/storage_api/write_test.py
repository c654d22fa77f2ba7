"""The Storage Write API through google-cloud-bigquery-storage's BigQueryWriteClient and its
`writer.AppendRowsStream`. Expected values come from Google's page "Stream data using the
Storage Write API" (default, committed and pending types) and the proto comments of
`google/cloud/bigquery/storage/v1/storage.proto` (AppendRowsRequest.offset, AppendRowsResponse
.error, BatchCommitWriteStreamsResponse, FlushRowsRequest)."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest
from google.api_core import exceptions
from google.cloud import bigquery
from google.cloud.bigquery_storage_v1 import BigQueryWriteClient, types, writer
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PROJECT = "local-project"


def row_class() -> type:
    """A compiled-looking message `Row {optional int64 id = 1; optional string name = 2;
    optional int32 day = 3}`, as a user's `_pb2` module would give it."""
    proto = descriptor_pb2.DescriptorProto(name="Row")
    for number, (name, kind) in enumerate(
        [("id", "TYPE_INT64"), ("name", "TYPE_STRING"), ("day", "TYPE_INT32")], start=1
    ):
        proto.field.add(
            name=name,
            number=number,
            type=descriptor_pb2.FieldDescriptorProto.Type.Value(kind),
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
    file = descriptor_pb2.FileDescriptorProto(name="row_test.proto", package="test")
    file.message_type.add().CopyFrom(proto)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("test.Row"))


Row = row_class()


@pytest.fixture
def table(bq: bigquery.Client, dataset: str) -> str:
    bq.query(f"CREATE TABLE {dataset}.t (id INT64 NOT NULL, name STRING, day DATE)").result()
    return f"projects/{PROJECT}/datasets/{dataset}/tables/t"


def proto_request(stream: str, *rows: dict, offset: int | None = None) -> types.AppendRowsRequest:
    schema = descriptor_pb2.DescriptorProto()
    Row.DESCRIPTOR.CopyToProto(schema)  # Google's sample: DESCRIPTOR.CopyToProto(...)
    data = types.AppendRowsRequest.ProtoData(
        writer_schema=types.ProtoSchema(proto_descriptor=schema),
        rows=types.ProtoRows(serialized_rows=[Row(**row).SerializeToString() for row in rows]),
    )
    request = types.AppendRowsRequest(write_stream=stream, proto_rows=data)
    if offset is not None:
        request.offset = offset
    return request


def table_rows(bq: bigquery.Client, table: str) -> list[tuple]:
    name = table.split("/datasets/")[1].replace("/tables/", ".")
    rows = bq.query(f"SELECT id, name, day FROM {name} ORDER BY id").result()
    return [tuple(row.values()) for row in rows]


def append(client: BigQueryWriteClient, *requests: types.AppendRowsRequest) -> list:
    """Each request's future's outcome: the response, or the exception it carries."""
    stream = writer.AppendRowsStream(client, types.AppendRowsRequest())
    futures = [stream.send(request) for request in requests]
    outcomes = []
    for future in futures:
        try:
            outcomes.append(future.result(timeout=30))
        except exceptions.GoogleAPICallError as error:
            outcomes.append(error)
    stream.close()
    return outcomes


def test_the_default_stream_writes_at_once_and_takes_no_offset(bq, write_client, table) -> None:
    default = f"{table}/streams/_default"
    first, with_offset = append(
        write_client,
        proto_request(default, {"id": 1, "name": "a", "day": 19723}),  # 19723 days: 2024-01-01
        proto_request(default, {"id": 2}, offset=1),
    )
    assert not first.error.code
    # offset: "Specifying a value for this field is not allowed ... for the '_default' stream"
    assert isinstance(with_offset, exceptions.BadRequest)
    assert table_rows(bq, table) == [(1, "a", datetime.date(2024, 1, 1))]


def test_a_committed_stream_checks_offsets(bq, write_client, table) -> None:
    stream = write_client.create_write_stream(
        parent=table, write_stream=types.WriteStream(type_=types.WriteStream.Type.COMMITTED)
    )
    assert (
        stream.name.startswith(f"{table}/streams/") and stream.table_schema.fields[0].name == "id"
    )
    ok, again, ahead, next_ = append(
        write_client,
        proto_request(stream.name, {"id": 1}, {"id": 2}, offset=0),
        proto_request(stream.name, {"id": 9}, offset=0),  # behind the end: ALREADY_EXISTS
        proto_request(stream.name, {"id": 9}, offset=5),  # beyond it: OUT_OF_RANGE
        proto_request(stream.name, {"id": 3}, offset=2),
    )
    assert ok.append_result.offset == 0 and next_.append_result.offset == 2
    assert isinstance(again, exceptions.AlreadyExists)
    assert isinstance(ahead, exceptions.OutOfRange)
    assert [row[0] for row in table_rows(bq, table)] == [1, 2, 3]  # committed: visible at once


def test_a_pending_stream_shows_its_rows_only_once_committed(bq, write_client, table) -> None:
    stream = write_client.create_write_stream(
        parent=table, write_stream=types.WriteStream(type_=types.WriteStream.Type.PENDING)
    )
    (answer,) = append(write_client, proto_request(stream.name, {"id": 7}, {"id": 8}, offset=0))
    assert not answer.error.code and table_rows(bq, table) == []
    early = write_client.batch_commit_write_streams(
        request={"parent": table, "write_streams": [stream.name]}
    )
    # stream_errors: "If non empty, certain streams have errors and ZERO stream is committed"
    assert early.stream_errors[0].code == types.StorageError.StorageErrorCode.INVALID_STREAM_STATE
    assert table_rows(bq, table) == []
    assert write_client.finalize_write_stream(name=stream.name).row_count == 2
    done = write_client.batch_commit_write_streams(
        request={"parent": table, "write_streams": [stream.name]}
    )
    assert not done.stream_errors and done.commit_time  # "only exist when there are no errors"
    assert [row[0] for row in table_rows(bq, table)] == [7, 8]
    got = write_client.get_write_stream(name=stream.name)
    assert got.commit_time and got.type_ == types.WriteStream.Type.PENDING


def test_a_buffered_stream_shows_rows_up_to_the_flushed_offset(bq, write_client, table) -> None:
    stream = write_client.create_write_stream(
        parent=table, write_stream=types.WriteStream(type_=types.WriteStream.Type.BUFFERED)
    )
    append(write_client, proto_request(stream.name, {"id": 1}, {"id": 2}, {"id": 3}))
    assert table_rows(bq, table) == []
    # FlushRowsRequest.offset: "Rows before this offset (including this offset) will be flushed"
    write_client.flush_rows(request={"write_stream": stream.name, "offset": 1})
    assert [row[0] for row in table_rows(bq, table)] == [1, 2]


def test_arrow_rows_are_appended(bq, write_client, table) -> None:
    batch = pa.record_batch({"id": [5, 6], "name": ["x", None]})
    request = types.AppendRowsRequest(write_stream=f"{table}/streams/_default")
    request.arrow_rows.writer_schema.serialized_schema = batch.schema.serialize().to_pybytes()
    request.arrow_rows.rows.serialized_record_batch = batch.serialize().to_pybytes()
    (answer,) = append(write_client, request)
    assert not answer.error.code
    assert table_rows(bq, table) == [(5, "x", None), (6, None, None)]


def test_bad_rows_are_refused_in_band_and_the_table_is_unchanged(bq, write_client, table) -> None:
    default = f"{table}/streams/_default"
    batch = pa.record_batch({"id": [1], "extra": ["?"]})
    request = types.AppendRowsRequest(write_stream=default)
    request.arrow_rows.writer_schema.serialized_schema = batch.schema.serialize().to_pybytes()
    request.arrow_rows.rows.serialized_record_batch = batch.serialize().to_pybytes()
    extra, missing_required = append(write_client, request, proto_request(default, {"name": "n"}))
    assert isinstance(extra, exceptions.BadRequest) and "extra" in extra.message
    assert isinstance(missing_required, exceptions.BadRequest)  # id is REQUIRED
    assert table_rows(bq, table) == []


def test_an_unknown_table_or_stream_is_not_found(write_client, dataset) -> None:
    missing = f"projects/{PROJECT}/datasets/{dataset}/tables/missing"
    with pytest.raises(exceptions.NotFound):
        write_client.create_write_stream(
            parent=missing, write_stream=types.WriteStream(type_=types.WriteStream.Type.COMMITTED)
        )
    with pytest.raises(exceptions.NotFound):
        write_client.get_write_stream(name=f"{missing}/streams/nope")


def test_missing_values_are_null_and_a_default_value_interpretation_is_refused(
    bq, write_client, table
) -> None:
    default = f"{table}/streams/_default"
    interpretation = types.AppendRowsRequest.MissingValueInterpretation
    as_null = proto_request(default, {"id": 1})
    as_null.missing_value_interpretations = {"name": interpretation.NULL_VALUE}
    as_default = proto_request(default, {"id": 2})
    as_default.default_missing_value_interpretation = interpretation.DEFAULT_VALUE
    null, refused = append(write_client, as_null, as_default)
    # storage.proto, AppendRowsRequest.missing_value_interpretations: NULL_VALUE writes NULL
    # for a field the row does not carry. DEFAULT_VALUE is refused here (no column defaults
    # are evaluated on append), never written as NULL in silence.
    assert not null.error.code
    assert isinstance(refused, exceptions.BadRequest)
    assert "default_missing_value_interpretation" in refused.message
    assert table_rows(bq, table) == [(1, None, None)]
