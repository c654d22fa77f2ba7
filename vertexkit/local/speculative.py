"""Work done ahead of a request that may never come, at a low CPU priority.

A run's local cloud starts a pipeline driver and its task workers before the job exists, so they
have imported kfp and the Google clients when its first task comes (`pipelines/standby.py`,
`pipelines/task_worker.py`). When every task then comes from the cache, that was a second or two
of CPU for nothing, taken from the command and the local cloud that the user is waiting for. Done
at a raised nice value, it takes only CPU that nothing else wants.

Linux keeps a nice value per thread, so the work runs in a thread of its own and only that thread
is lowered. The calling thread keeps its priority, and so does every process it forks later: a
child takes its forking thread's nice value, and a raised one cannot be lowered back without
privileges. Elsewhere the work runs as it is.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

SPECULATIVE_NICE = 10  # CFS weight 110 against 1024 at nice 0: about a tenth of a contended core


def at_low_priority(work: Callable[[], None]) -> None:
    """Runs `work` in a thread whose nice value is raised, waits for it, and raises what it
    raised."""
    if not sys.platform.startswith("linux"):  # elsewhere a thread id is not a PRIO_PROCESS id
        work()
        return
    failure: list[BaseException] = []

    def lowered() -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), SPECULATIVE_NICE)
            work()
        except BaseException as exc:  # re-raised in the calling thread
            failure.append(exc)

    thread = threading.Thread(target=lowered, name="vertexkit-speculative", daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
