"""JobThreads: each job gets a thread at once, threads are reused, idle ones end."""

from __future__ import annotations

import threading

from vertexkit.local.bigquery.running import JobThreads


def run_and_wait(threads: JobThreads, name: str = "bq-test") -> str:
    """Runs one job and answers the name of the thread it ran on."""
    ran_on: list[str] = []
    done = threading.Event()

    def work() -> None:
        ran_on.append(threading.current_thread().name)
        done.set()

    threads.run(work, name)
    assert done.wait(5)
    return ran_on[0]


def test_a_finished_jobs_thread_runs_the_next_job() -> None:
    threads = JobThreads(idle_s=5)
    first = run_and_wait(threads, "bq-first")
    assert wait_for_idle(threads)
    assert run_and_wait(threads, "bq-second") == first  # the same thread, not a new one
    threads.close()


def test_a_job_never_waits_for_a_running_one() -> None:
    threads = JobThreads(idle_s=5)
    release = threading.Event()
    threads.run(lambda: release.wait(5), "bq-long")
    try:
        assert run_and_wait(threads, "bq-short") == "bq-short"  # a thread of its own
    finally:
        release.set()
        threads.close()


def test_idle_threads_end_after_their_wait_and_on_close() -> None:
    threads = JobThreads(idle_s=0.05)
    name = run_and_wait(threads, "bq-timed-out")
    assert ended(name)
    threads = JobThreads(idle_s=30)
    name = run_and_wait(threads, "bq-closed")
    assert wait_for_idle(threads)
    threads.close()
    assert ended(name)


def wait_for_idle(threads: JobThreads) -> bool:
    for _ in range(500):
        if threads._idle:
            return True
        threading.Event().wait(0.01)
    return False


def ended(name: str) -> bool:
    for _ in range(500):
        if not any(thread.name == name for thread in threading.enumerate()):
            return True
        threading.Event().wait(0.01)
    return False
