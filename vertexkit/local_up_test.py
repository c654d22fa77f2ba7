"""One local cloud per home, in-process: the claim, the record later commands read, and the
refusal that names the cloud serving the home. (The CLI's three ways in, two `local up`, a
`local exec` and two `vertexkit run`, are in vertexkit/cli/local_test.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from vertexkit import local_up
from vertexkit.local import LocalCloud
from vertexkit.local_up import (
    LOCAL_UP,
    RUN,
    SERVING_FILE,
    HomeClaim,
    HomeServed,
    running_local_up,
    serving_env,
    serving_record,
)


def test_a_served_home_refuses_a_second_cloud_naming_the_first(tmp_path: Path) -> None:
    with LocalCloud(home=tmp_path, use=LOCAL_UP) as first:
        with pytest.raises(HomeServed) as refused:
            LocalCloud(home=tmp_path).start()
        message = str(refused.value)
        assert str(tmp_path) in message and first.url in message and "local exec" in message
        assert first.storage.ensure_bucket("still-serving") is None  # the first one serves on
        assert not list(tmp_path.rglob("*.damaged-*"))  # a lock is never called damage
    with LocalCloud(home=tmp_path):  # released at stop: the home can be served again
        pass


def test_the_record_says_who_serves_and_whether_it_lasts(tmp_path: Path) -> None:
    assert serving_record(tmp_path) is None  # no claim at all
    with LocalCloud(home=tmp_path, use=RUN) as cloud:
        record = serving_record(tmp_path)
        assert record is not None
        assert (record["url"], record["by"], record["lasting"]) == (cloud.url, RUN.by, False)
        assert serving_env(tmp_path) == cloud.env()  # a read verb may use a run's cloud
        assert running_local_up(tmp_path) is None  # a `vertexkit run` does not: it ends first
    assert serving_record(tmp_path) is None
    assert (tmp_path / SERVING_FILE).read_text() == ""  # the record goes with the claim


def test_a_claim_that_never_answers_is_refused_after_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_up, "ANSWER_WAIT_S", 0.3)
    claim = HomeClaim.take(tmp_path)  # claimed, never announced: a start that hangs
    try:
        with pytest.raises(HomeServed, match="has not answered"):
            HomeClaim.take(tmp_path)
        assert serving_record(tmp_path) is None
    finally:
        claim.release()
    HomeClaim.take(tmp_path).release()
