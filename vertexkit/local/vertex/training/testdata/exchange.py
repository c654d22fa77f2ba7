"""Data-parallel least squares across the replicas named in CLUSTER_SPEC, with no framework.

Every replica owns a shard of y = 3x - 2 (+ noise). Each step, workers send their shard's
gradient to the chief over TCP (the chief's address comes from CLUSTER_SPEC); the chief
averages all gradients, updates the weights and sends them back. The chief writes the weights
and how many replicas contributed to the local path argv[1].
"""

import json
import os
import random
import socket
import sys
import time

spec = json.loads(os.environ["CLUSTER_SPEC"])
hosts = [h for pool in sorted(spec["cluster"]) for h in spec["cluster"][pool]]
rank = hosts.index(spec["cluster"][spec["task"]["type"]][spec["task"]["index"]])
world = len(hosts)
rng = random.Random(rank)
xs = [rng.uniform(-1, 1) for _ in range(200)]
ys = [3 * x - 2 + rng.gauss(0, 0.05) for x in xs]


def gradient(w: float, b: float) -> list[float]:
    errors = [w * x + b - y for x, y in zip(xs, ys, strict=True)]
    return [sum(e * x for e, x in zip(errors, xs, strict=True)) / len(xs), sum(errors) / len(xs)]


def send(conn: socket.socket, obj: object) -> None:
    conn.sendall((json.dumps(obj) + "\n").encode())


def receive(reader) -> object:
    return json.loads(reader.readline())


w = b = 0.0
if rank == 0:
    host, port = hosts[0].rsplit(":", 1)
    server = socket.create_server((host, int(port)))
    peers = [server.accept()[0] for _ in range(world - 1)]
    readers = [p.makefile("r") for p in peers]
    for _ in range(300):
        grads = [gradient(w, b)] + [receive(r) for r in readers]
        w -= 0.5 * sum(g[0] for g in grads) / world
        b -= 0.5 * sum(g[1] for g in grads) / world
        for peer in peers:
            send(peer, [w, b])
    for peer in peers:
        send(peer, "stop")
    with open(sys.argv[1], "w") as out:
        json.dump({"w": w, "b": b, "replicas": world}, out)
else:
    host, port = hosts[0].rsplit(":", 1)
    for _ in range(200):  # the chief may not be listening yet
        try:
            conn = socket.create_connection((host, int(port)))
            break
        except ConnectionRefusedError:
            time.sleep(0.05)
    reader = conn.makefile("r")
    while True:
        send(conn, gradient(w, b))
        reply = receive(reader)
        if reply == "stop":
            break
        w, b = reply
    print(f"worker {rank} done: w={w:.3f} b={b:.3f}")
