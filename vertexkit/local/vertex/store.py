"""Vertex resources as JSON documents in SQLite, keyed by resource name.

One table holds every kind of resource (custom jobs, models, endpoints, ...); a resource is the
camelCase JSON Vertex answers with. `mutate` is an atomic read-modify-write, so a job runner
thread and a cancel request never overwrite each other.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from vertexkit.local.errors import not_found
from vertexkit.local.processes import GroupRecord
from vertexkit.local.state import open_state_database

Resource = dict[str, Any]


def now_rfc3339() -> str:
    """A timestamp as Vertex writes it: RFC 3339, UTC, microseconds."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS resources (
    name TEXT PRIMARY KEY, collection TEXT NOT NULL, parent TEXT NOT NULL,
    body TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS by_collection ON resources (collection, parent, seq);
-- Each resource's state, read from the index: a start finds the jobs left running without
-- parsing every finished one (a pipeline job's body is ~100 kB, and a home keeps every run).
CREATE INDEX IF NOT EXISTS by_state ON resources (collection, json_extract(body, '$.state'));
CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, value INT);
CREATE TABLE IF NOT EXISTS processes (
    pgid INTEGER PRIMARY KEY, leader TEXT NOT NULL, cloud TEXT NOT NULL, owner TEXT NOT NULL);
"""


class ResourceStore:
    def __init__(self, path: Path, key: Callable[[str], str] = lambda name: name) -> None:
        """`key`: a resource name as the store keys it (`core.names`: the project's ID where a
        name carries its number), so a name from any answer finds its resource."""
        # Checked whole before use: a damaged or emptied file stops the start (StateError).
        self._db = open_state_database(path, SCHEMA, SCHEMA_VERSION, kind="vertex")
        self._lock = threading.RLock()
        self._key = key

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @staticmethod
    def new_id() -> str:
        """A numeric ID in the range Vertex uses for jobs, models and endpoints."""
        return str(random.randint(10**18, 9 * 10**18))

    def next_counter(self, key: str) -> int:
        """Increments and returns a named counter atomically (e.g. a model's version IDs)."""
        with self._lock:
            row = self._db.execute("SELECT value FROM counters WHERE key=?", (key,)).fetchone()
            value = (row[0] if row else 0) + 1
            self._db.execute("INSERT OR REPLACE INTO counters VALUES (?, ?)", (key, value))
            return value

    def insert(self, collection: str, name: str, body: Resource) -> Resource:
        name = self._key(name)
        parent = name.rsplit("/", 2)[0]
        with self._lock:
            seq = self._db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM resources").fetchone()[0]
            self._db.execute(
                "INSERT INTO resources VALUES (?, ?, ?, ?, ?)",
                (name, collection, parent, json.dumps(body), seq),
            )
        return body

    def find(self, name: str) -> Resource | None:
        name = self._key(name)
        with self._lock:
            row = self._db.execute("SELECT body FROM resources WHERE name=?", (name,)).fetchone()
        return json.loads(row[0]) if row else None

    def get(self, name: str, kind: str = "Resource") -> Resource:
        found = self.find(name)
        if found is None:
            raise not_found(f'{kind} "{name}" not found.')
        return found

    def put(self, name: str, body: Resource) -> Resource:
        name = self._key(name)
        with self._lock:
            self._db.execute("UPDATE resources SET body=? WHERE name=?", (json.dumps(body), name))
        return body

    def mutate(
        self, name: str, change: Callable[[Resource], None], kind: str = "Resource"
    ) -> Resource:
        """Applies `change` to the stored resource in place, atomically, and saves it."""
        with self._lock:
            body = self.get(name, kind)
            change(body)
            self.put(name, body)
            return body

    def delete(self, name: str) -> None:
        name = self._key(name)
        with self._lock:
            self._db.execute("DELETE FROM resources WHERE name=?", (name,))

    def list(self, collection: str, parent: str | None = None) -> list[Resource]:
        query = "SELECT body FROM resources WHERE collection=?"
        args: tuple[Any, ...] = (collection,)
        if parent is not None:
            query += " AND parent=?"
            args += (self._key(parent),)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY seq", args).fetchall()
        return [json.loads(row[0]) for row in rows]

    def list_in_states(self, collection: str, states: Iterable[str]) -> list[Resource]:
        """The resources of `collection` whose `state` is one of `states`, oldest first."""
        return self._by_state(collection, states, "IN")

    def list_not_in_states(self, collection: str, states: Iterable[str]) -> list[Resource]:
        """The resources of `collection` whose `state` is none of `states` (or unset)."""
        return self._by_state(collection, states, "NOT IN")

    def _by_state(self, collection: str, states: Iterable[str], test: str) -> list[Resource]:
        # The expression as the by_state index spells it, so SQLite reads it from the index.
        state = "json_extract(body, '$.state')"
        wanted = sorted(states)
        among = f"{state} {test} ({', '.join('?' * len(wanted))})"
        where = f"({state} IS NULL OR {among})" if test == "NOT IN" else among
        query = f"SELECT body FROM resources WHERE collection=? AND {where} ORDER BY seq"
        with self._lock:
            rows = self._db.execute(query, (collection, *wanted)).fetchall()
        return [json.loads(row[0]) for row in rows]

    def iter_all(self, collection: str) -> Iterator[Resource]:
        yield from self.list(collection)

    # -- process groups the local cloud started (see vertexkit/local/processes.py) ---------------
    def record_process(self, record: GroupRecord) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO processes VALUES (?, ?, ?, ?)",
                (record.pgid, record.leader, record.cloud, record.owner),
            )

    def forget_process(self, pgid: int) -> None:
        with self._lock:
            self._db.execute("DELETE FROM processes WHERE pgid=?", (pgid,))

    def recorded_processes(self) -> list[GroupRecord]:
        with self._lock:
            rows = self._db.execute("SELECT pgid, leader, cloud, owner FROM processes").fetchall()
        return [GroupRecord(*row) for row in rows]


def page(items: list[Resource], query: dict[str, str], key: str) -> Resource:
    """A list response with `pageSize`/`pageToken` paging (the token is an offset)."""
    size = int(query.get("pageSize") or 0) or 100
    start = int(query.get("pageToken") or 0)
    chunk = items[start : start + size]
    response: Resource = {key: chunk} if chunk else {}
    if start + size < len(items):
        response["nextPageToken"] = str(start + size)
    return response


def new_job_resource(name: str, body: Resource, queued_state: str) -> Resource:
    """A job as created: its request body, its name, queued, stamped."""
    now = now_rfc3339()
    return {**body, "name": name, "state": queued_state, "createTime": now, "updateTime": now}


def stamp_state(job: Resource, state: str, running_state: str, terminal_states: frozenset) -> None:
    """Moves a job to `state`, stamping startTime when it first runs (Vertex: "the time the
    job first entered RUNNING", so a job cancelled while queued has none) and endTime when it
    ends."""
    now = now_rfc3339()
    job["state"] = state
    job["updateTime"] = now
    if state == running_state:
        job.setdefault("startTime", now)
    if state in terminal_states:
        job["endTime"] = now


def apply_update_mask(
    doc: Resource, paths: list[str], field_by_path: dict[str, str], patch: Resource
) -> None:
    """A PATCH with an update mask: each masked field takes the patch's value, or is cleared
    when the patch leaves it out (as Vertex does)."""
    for path in paths:
        field = field_by_path[path]
        if field in patch:
            doc[field] = patch[field]
        else:
            doc.pop(field, None)
