"""What a pipeline job becomes when the local cloud stops under it."""

from __future__ import annotations

import pytest

from vertexkit.local.vertex.pipelines import models
from vertexkit.local.vertex.pipelines.runner import _mark_stopped_unless_done


def job_in(state: str) -> dict:
    job = {"name": "projects/p/locations/us-central1/pipelineJobs/j", "state": state}
    models.task_details(job).append({"taskId": "1", "taskName": "t", "state": "RUNNING"})
    return job


@pytest.mark.parametrize(
    ("state", "ends", "task_ends"),
    [
        # Ctrl-C on `vertexkit run`: the cancel is asked for, then the cloud stops at once.
        (models.CANCELLING, models.CANCELLED, models.TASK_CANCELLED),
        (models.RUNNING, models.FAILED, models.TASK_FAILED),
        (models.SUCCEEDED, models.SUCCEEDED, "RUNNING"),  # ended already: left as it is
    ],
    ids=["cancelling-ends-cancelled", "running-ends-failed", "ended-stays"],
)
def test_a_stop_ends_the_job_as_its_state_asks(state: str, ends: str, task_ends: str) -> None:
    job = job_in(state)
    _mark_stopped_unless_done(job)
    assert job["state"] == ends
    assert models.task_details(job)[0]["state"] == task_ends
    if ends == models.FAILED:
        assert job["error"]["message"] == models.STOPPED_WITH_CLOUD
