"""Streaming a training job's logs: the page's offsets, whole lines while it runs, and a real
job whose log grows while the console is polled."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests

from vertexkit.local import LocalCloud
from vertexkit.local.console import logs
from vertexkit.local.errors import ApiError

PARENT = "projects/local-project/locations/us-central1"


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_a_running_job_gets_whole_lines_only_and_the_rest_once_it_ended(tmp_path: Path) -> None:
    path = write(tmp_path / "job.log", "one\ntwo\nthr€".encode())
    running = logs.read_chunk("job.log", path, 0, whole_lines=True)
    assert (running.text, running.offset) == ("one\ntwo\n", 8)
    ended = logs.read_chunk("job.log", path, running.offset, whole_lines=False)
    assert ended.text == "thr€" and ended.offset == path.stat().st_size


def test_only_the_last_tail_bytes_are_sent_and_the_rest_is_counted(tmp_path: Path) -> None:
    path = write(tmp_path / "job.log", b"x" * (logs.TAIL_BYTES + 10) + b"\n")
    chunk = logs.read_chunk("job.log", path, 0, whole_lines=True)
    assert chunk.skipped == 11 and len(chunk.text) == logs.TAIL_BYTES
    assert chunk.offset == path.stat().st_size


def test_a_rewritten_shorter_file_starts_over(tmp_path: Path) -> None:
    path = write(tmp_path / "job.log", b"new\n")
    assert logs.read_chunk("job.log", path, 500, whole_lines=True).text == "new\n"


def test_new_chunks_lists_job_log_first_and_skips_files_with_nothing_new(tmp_path: Path) -> None:
    write(tmp_path / "workerpool0-0.log", b"replica\n")
    write(tmp_path / "job.log", b"job\n")
    write(tmp_path / "trial-1" / "workerpool0-0.log", b"trial\n")
    first = logs.new_chunks(tmp_path, {}, running=True)
    assert [c.file for c in first] == ["job.log", "workerpool0-0.log", "trial-1/workerpool0-0.log"]
    seen = {c.file: c.offset for c in first}
    assert logs.new_chunks(tmp_path, seen, running=True) == []


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("job.log", id="no-offset"),
        pytest.param("job.log:-1", id="negative"),
        pytest.param(":12", id="no-file"),
        pytest.param("job.log:1e3", id="not-an-integer"),
    ],
)
def test_a_bad_offset_is_refused_naming_the_field(value: str) -> None:
    with pytest.raises(ApiError) as refused:
        logs.parse_offsets([value])
    assert refused.value.code == 400 and str(refused.value).startswith("from: ")


SLOW_PRINTER = (
    "import time\nfor i in range(6):\n    print(f'step {i}', flush=True)\n    time.sleep(0.5)\n"
)


def test_a_running_job_log_streams_every_line_once(local_cloud: LocalCloud) -> None:
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": 1,
        "containerSpec": {
            "imageUri": "us-docker.pkg.dev/p/trainers/app:latest",
            "command": ["python", "-u", "-c", SLOW_PRINTER],
        },
    }
    body = {"displayName": "console-logs", "jobSpec": {"workerPoolSpecs": [pool]}}
    created = requests.post(f"{local_cloud.url}/v1/{PARENT}/customJobs", json=body, timeout=30)
    assert created.status_code == 200, created.text
    name = created.json()["name"]
    page = requests.get(f"{local_cloud.url}/console/{name}", timeout=30).text
    assert f'data-logs="/console/{name}/logs.json"' in page
    received, offsets, polls = "", {}, []
    deadline = time.monotonic() + 90
    while True:
        view = requests.get(
            f"{local_cloud.url}/console/{name}/logs.json",
            params={"from": [f"{file}:{offset}" for file, offset in offsets.items()]},
            timeout=30,
        ).json()
        polls.append(view["running"])
        for chunk in view["logs"]:
            offsets[chunk["file"]] = chunk["offset"]
            if chunk["file"] == "workerpool0-0.log":
                received += chunk["text"]
        if not view["running"]:
            break
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert view["state"] == "SUCCEEDED"
    assert [line for line in received.splitlines() if line.startswith("step")] == [
        f"step {i}" for i in range(6)
    ]
    assert polls.count(True) >= 2  # lines arrived while it ran, not all at the end
    ended = requests.get(f"{local_cloud.url}/console/{name}", timeout=30).text
    assert "data-logs=" not in ended


def test_logs_are_served_for_training_jobs_only(local_cloud: LocalCloud) -> None:
    answer = requests.get(f"{local_cloud.url}/console/{PARENT}/models/1/logs.json", timeout=30)
    assert answer.status_code == 404
