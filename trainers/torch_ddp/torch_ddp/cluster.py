"""Who is who in the job: rank, world size and rendezvous address from Vertex's CLUSTER_SPEC.

Vertex gives every replica CLUSTER_SPEC = {"cluster": {"workerpool0": ["host:port"],
"workerpool1": [...], ...}, "task": {"type": "workerpool1", "index": 0}, ...}. The chief
(workerpool0) and the workers (workerpool1) train; pool 2 (a Reduction Server or parameter
servers) and pool 3 (evaluators) do not take part in the process group.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

TRAINING_POOLS = ("workerpool0", "workerpool1")


@dataclass(frozen=True)
class Cluster:
    rank: int
    world_size: int
    master_addr: str
    master_port: int

    @property
    def is_chief(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def from_environment(environ: dict[str, str] | None = None) -> Cluster | None:
    """The training cluster, or None for a replica outside it (pools 2 and 3)."""
    raw = (environ if environ is not None else os.environ).get("CLUSTER_SPEC")
    if not raw:
        return Cluster(0, 1, "127.0.0.1", 0)  # run by hand: a world of one
    spec = json.loads(raw)
    hosts = spec["cluster"]
    task = spec["task"]
    if task["type"] not in TRAINING_POOLS:
        return None
    chiefs, workers = hosts.get("workerpool0", []), hosts.get("workerpool1", [])
    rank = int(task["index"]) + (len(chiefs) if task["type"] == "workerpool1" else 0)
    host, port = chiefs[0].rsplit(":", 1)
    return Cluster(rank, len(chiefs) + len(workers), host, int(port))
