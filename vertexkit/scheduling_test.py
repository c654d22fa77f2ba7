from __future__ import annotations

from pathlib import Path

import pytest

from vertexkit.scheduling import ScheduleError, Timing, kfp_recurring_run


def test_kfp_request_carries_the_converted_cron(tmp_path: Path) -> None:
    # No Kubeflow Pipelines server here: this checks the request `create_recurring_run` gets.
    template = tmp_path / "p.yaml"
    timing = Timing(cron="30 4 * * *", end_time="2031-01-01T00:00:00Z", max_concurrent_run_count=2)
    request, note = kfp_recurring_run("pkg.mod:nightly_pipeline", template, {"x": 1}, timing, "e1")
    assert request == {
        "experiment_id": "e1",
        "job_name": "nightly",
        "cron_expression": "0 30 4 * * *",
        "max_concurrency": 2,
        "params": {"x": 1},
        "pipeline_package_path": str(template),
        "no_catchup": True,
        "enabled": True,
        "end_time": "2031-01-01T00:00:00Z",
    }
    assert "'0 30 4 * * *'" in note and "seconds first" in note


@pytest.mark.parametrize(
    ("timing", "message"),
    [
        (Timing(cron="* * *"), "--cron"),
        (
            Timing(
                cron="0 * * * *", start_time="2030-02-01T00:00:00Z", end_time="2030-01-01T00:00:00Z"
            ),
            "--end-time .* must be after --start-time",
        ),
        (Timing(cron="0 * * * *", start_time="tomorrow"), "--start-time 'tomorrow'"),
        (Timing(cron="0 * * * *", start_time="2030-01-01T00:00:00"), "time zone"),
        (Timing(cron="0 * * * *", max_run_count=0), "--max-run-count"),
        (Timing(cron="0 * * * *", max_concurrent_run_count=0), "--max-concurrent-run-count"),
    ],
)
def test_refusals(timing: Timing, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        timing.validate()
