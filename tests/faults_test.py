"""Faults, each followed by the state it must leave: no process outlives its job or the local
cloud (kill -9, cancel, timeout, a trainer whose children ignore SIGTERM), a damaged or emptied
state database stops the start (naming the file and its copy) instead of serving an empty cloud,
interrupted uploads leave no temp file, and a full disk is a 507 with the reason."""

# No `from __future__ import annotations`: KFP reads the component's real type annotations.
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
from google.api_core import exceptions
from google.cloud import aiplatform, aiplatform_v1
from google.cloud.aiplatform import pipeline_jobs
from kfp import compiler, dsl

from vertexkit.context import CloudContext
from vertexkit.local import LocalCloud
from vertexkit.local.state import StateError

TESTDATA = Path(__file__).parents[1] / "vertexkit/local/vertex/training/testdata"
JobState = aiplatform_v1.JobState
TERMINAL = {JobState.JOB_STATE_SUCCEEDED, JobState.JOB_STATE_FAILED, JobState.JOB_STATE_CANCELLED}


# -- helpers -----------------------------------------------------------------------------------
def stubborn_pool(pids: Path, *args: str) -> dict[str, Any]:
    """A trainer that forks a child ignoring SIGTERM and writes both PIDs to `pids`."""
    return {
        "machine_spec": {"machine_type": "n1-standard-4"},
        "replica_count": 1,
        "container_spec": {
            "image_uri": "us-docker.pkg.dev/my-project/trainers/app:latest",
            "command": ["python", str(TESTDATA / "stubborn.py"), str(pids), *args],
        },
    }


def create_job(context: CloudContext, pools: list[dict], **spec: Any) -> aiplatform_v1.CustomJob:
    job = {"display_name": "fault", "job_spec": {"worker_pool_specs": pools, **spec}}
    return context.job_client().create_custom_job(parent=context.parent, custom_job=job)


def wait_until(check: Callable[[], Any], what: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout}s")


def wait_terminal(context: CloudContext, name: str) -> aiplatform_v1.CustomJob:
    client = context.job_client()

    def ended() -> aiplatform_v1.CustomJob | None:
        job = client.get_custom_job(name=name)
        return job if job.state in TERMINAL else None

    return wait_until(ended, f"{name} ending")


def read_pids(path: Path) -> list[int]:
    text = wait_until(lambda: path.exists() and path.read_text(), f"{path} written")
    return [int(pid) for pid in text.split()]


def alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it has ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError):
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


def assert_all_gone(pids: list[int]) -> None:
    """SIGKILL is delivered at once but a process takes a moment to exit: bounded wait."""
    wait_until(lambda: not any(alive(pid) for pid in pids), f"processes {pids} ending", 10)


def kill_leftovers(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def local_up(home: Path) -> Iterator[tuple[subprocess.Popen[str], CloudContext]]:
    """`vertexkit local up` as a user runs it, and a context for its exported endpoints."""
    command = [sys.executable, "-m", "vertexkit.cli", "local", "up", "--home", str(home)]
    process = subprocess.Popen([*command, "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        exports: dict[str, str] = {}
        while "VERTEX_AI_EMULATOR_HOST" not in exports or "GOOGLE_CLOUD_PROJECT" not in exports:
            line = process.stdout.readline()
            assert line.startswith("export "), f"expected export lines, got {line!r}"
            key, _, value = line.removeprefix("export ").strip().partition("=")
            exports[key] = value
        yield (
            process,
            CloudContext(
                project=exports["GOOGLE_CLOUD_PROJECT"],
                vertex_endpoint=exports["VERTEX_AI_EMULATOR_HOST"],
            ),
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()


# -- no orphan ---------------------------------------------------------------------------------
def test_restart_after_kill_9_ends_the_trainer_and_fails_the_job(tmp_path: Path) -> None:
    home, pids_file = tmp_path / "home", tmp_path / "pids"
    with local_up(home) as (server, context):
        job = create_job(context, [stubborn_pool(pids_file)])
        pids = read_pids(pids_file)
        server.send_signal(signal.SIGKILL)  # no chance to stop its jobs
        server.wait()
    try:
        assert all(alive(pid) for pid in pids), "the fault is real: the trainer outlives up"
        with LocalCloud(home=home) as cloud:
            stored = cloud.context().job_client().get_custom_job(name=job.name)
            assert stored.state == JobState.JOB_STATE_FAILED
            assert_all_gone(pids)  # the trainer and its SIGTERM-ignoring child
            assert cloud.vertex.backend.store.recorded_processes() == []
    finally:
        kill_leftovers(pids)


@pytest.mark.parametrize(
    ("args", "spec", "cancel", "state", "message"),
    [
        pytest.param([], {}, True, JobState.JOB_STATE_CANCELLED, "CANCELED", id="cancel"),
        pytest.param(
            [], {"scheduling": {"timeout": "1s"}}, False, JobState.JOB_STATE_FAILED, "timed out",
            id="timeout",
        ),
        pytest.param(["--exit"], {}, False, JobState.JOB_STATE_SUCCEEDED, "", id="chief-exits"),
    ],
)  # fmt: skip
def test_job_end_leaves_no_process_even_one_ignoring_sigterm(
    cloud_context: CloudContext,
    tmp_path: Path,
    args: list[str],
    spec: dict[str, Any],
    cancel: bool,
    state: JobState,
    message: str,
) -> None:
    pids_file = tmp_path / "pids"
    job = create_job(cloud_context, [stubborn_pool(pids_file, *args)], **spec)
    pids = read_pids(pids_file)
    try:
        if cancel:
            cloud_context.job_client().cancel_custom_job(name=job.name)
        job = wait_terminal(cloud_context, job.name)
        assert job.state == state, job.error
        assert message in job.error.message
        assert_all_gone(pids)
    finally:
        kill_leftovers(pids)


@dsl.component(install_kfp_package=False)
def stubborn_task(pids_path: str) -> int:
    import os
    import subprocess
    import sys
    import time

    ignore = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    child = subprocess.Popen([sys.executable, "-c", ignore])
    time.sleep(0.2)  # so the child has set its handler before anyone signals it
    with open(pids_path + ".part", "w") as out:
        out.write(f"{os.getpid()} {child.pid}")
    os.replace(pids_path + ".part", pids_path)
    time.sleep(600)
    return 0


@dsl.pipeline(name="stubborn")
def stubborn_pipeline(pids_path: str) -> int:
    return stubborn_task(pids_path=pids_path).output


def test_pipeline_cancel_leaves_no_task_process_even_one_ignoring_sigterm(
    local_cloud: LocalCloud, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline_jobs, "_JOB_WAIT_TIME", 0.2)  # poll the local cloud often
    monkeypatch.setattr(pipeline_jobs, "_WAIT_TIME_MULTIPLIER", 1)
    template = tmp_path / "stubborn.yaml"
    compiler.Compiler().compile(stubborn_pipeline, str(template))
    # a fresh bucket and a service account: submit() skips the Resource Manager lookup
    local_cloud.context().init_aiplatform(service_account="p@local-project.iam.gserviceaccount.com")
    job = aiplatform.PipelineJob(
        display_name="stubborn", template_path=str(template), enable_caching=False,
        pipeline_root=f"gs://faults-{uuid.uuid4().hex[:12]}/root",
        parameter_values={"pids_path": str(tmp_path / "pids")},
    )  # fmt: skip
    job.submit()
    pids = read_pids(tmp_path / "pids")
    try:
        job.cancel()
        job.wait()
        assert job.state.name == "PIPELINE_STATE_CANCELLED"
        assert_all_gone(pids)
    finally:
        kill_leftovers(pids)


# -- no silent loss: state databases -----------------------------------------------------------
def empty(path: Path) -> None:
    path.write_bytes(b"")


def garbage(path: Path) -> None:
    path.write_bytes(b"these bytes are not a database\n" * 200)


def damaged_pages(path: Path) -> None:
    """A valid header over pages overwritten with junk, as a torn write or bad disk leaves."""
    with path.open("r+b") as db:
        db.seek(4096)
        db.write(b"\xa5" * 8192)


STATE_FILES = {"vertex": "vertex/vertex.sqlite", "storage": "storage/.meta.sqlite"}


@pytest.fixture
def home_with_state(tmp_path: Path) -> Path:
    """A home holding a bucket, an object and a Vertex record, stopped cleanly."""
    home = tmp_path / "home"
    with LocalCloud(home=home) as cloud:
        context = cloud.context()
        context.storage_client().create_bucket("kept").blob("a.txt").upload_from_string("a")
        endpoint = {"display_name": "kept"}
        context.endpoint_client().create_endpoint(parent=context.parent, endpoint=endpoint).result()
    return home


@pytest.mark.parametrize("damage", [empty, garbage, damaged_pages], ids=lambda f: f.__name__)
@pytest.mark.parametrize("which", sorted(STATE_FILES))
def test_damaged_state_database_stops_the_start_naming_the_file_and_its_copy(
    home_with_state: Path, which: str, damage: Callable[[Path], None]
) -> None:
    path = home_with_state / STATE_FILES[which]
    damage(path)
    damaged = path.read_bytes()
    cloud = LocalCloud(home=home_with_state)
    with pytest.raises(StateError) as refused:
        cloud.start()
    cloud.stop()
    message = str(refused.value)
    backups = list(path.parent.glob(f"{path.name}.damaged-*"))
    assert len(backups) == 1, backups
    assert str(path) in message and str(backups[0]) in message
    assert "\n" not in message  # `local up` prints it as one line
    assert backups[0].read_bytes() == damaged
    assert path.read_bytes() == damaged  # left as it was: the user decides


def test_home_from_before_the_version_row_starts_and_keeps_its_records(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "vertex").mkdir(parents=True)
    old = sqlite3.connect(home / "vertex" / "vertex.sqlite")
    old.execute(
        "CREATE TABLE resources (name TEXT PRIMARY KEY, collection TEXT NOT NULL,"
        " parent TEXT NOT NULL, body TEXT NOT NULL, seq INTEGER NOT NULL)"
    )
    old.commit()
    old.close()
    with LocalCloud(home=home) as cloud:
        listed = cloud.context().endpoint_client().list_endpoints(parent=cloud.context().parent)
        assert list(listed) == []
    assert not list((home / "vertex").glob("*.damaged-*"))


# -- no silent loss: interrupted uploads -------------------------------------------------------
def dead_pid() -> int:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
    return int(finished.stdout)


def test_start_removes_what_interrupted_uploads_left(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with LocalCloud(home=home) as cloud:
        bucket = cloud.context().storage_client().create_bucket("uploads")
        session_url = bucket.blob("resumed.txt").create_resumable_upload_session()
        session_url = session_url.removeprefix(cloud.url)  # the next start has another port
    uploads = home / "storage" / ".uploads"
    stale = [
        uploads / f"tmp-{dead_pid()}-0a1b",
        uploads / "tmp-9f8e7d",
        uploads / f"session-{'c' * 32}",
    ]
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    in_flight = uploads / f"tmp-{writer.pid}-2c3d"  # another local cloud's upload, still writing
    try:
        for path in [*stale, in_flight]:
            path.write_bytes(b"half an upload")
        with LocalCloud(home=home) as cloud:
            assert [p.name for p in stale if p.exists()] == []
            assert in_flight.exists()
            # a resumable session is kept across a restart (GCS keeps one for a week)
            answer = urllib3.request(
                "PUT", cloud.url + session_url, body=b"done",
                headers={"Content-Range": "bytes 0-3/4"},
            )  # fmt: skip
            assert answer.status == 200, answer.data
            blob = cloud.context().storage_client().bucket("uploads").blob("resumed.txt")
            assert blob.download_as_bytes() == b"done"
    finally:
        writer.kill()
        writer.wait()


# -- a full disk -------------------------------------------------------------------------------
@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs: a real full disk (ENOSPC), where this machine lets us mount one."""
    disk = tmp_path / "disk"
    disk.mkdir()
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)],
            capture_output=True, text=True,
        )  # fmt: skip
    except FileNotFoundError:
        pytest.skip("no `mount` command on this machine")
    if mounted.returncode:
        pytest.skip(f"mounting a tmpfs is not permitted here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def fill(disk: Path) -> None:
    with (disk / "filler").open("wb") as filler, contextlib.suppress(OSError):
        while True:
            filler.write(b"\0" * 65536)
            filler.flush()


def test_object_bigger_than_the_free_disk_is_a_507_with_the_reason(tiny_disk: Path) -> None:
    with LocalCloud(home=tiny_disk / "home") as cloud:
        bucket = cloud.context().storage_client().create_bucket("full")
        with pytest.raises(exceptions.GoogleAPICallError) as refused:
            bucket.blob("big.bin").upload_from_string(b"x" * 6 * 2**20)
        assert refused.value.code == 507
        assert "No space left on device" in refused.value.message
        assert list(bucket.list_blobs()) == []
        assert list((tiny_disk / "home/storage/.uploads").iterdir()) == []


def test_vertex_record_on_a_full_disk_is_a_507_and_nothing_is_created(tiny_disk: Path) -> None:
    with LocalCloud(home=tiny_disk / "home") as cloud:
        context = cloud.context()
        client = context.endpoint_client()
        fill(tiny_disk)
        with pytest.raises(exceptions.GoogleAPICallError) as refused:
            client.create_endpoint(parent=context.parent, endpoint={"display_name": "e"})
        assert refused.value.code == 507
        assert "disk is full" in refused.value.message
        (tiny_disk / "filler").unlink()
        assert list(client.list_endpoints(parent=context.parent)) == []


FILE_SIZE_LIMITED_UPLOAD = """
import resource, signal, sys
from google.api_core import exceptions
from vertexkit.local import LocalCloud
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (2 * 2**20, resource.RLIM_INFINITY))
with LocalCloud(home=sys.argv[1]) as cloud:
    bucket = cloud.context().storage_client().create_bucket("limited")
    try:
        bucket.blob("big.bin").upload_from_string(b"x" * 6 * 2**20)
    except exceptions.GoogleAPICallError as error:
        print(error.code, error.message)
    print("listed", [blob.name for blob in bucket.list_blobs()])
"""


def test_file_size_limit_is_a_507_with_the_reason(tmp_path: Path) -> None:
    """Without mount rights: RLIMIT_FSIZE makes the same write fail (EFBIG), in a subprocess."""
    answer = subprocess.run(
        [sys.executable, "-c", FILE_SIZE_LIMITED_UPLOAD, str(tmp_path / "home")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert answer.returncode == 0, answer.stderr
    first, listed = answer.stdout.splitlines()
    assert first.startswith("507 ") and "File too large" in first
    assert listed == "listed []"
