"""Batch prediction throughput: `Model.batch_predict` on the local cloud vs `model.predict`
in-process, on the same rows in the same run.

A scikit-learn classifier trained on the penguins data is uploaded with Vertex's prebuilt
scikit-learn image. N rows (penguins resampled with noise) go through the real SDK's
`batch_predict` from a gs:// JSONL file to gs:// (1 and then 2 replicas), and the same rows
through `model.predict` in this process. Printed: seconds and rows per second of each, and
that the predictions agree. The job's time is its createTime..endTime; the SDK call adds the
SDK's own polling interval (it first looks again after 5 s).

    .venv/bin/python -m benchmarks.batch_prediction [--rows 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import joblib
import numpy as np

from benchmarks.predict_latency import SKLEARN_IMAGE, train


def rows_of(features: np.ndarray, count: int) -> list[list[float]]:
    generator = np.random.default_rng(7)
    picked = features[generator.integers(0, len(features), count)]
    return np.round(picked * generator.normal(1.0, 0.02, picked.shape), 3).tolist()


def read_predictions(job: Any) -> list[Any]:
    lines = [json.loads(line) for blob in job.iter_outputs()
             if "prediction.results-" in blob.name
             for line in blob.download_as_text().splitlines()]  # fmt: skip
    return [line["prediction"] for line in lines]


def through_local_cloud(model: Any, rows: list[list[float]], replicas: int) -> dict[str, Any]:
    from google.cloud import aiplatform

    from vertexkit.local import LocalCloud

    with tempfile.TemporaryDirectory() as home, LocalCloud(home=home) as cloud:
        os.environ.update(cloud.env())
        cloud.context().init_aiplatform()
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "model.joblib"
            joblib.dump(model, path)
            cloud.storage.write_object("bench", "model/model.joblib", path)
        text = "".join(json.dumps(row) + "\n" for row in rows)
        cloud.storage.write_object("bench", "in/rows.jsonl", text.encode())
        uploaded = aiplatform.Model.upload(display_name="bench", artifact_uri="gs://bench/model",
                                           serving_container_image_uri=SKLEARN_IMAGE)  # fmt: skip
        started = time.perf_counter()
        job = uploaded.batch_predict(
            gcs_source="gs://bench/in/rows.jsonl", gcs_destination_prefix="gs://bench/out",
            instances_format="jsonl", machine_type="n1-standard-2",
            starting_replica_count=replicas, max_replica_count=replicas, batch_size=1000,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        assert job.state.name == "JOB_STATE_SUCCEEDED", job.error
        resource = job.gca_resource
        job_seconds = (resource.end_time - resource.create_time).total_seconds()
        return {"seconds": seconds, "job_seconds": job_seconds,
                "predictions": read_predictions(job)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    count = parser.parse_args().rows
    model, features = train()
    rows = rows_of(features, count)
    started = time.perf_counter()
    expected = np.asarray(model.predict(np.asarray(rows))).tolist()
    in_process = time.perf_counter() - started
    print(f"in-process model.predict: {count} rows in {in_process:.3f} s "
          f"({count / in_process:,.0f} rows/s)")  # fmt: skip
    for replicas in (1, 2):
        result = through_local_cloud(model, rows, replicas)
        job_seconds, agree = result["job_seconds"], result["predictions"] == expected
        print(f"local cloud batch_predict, {replicas} replica(s): job {job_seconds:.2f} s "
              f"({count / job_seconds:,.0f} rows/s), SDK call {result['seconds']:.2f} s "
              f"(its polling included); predictions equal in-process: {agree}")  # fmt: skip


if __name__ == "__main__":
    main()
