"""Entry point: `python -m torch_ddp.task [--name=value ...]`.

A small MLP classifier (the penguins by default) trained with DistributedDataParallel, following
Vertex AI's conventions for a training application:
- cluster: rank and world from CLUSTER_SPEC (workerpool0 is rank 0 and the rendezvous address,
  workerpool1's replicas follow); NCCL when CUDA is there, gloo on CPU.
- device: CUDA when the replica sees a GPU (CUDA_VISIBLE_DEVICES, as Vertex and the local cloud
  set it), CPU otherwise.
- data: --training-data-uri / --validation-data-uri, defaulting to AIP_TRAINING_DATA_URI /
  AIP_VALIDATION_DATA_URI (gs:// or local; a file, a folder or a `*` glob of Parquet/CSV/JSONL).
  Each replica trains on its own shard of the rows (DistributedSampler).
- checkpoints: AIP_CHECKPOINT_DIR receives `checkpoint.pt` after every --checkpoint-every epochs
  (rank 0 writes it); a restarted run with the same settings resumes from it.
- model: AIP_MODEL_DIR receives `model.pt` (the state dict), `features.json` (how rows become
  inputs), `metrics.json` (validation accuracy and loss, training seconds, device), and one
  `replicas/rank-N.json` per replica saying which device and GPUs it used.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import numpy as np

from torch_ddp import cluster as cluster_spec
from torch_ddp import data

try:
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
except ImportError as exc:  # the prebuilt PyTorch images have it; a plain environment may not
    raise SystemExit(
        "torch_ddp needs PyTorch: run it in a Vertex prebuilt PyTorch image, or locally "
        f"`pip install 'vertexkit[torch]'` ({exc})"
    ) from exc

log = logging.getLogger("torch_ddp")
CHECKPOINT = "checkpoint.pt"


def whole_number(text: str) -> int:
    """An integer; pipelines and tuning jobs may pass whole numbers as floats ("30.0")."""
    value = float(text)
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    return int(value)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="torch_ddp.task")
    env = os.environ.get
    parser.add_argument("--training-data-uri", default=env("AIP_TRAINING_DATA_URI"))
    parser.add_argument("--validation-data-uri", default=env("AIP_VALIDATION_DATA_URI"))
    parser.add_argument("--test-data-uri", default=env("AIP_TEST_DATA_URI"))  # not used
    parser.add_argument("--label-column", default="species")
    parser.add_argument("--model-dir", default=env("AIP_MODEL_DIR"))
    parser.add_argument("--checkpoint-dir", default=env("AIP_CHECKPOINT_DIR"))
    parser.add_argument("--epochs", type=whole_number, default=30)
    parser.add_argument("--batch-size", type=whole_number, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.005)
    parser.add_argument("--hidden-units", type=whole_number, default=64)
    parser.add_argument("--checkpoint-every", type=whole_number, default=5)
    parser.add_argument("--seed", type=whole_number, default=7)
    args = parser.parse_args(list(argv))
    if not args.training_data_uri or not args.model_dir:
        parser.error("needs --training-data-uri and --model-dir (or AIP_* variables)")
    return args


# -- set-up ---------------------------------------------------------------------------------
def device_for() -> torch.device:
    """The replica's first visible GPU, or the CPU: the local cloud and Vertex both narrow
    CUDA_VISIBLE_DEVICES to the replica's own GPUs, so device 0 is always one of ours."""
    return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")


def join_group(place: cluster_spec.Cluster, device: torch.device) -> None:
    if not place.distributed:
        return
    backend = "nccl" if device.type == "cuda" else "gloo"
    dist.init_process_group(
        backend,
        init_method=f"tcp://{place.master_addr}:{place.master_port}",
        rank=place.rank,
        world_size=place.world_size,
        timeout=timedelta(minutes=5),
    )
    log.info("rank %d of %d joined the %s group", place.rank, place.world_size, backend)


def build_model(width: int, hidden: int, classes: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(width, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, classes),
    )


def fingerprint(args: argparse.Namespace) -> str:
    """Settings that make a checkpoint reusable: the same run, restarted."""
    keys = ("training_data_uri", "label_column", "batch_size", "learning_rate", "hidden_units")
    text = json.dumps({key: getattr(args, key) for key in keys}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- checkpoints ----------------------------------------------------------------------------
def checkpoint_uri(args: argparse.Namespace) -> str | None:
    return f"{args.checkpoint_dir.rstrip('/')}/{CHECKPOINT}" if args.checkpoint_dir else None


def load_checkpoint(
    args: argparse.Namespace, model: nn.Module, optimizer: torch.optim.Optimizer
) -> int:
    """The first epoch still to train (0 without a usable checkpoint)."""
    uri = checkpoint_uri(args)
    content = data.read_bytes(uri) if uri else None
    if content is None:
        return 0
    state = torch.load(io.BytesIO(content), map_location="cpu", weights_only=False)
    if state.get("fingerprint") != fingerprint(args):
        log.info("checkpoint %s is from other settings: starting afresh", uri)
        return 0
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    log.info("resumed from %s after epoch %d", uri, state["epoch"] + 1)
    return int(state["epoch"]) + 1


def save_checkpoint(
    args: argparse.Namespace, model: nn.Module, optimizer: torch.optim.Optimizer, epoch: int
) -> None:
    uri = checkpoint_uri(args)
    if not uri:
        return
    state = {
        "epoch": epoch,
        "fingerprint": fingerprint(args),
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
    }
    buffer = io.BytesIO()
    torch.save(state, buffer)
    data.write_bytes(uri, buffer.getvalue())
    log.info("checkpoint after epoch %d: %s", epoch + 1, uri)


# -- training -------------------------------------------------------------------------------
def loader(x: np.ndarray, y: np.ndarray, args: argparse.Namespace, place: Any) -> DataLoader:
    dataset = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    sampler = DistributedSampler(
        dataset, num_replicas=place.world_size, rank=place.rank, shuffle=True, seed=args.seed
    )
    return DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)


def train_epoch(model: nn.Module, batches: DataLoader, optimizer: Any, device: Any) -> float:
    model.train()
    total, count = 0.0, 0
    for inputs, targets in batches:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()  # DDP averages the gradients across replicas here
        optimizer.step()
        total, count = total + float(loss) * len(targets), count + len(targets)
    return total / max(count, 1)


def evaluate(model: nn.Module, x: np.ndarray, y: np.ndarray, device: Any) -> dict[str, float]:
    model.eval()
    with torch.no_grad():
        logits = model(torch.from_numpy(x).to(device))
        targets = torch.from_numpy(y).to(device)
        loss = nn.functional.cross_entropy(logits, targets)
        accuracy = (logits.argmax(dim=1) == targets).float().mean()
    return {"accuracy": float(accuracy), "log_loss": float(loss)}


def replica_report(place: Any, device: torch.device, seconds: float) -> dict[str, Any]:
    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return {
        "rank": place.rank,
        "world_size": place.world_size,
        "device": str(device),
        "gpus": gpus,
        "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "NVIDIA_VISIBLE_DEVICES": os.environ.get("NVIDIA_VISIBLE_DEVICES"),
        "train_seconds": round(seconds, 3),
    }


def write_model(args: argparse.Namespace, model: nn.Module, features: Any, metrics: dict) -> None:
    base = args.model_dir.rstrip("/")
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    data.write_bytes(f"{base}/model.pt", buffer.getvalue())
    data.write_bytes(f"{base}/features.json", features.to_json().encode())
    data.write_bytes(f"{base}/metrics.json", json.dumps(metrics, indent=1).encode())


def frames(args: argparse.Namespace) -> tuple[Any, Any]:
    training = data.read_table(args.training_data_uri).dropna(subset=[args.label_column])
    if args.validation_data_uri:
        validation = data.read_table(args.validation_data_uri).dropna(subset=[args.label_column])
        return training, validation
    held_out = training.sample(frac=0.2, random_state=args.seed)
    return training.drop(held_out.index), held_out


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s torch_ddp %(message)s")
    args = parse_args(sys.argv[1:] if argv is None else argv)
    place = cluster_spec.from_environment()
    if place is None:
        log.info("this replica is outside the training pools (pool 2/3): nothing to do")
        return 0
    torch.manual_seed(args.seed)
    device = device_for()
    log.info(
        "rank %d: device %s, CUDA_VISIBLE_DEVICES=%s",
        place.rank,
        device,
        os.environ.get("CUDA_VISIBLE_DEVICES"),
    )
    join_group(place, device)
    training, validation = frames(args)
    features = data.Features.fit(training, args.label_column)
    x, y = features.matrix(training), features.targets(training)
    model = build_model(features.width, args.hidden_units, len(features.classes)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate)
    start = load_checkpoint(args, model, optimizer)
    ddp = DistributedDataParallel(model) if place.distributed else model
    batches = loader(x, y, args, place)
    began = time.perf_counter()
    for epoch in range(start, args.epochs):
        batches.sampler.set_epoch(epoch)
        loss = train_epoch(ddp, batches, optimizer, device)
        log.info("epoch %d/%d: training loss %.4f", epoch + 1, args.epochs, loss)
        if place.is_chief and (epoch + 1) % args.checkpoint_every == 0:
            save_checkpoint(args, model, optimizer, epoch)
    seconds = time.perf_counter() - began
    report = replica_report(place, device, seconds)
    base = args.model_dir.rstrip("/")
    data.write_bytes(f"{base}/replicas/rank-{place.rank}.json", json.dumps(report).encode())
    if place.is_chief:
        vx, vy = features.matrix(validation), features.targets(validation)
        metrics = {**evaluate(model, vx, vy, device), "train_seconds": seconds}
        metrics.update(epochs=args.epochs, resumed_from_epoch=start, world_size=place.world_size)
        write_model(args, model, features, {**metrics, "device": str(device)})
        log.info("validation %s", metrics)
    if place.distributed:
        dist.barrier()  # the workers wait until the chief has written the model
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
