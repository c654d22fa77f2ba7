"""Small JSON records kept beside the objects, in the storage sidecar's `records` table.

Each record is (scope, kind, key) -> a JSON object: scope is a bucket (ACL entries of an object,
folders, managed folders, notification configs, operations) or a project (HMAC keys). Deleting a
bucket drops every record scoped to it (`ObjectStore.delete_bucket`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    scope TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (scope, kind, key));
"""


class RecordStore:
    def __init__(self, db: sqlite3.Connection, lock: threading.RLock) -> None:
        self._db = db
        self.lock = lock  # the object store's: a caller may hold it across read-modify-write

    def get(self, scope: str, kind: str, key: str) -> dict[str, Any] | None:
        with self.lock:
            row = self._db.execute(
                "SELECT body FROM records WHERE scope=? AND kind=? AND key=?", (scope, kind, key)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, scope: str, kind: str, key: str, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self._db.execute(
                "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?)",
                (scope, kind, key, json.dumps(body)),
            )
        return body

    def delete(self, scope: str, kind: str, key: str) -> bool:
        with self.lock:
            cursor = self._db.execute(
                "DELETE FROM records WHERE scope=? AND kind=? AND key=?", (scope, kind, key)
            )
        return cursor.rowcount > 0

    def items(self, scope: str, kind: str, prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
        """(key, body) of the records whose key starts with `prefix`, sorted by key."""
        with self.lock:
            rows = self._db.execute(
                "SELECT key, body FROM records WHERE scope=? AND kind=? AND substr(key,1,?)=? "
                "ORDER BY key",
                (scope, kind, len(prefix), prefix),
            ).fetchall()
        return [(key, json.loads(body)) for key, body in rows]

    def drop_scope(self, scope: str, kinds: tuple[str, ...]) -> None:
        with self.lock:
            for kind in kinds:
                self._db.execute("DELETE FROM records WHERE scope=? AND kind=?", (scope, kind))
