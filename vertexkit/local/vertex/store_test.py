"""The resource store's reads by state: what a start uses to find the jobs left running, read
through the `by_state` index so that a home's finished runs are not parsed at every start."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vertexkit.local.vertex.store import ResourceStore

JOBS = "projects/p/locations/us-central1/pipelineJobs"


def store_with_jobs(path: Path) -> ResourceStore:
    store = ResourceStore(path)
    for job_id, state in [("a", "RUNNING"), ("b", "SUCCEEDED"), ("c", None), ("d", "PENDING")]:
        body = {"name": f"{JOBS}/{job_id}", **({"state": state} if state else {})}
        store.insert("pipelineJobs", body["name"], body)
    other = "projects/p/locations/us-central1/customJobs/e"
    store.insert("customJobs", other, {"name": other, "state": "RUNNING"})
    return store


def names(resources: list[dict]) -> list[str]:
    return [r.get("name", "").rsplit("/", 1)[-1] for r in resources]


def test_reads_by_state_in_and_not_in_oldest_first_in_one_collection(tmp_path: Path) -> None:
    store = store_with_jobs(tmp_path / "vertex.sqlite")
    try:
        assert names(store.list_in_states("pipelineJobs", {"RUNNING", "PENDING"})) == ["a", "d"]
        assert names(store.list_in_states("pipelineJobs", set())) == []
        # a resource with no state is among those not in any state
        assert names(store.list_not_in_states("pipelineJobs", {"SUCCEEDED"})) == ["a", "c", "d"]
        assert names(store.list_not_in_states("pipelineJobs", set())) == ["a", "b", "c", "d"]
    finally:
        store.close()


def test_the_state_is_read_from_the_index_also_in_a_home_made_before_it(tmp_path: Path) -> None:
    path = tmp_path / "vertex.sqlite"
    store_with_jobs(path).close()
    with sqlite3.connect(path) as db:  # a home written before the index existed
        db.execute("DROP INDEX by_state")
    store = ResourceStore(path)
    try:
        plan = " ".join(
            str(row)
            for row in store._db.execute(
                "EXPLAIN QUERY PLAN SELECT body FROM resources WHERE collection=? AND "
                "json_extract(body, '$.state') IN (?)",
                ("pipelineJobs", "RUNNING"),
            )
        )
        assert "USING INDEX by_state" in plan
        assert names(store.list_in_states("pipelineJobs", {"RUNNING"})) == ["a"]
    finally:
        store.close()
