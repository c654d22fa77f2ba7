"""The summary's sample instance for a trainer of the user's own (no `sample_instance` written):
the first test row of the export's shards, in the model's feature order, read from the local
cloud's Cloud Storage."""

from __future__ import annotations

import io
import json
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

from vertexkit.cli import summary
from vertexkit.context import CloudContext
from vertexkit.runner import FinishedRun
from vertexkit.storage_rest import StorageRest


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_without_a_written_sample_the_first_test_row_is_sent(cloud_context: CloudContext) -> None:
    bucket = f"summary-{uuid.uuid4().hex[:12]}"
    client = cloud_context.storage_client()
    client.create_bucket(bucket)
    first = pa.table({"island": ["Biscoe"], "bill_length_mm": [float("nan")], "sex": ["MALE"]})
    later = pa.table({"island": ["Dream"], "bill_length_mm": [40.0], "sex": ["FEMALE"]})
    # The export's shards: data-000000000000.parquet sorts first, as BigQuery names them.
    for name, rows in (("test/data-000000000001.parquet", later),
                       ("test/data-000000000000.parquet", first),
                       ("test/sub/data-0.parquet", later)):  # fmt: skip
        client.bucket(bucket).blob(name).upload_from_string(_parquet(rows))
    model_dir = f"gs://{bucket}/model"
    columns = ["sex", "island", "bill_length_mm"]  # the model's order, not the table's
    client.bucket(bucket).blob("model/feature_columns.json").upload_from_string(json.dumps(columns))
    run = FinishedRun(
        name="training",
        job={},
        outputs={"test_data": {"uri": f"gs://{bucket}/test/data-*.parquet"}},
        seconds=0.0,
        pipeline_root=f"gs://{bucket}",
        context=cloud_context,
    )
    storage = StorageRest.for_context(cloud_context)
    assert summary._written_sample(storage, model_dir) is None  # no model_metadata.json: a 404
    # a NaN is sent as null, as a JSON instance holds a missing value
    assert summary._first_test_row(run, storage, model_dir) == ["MALE", "Biscoe", None]
