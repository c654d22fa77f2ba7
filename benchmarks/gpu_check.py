"""GPU check: the `gpu_training` pipeline on this machine's GPUs, then the same trainer on CPU.

Run it as one command on a machine with NVIDIA GPUs: `bash benchmarks/gpu_check.sh` (it needs
vertexkit installed and a CUDA build of PyTorch in the same Python). It prints the machine's GPU
inventory, which GPUs each replica saw (the local cloud's job log and the trainer's own report)
and the training time on GPU vs CPU for the same trainer, data and settings, then writes it all
as JSON to benchmarks/gpu_check.json. Not part of `make bench` (no `main()`): on a machine without
GPUs it says so and stops.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from vertexkit import runner
from vertexkit.local.vertex.training import gpus

PIPELINE = "gpu_training"
RESULT_FILE = Path(__file__).with_name("gpu_check.json")


def replica_reports(run: runner.FinishedRun, replicas: int) -> list[dict[str, Any]]:
    """Each replica's `replicas/rank-N.json` beside the model, read while the cloud runs."""
    client = run.context.storage_client()
    bucket, _, prefix = run.outputs["model"]["uri"].removeprefix("gs://").partition("/")
    reports = []
    for rank in range(replicas):
        blob = client.bucket(bucket).blob(f"{prefix.rstrip('/')}/replicas/rank-{rank}.json")
        reports.append(json.loads(blob.download_as_bytes()))
    return reports


def job_log_lines(home: Path) -> list[str]:
    """The local cloud's lines about GPUs: what each replica got, mismatches, CPU fallbacks."""
    keep = ("GPUs", "requested", "waiting")
    return [
        line.strip()
        for log in sorted((home / "vertex" / "training").glob("*/job.log"))
        for line in log.read_text().splitlines()
        if any(word in line for word in keep)
    ]


def run_once(label: str, assignments: list[str], replicas: int) -> dict[str, Any]:
    print(f"-- {label}: vertexkit run {PIPELINE} " + " ".join(f"-p {a}" for a in assignments))
    home = Path(tempfile.mkdtemp(prefix=f"gpu-check-{label}-"))
    pipeline_yaml, params = runner.prepare(PIPELINE, assignments)
    seen: dict[str, Any] = {}

    def collect(run: runner.FinishedRun) -> None:
        seen["replicas"] = replica_reports(run, replicas)

    run = runner.run_pipeline_job(
        PIPELINE, params, pipeline_yaml, home=home, enable_caching=False, while_running=collect
    )
    metrics = dict(run.outputs["metrics"]["metadata"])
    return {
        "label": label,
        "home": str(home),
        "pipeline_seconds": round(run.seconds, 2),
        "train_seconds": metrics.get("train_seconds"),
        "accuracy": metrics.get("accuracy"),
        "replicas": seen.get("replicas", []),
        "job_log": job_log_lines(home),
    }


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks/gpu_check.sh")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--replicas", type=int, default=0, help="default: min(2, GPUs)")
    parser.add_argument("--accelerator-type", default="NVIDIA_TESLA_T4")
    parser.add_argument("--machine-type", default="n1-standard-8")
    return parser.parse_args()


def show(result: dict[str, Any]) -> None:
    print(f"   train {result['train_seconds']:.2f} s (pipeline {result['pipeline_seconds']} s), "
          f"accuracy {result['accuracy']:.3f}")  # fmt: skip
    for report in result["replicas"]:
        print(f"   rank {report['rank']}: {report['device']} {report['gpus']} "
              f"CUDA_VISIBLE_DEVICES={report['CUDA_VISIBLE_DEVICES']!r}")  # fmt: skip
    for line in result["job_log"]:
        print(f"   job.log: {line}")


def check() -> int:
    args = parse_args()
    inventory = gpus.discover()
    if not inventory:
        print("no NVIDIA GPU found (nvidia-smi missing or silent): nothing to check here")
        return 2
    print(f"GPUs: {[gpu.describe() for gpu in inventory]}")
    replicas = args.replicas or min(2, len(inventory))
    common = [f"epochs={args.epochs}", f"replica_count={replicas}"]
    on_gpu = [f"machine_type={args.machine_type}", f"accelerator_type={args.accelerator_type}",
              "accelerator_count=1", *common]  # fmt: skip
    on_cpu = ["machine_type=n1-standard-8", "accelerator_type=", "accelerator_count=0", *common]
    results = [run_once("gpu", on_gpu, replicas), run_once("cpu", on_cpu, replicas)]
    for result in results:
        print(f"== {result['label']}")
        show(result)
    gpu, cpu = results
    print(f"== training time: GPU {gpu['train_seconds']:.2f} s, CPU {cpu['train_seconds']:.2f} s "
          f"(CPU/GPU {cpu['train_seconds'] / gpu['train_seconds']:.2f}x)")  # fmt: skip
    RESULT_FILE.write_text(json.dumps({"gpus": [g.__dict__ for g in inventory],
                                       "runs": results}, indent=1))  # fmt: skip
    print(f"wrote {RESULT_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(check())
