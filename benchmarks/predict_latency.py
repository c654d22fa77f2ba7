"""Online prediction latency: `endpoint.predict` on the local cloud vs `model.predict` in-process.

A scikit-learn classifier trained on the penguins data is uploaded with Vertex's prebuilt
scikit-learn image, deployed, and asked for one-instance predictions through the real SDK
(REST), first by one client thread, then by 4 concurrent clients. The same instances are then
predicted in-process. Each run is printed: p50, p99 and requests per second.

    .venv/bin/python -m benchmarks.predict_latency [--requests 500]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import joblib
import numpy as np

FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
SKLEARN_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-5:latest"


def train() -> tuple[Any, np.ndarray]:
    from palmerpenguins import load_penguins
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    frame = load_penguins().dropna(subset=[*FEATURES, "species"])
    features = frame[FEATURES].to_numpy()
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    return model.fit(features, frame["species"]), features


def timed(call: Callable[[int], object], indices: range) -> list[float]:
    latencies = []
    for i in indices:
        begin = time.perf_counter()
        call(i)
        latencies.append((time.perf_counter() - begin) * 1000)
    return latencies


def measure(
    call: Callable[[int], object], requests: int, clients: int = 1, warmup: int = 20
) -> dict[str, float]:
    """Latency percentiles (ms) and throughput of `requests` calls of `call(i)`, made by
    `clients` threads at once (each makes its share in a row)."""
    timed(call, range(warmup))
    share = requests // clients
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        runs = pool.map(lambda c: timed(call, range(c * share, (c + 1) * share)), range(clients))
        latencies = sorted(latency for run in runs for latency in run)
    elapsed = time.perf_counter() - started
    return {
        "p50_ms": statistics.median(latencies),
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "req_per_s": len(latencies) / elapsed,
    }


def run(requests: int) -> dict[str, dict[str, float]]:
    from google.cloud import aiplatform

    from vertexkit.local import LocalCloud
    from vertexkit.local.storage.routes import StorageService

    model, features = train()
    rows = features.tolist()
    with tempfile.TemporaryDirectory() as home, LocalCloud(home=home) as cloud:
        os.environ.update(cloud.env())
        cloud.context().init_aiplatform()
        storage = next(s for s in cloud.services if isinstance(s, StorageService))
        local_file = Path(home) / "model.joblib"
        joblib.dump(model, local_file)
        storage.write_object("bench", "penguins/model.joblib", local_file)
        uploaded = aiplatform.Model.upload(
            display_name="bench-penguins",
            artifact_uri="gs://bench/penguins",
            serving_container_image_uri=SKLEARN_IMAGE,
        )
        endpoint = uploaded.deploy(machine_type="n1-standard-2")

        def predict(i: int) -> object:
            return endpoint.predict(instances=[rows[i % len(rows)]])

        served = measure(predict, requests)
        concurrent = measure(predict, requests, clients=4)
        in_process = measure(
            lambda i: model.predict(features[i % len(rows) : i % len(rows) + 1]), requests
        )
        endpoint.undeploy_all()
    return {
        "endpoint.predict (local cloud, REST)": served,
        "endpoint.predict, 4 concurrent clients": concurrent,
        "model.predict (in-process)": in_process,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    results = run(args.requests)
    print(f"{'path':<40} {'p50 ms':>8} {'p99 ms':>8} {'req/s':>8}   ({args.requests} requests)")
    for name, figures in results.items():
        print(
            f"{name:<40} {figures['p50_ms']:>8.3f} {figures['p99_ms']:>8.3f} "
            f"{figures['req_per_s']:>8.1f}"
        )


if __name__ == "__main__":
    main()
