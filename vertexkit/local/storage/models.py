"""The state of the local Cloud Storage: buckets are directories, objects are files.

Layout under the storage home:

    <bucket>/<object name>      the object's bytes, a plain file (whatever writes it IS the object)
    .meta.sqlite                sidecar metadata: generation, hashes, content type, custom metadata
    .uploads/                   temp files of uploads in progress and of resumable sessions

A sidecar row is trusted only while the file's (size, mtime_ns, inode) still match it; a file
written or replaced directly on disk gets derived metadata (generation = mtime_ns, hashes
computed once and cached). Every write goes to a temp file first and lands with `os.replace`,
so no reader ever sees a half-written object. Folder placeholders (zero-byte names ending in
`/`) live in the sidecar only. Only the live generation of an object is kept (no versioning).
"""

from __future__ import annotations

import contextlib
import json
import mimetypes
import os
import re
import shutil
import stat
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vertexkit.local.errors import ApiError, bad_request, conflict, not_found
from vertexkit.local.state import open_state_database
from vertexkit.local.storage.hashing import Hasher, copy_hashed, hash_file
from vertexkit.local.storage.names import check_bucket_name, check_object_name, is_folder_name
from vertexkit.local.storage.records import SCHEMA as RECORDS_SCHEMA
from vertexkit.local.storage.records import RecordStore

META_DB = ".meta.sqlite"
UPLOADS_DIR = ".uploads"
DEFAULT_CONTENT_TYPE = "application/octet-stream"
FOLDER_KEY = (-1, -1, -1)  # the (size, mtime_ns, inode) key of a metadata-only placeholder
EMPTY = Hasher()
# Object fields a client may set (insert, patch, update, rewrite destination).
WRITABLE_FIELDS = (
    "cacheControl",
    "contentDisposition",
    "contentEncoding",
    "contentLanguage",
    "customTime",
    "metadata",
    "temporaryHold",
    "eventBasedHold",
    "storageClass",
)
# Object fields only the store sets: a composed object's componentCount (sum of its sources').
SYSTEM_FIELDS = ("componentCount",)
MAX_COMPOSE_SOURCES = 32
SCHEMA_VERSION = 1
# Cloud Storage's own messages (recorded traffic: k8s-config-connector's storage _http.log).
NO_SUCH_BUCKET = "The specified bucket does not exist."
PRECONDITION_FAILED = "At least one of the pre-conditions you specified did not hold."
# Its 409 on a bucket created again, reason "conflict" (googleapi's "Error 409: <message>,
# conflict", as Terraform's google provider reports it).
BUCKET_OWNED = "Your previous request to create the named bucket succeeded and you already own it."
RESUMABLE_SESSION_NS = 7 * 24 * 3600 * 10**9  # a resumable upload session lives one week


@dataclass(frozen=True)
class ObjectRecord:
    bucket: str
    name: str
    generation: int
    metageneration: int
    size: int
    md5: str | None
    crc32c: str | None
    content_type: str
    fields: dict[str, Any]
    created_ns: int
    updated_ns: int
    file_key: tuple[int, int, int] = FOLDER_KEY

    @property
    def is_folder(self) -> bool:
        return self.file_key == FOLDER_KEY


@dataclass(frozen=True)
class Preconditions:
    """ifGenerationMatch & co.; `None` means "not given"."""

    if_generation_match: int | None = None
    if_generation_not_match: int | None = None
    if_metageneration_match: int | None = None
    if_metageneration_not_match: int | None = None

    def check(self, current: ObjectRecord | None, what: str = "object") -> None:
        generation = current.generation if current else 0
        failures = []
        if self.if_generation_match is not None and generation != self.if_generation_match:
            failures.append(f"ifGenerationMatch={self.if_generation_match}")
        if self.if_generation_not_match is not None and generation == self.if_generation_not_match:
            failures.append(f"ifGenerationNotMatch={self.if_generation_not_match}")
        meta = current.metageneration if current else None
        if self.if_metageneration_match is not None and meta != self.if_metageneration_match:
            failures.append(f"ifMetagenerationMatch={self.if_metageneration_match}")
        if self.if_metageneration_not_match is not None and (
            meta is None or meta == self.if_metageneration_not_match
        ):
            failures.append(f"ifMetagenerationNotMatch={self.if_metageneration_not_match}")
        if failures:  # Google's message names neither the condition nor the generation
            raise ApiError(412, PRECONDITION_FAILED, reason="conditionNotMet")


@dataclass
class UploadSession:
    id: str
    bucket: str
    name: str
    content_type: str
    fields: dict[str, Any]
    preconditions: Preconditions
    total: int | None
    part: Path
    hasher: Hasher | None = field(default=None, repr=False)

    @property
    def received(self) -> int:
        return self.part.stat().st_size if self.part.exists() else 0


@dataclass(frozen=True)
class Listing:
    items: list[ObjectRecord]
    prefixes: list[str]
    next_page_token: str | None


class ObjectStore:
    """Buckets, objects and resumable upload sessions under one directory."""

    def __init__(self, home: Path, project: str = "local-project") -> None:
        self.home = home
        # The project a bucket belongs to when nothing else says so (one made by the local
        # cloud itself, or a directory made on disk): the local cloud's own project.
        self.project = project
        self.uploads = home / UPLOADS_DIR
        self.uploads.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._hashers: dict[str, Hasher] = {}  # running hashes of resumable sessions
        # Checked whole before use: a damaged or emptied sidecar stops the start (StateError).
        self._db = open_state_database(home / META_DB, _SCHEMA, SCHEMA_VERSION, kind="storage")
        # In WAL mode NORMAL syncs at checkpoints, not at every commit, so a small upload no
        # longer waits for an fsync: a crash of the process loses nothing; a power cut at most
        # the last commits' rows (such an object is then served from its file, hashed again).
        self._db.execute("PRAGMA synchronous=NORMAL")
        self.records = RecordStore(self._db, self._lock)
        self.clean_uploads()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- paths -------------------------------------------------------------------------------
    def bucket_root(self, bucket: str) -> Path:
        return self.home / check_bucket_name(bucket)

    def object_path(self, bucket: str, name: str) -> Path:
        """The file holding gs://bucket/name; the name is validated so it stays inside."""
        check_object_name(name)
        root = self.bucket_root(bucket)
        path = root / name.rstrip("/")
        if os.path.commonpath([root, os.path.normpath(path)]) != str(root):
            raise bad_request(f"Object name {name!r} escapes its bucket.")
        return path

    def temp_file(self) -> Path:
        """A temp file named after this process, so a later start knows it was left behind."""
        return self.uploads / f"tmp-{os.getpid()}-{uuid.uuid4().hex}"

    @contextlib.contextmanager
    def filling_temp(self, temp: Path | None = None) -> Iterator[Path]:
        """A temp file being written; removed if the writing fails (a full disk, a read error)
        so nothing half-written stays behind. `commit` takes over a complete one."""
        temp = temp or self.temp_file()
        try:
            yield temp
        except BaseException:
            temp.unlink(missing_ok=True)
            raise

    def clean_uploads(self) -> None:
        """Removes what interrupted uploads left: temp files of processes that are gone,
        resumable session files without a session, and sessions past their week (GCS's)."""
        for temp in self.uploads.glob("tmp-*"):
            if not _writer_alive(temp.name):
                temp.unlink(missing_ok=True)
        expired = time.time_ns() - RESUMABLE_SESSION_NS
        with self._lock:
            self._db.execute("DELETE FROM uploads WHERE created_ns < ?", (expired,))
            sessions = {row[0] for row in self._db.execute("SELECT id FROM uploads")}
        for part in self.uploads.glob("session-*"):
            if part.name.removeprefix("session-") not in sessions:
                part.unlink(missing_ok=True)

    # -- buckets -----------------------------------------------------------------------------
    def bucket_exists(self, bucket: str) -> bool:
        return self.bucket_root(bucket).is_dir()

    def create_bucket(self, bucket: str, project: str, resource: dict[str, Any]) -> dict:
        with self._lock:
            root = self.bucket_root(bucket)
            if root.exists():
                raise ApiError(409, BUCKET_OWNED, reason="conflict")
            root.mkdir()
            return self._insert_bucket_row(bucket, project, resource)

    def ensure_bucket(self, bucket: str, project: str) -> None:
        with self._lock:
            self.bucket_root(bucket).mkdir(parents=True, exist_ok=True)
            if not self._bucket_row(bucket):
                self._insert_bucket_row(bucket, project, {})

    def get_bucket(self, bucket: str) -> dict:
        """The bucket's stored resource (a directory made on disk gets a default one)."""
        root = self.bucket_root(bucket)
        if not root.is_dir():
            raise not_found(NO_SUCH_BUCKET)
        row = self._bucket_row(bucket)
        if row:
            return row
        created = root.stat().st_mtime_ns
        # A directory made on disk is listed under every project (on_disk) but owned, as
        # projectNumber and IAM say, by the local cloud's project.
        return {"name": bucket, "project": self.project, "resource": {}, "created_ns": created,
                "updated_ns": created, "metageneration": 1, "on_disk": True}  # fmt: skip

    def list_buckets(self, project: str, prefix: str = "") -> list[dict]:
        buckets = []
        for entry in sorted(os.scandir(self.home), key=lambda e: e.name):
            hidden = entry.name.startswith(".")
            if hidden or not entry.is_dir() or not entry.name.startswith(prefix):
                continue
            try:
                bucket = self.get_bucket(entry.name)
            except ApiError:  # a directory whose name is not a valid bucket name
                continue
            if bucket.get("on_disk") or bucket["project"] in (None, project):
                buckets.append(bucket)
        return buckets

    def patch_bucket(
        self, bucket: str, changes: dict[str, Any], metageneration: int | None
    ) -> dict:
        with self._lock:
            current = self.get_bucket(bucket)
            if metageneration is not None and metageneration != current["metageneration"]:
                raise ApiError(412, PRECONDITION_FAILED, reason="conditionNotMet")
            resource = {**current["resource"], **changes}
            if not self._bucket_row(bucket):
                self._insert_bucket_row(bucket, current["project"] or self.project, {})
            self._db.execute(
                "UPDATE buckets SET resource=?, metageneration=metageneration+1, updated_ns=? "
                "WHERE name=?",
                (json.dumps(resource), time.time_ns(), bucket),
            )
            return self.get_bucket(bucket)

    def delete_bucket(self, bucket: str) -> None:
        with self._lock:
            self.get_bucket(bucket)
            if self._has_objects(bucket, ""):
                raise conflict(
                    f"The bucket you tried to delete is not empty: {bucket!r}. Delete its "
                    "objects first (or use bucket.delete(force=True))."
                )
            shutil.rmtree(self.bucket_root(bucket))
            self._db.execute("DELETE FROM buckets WHERE name=?", (bucket,))
            self._db.execute("DELETE FROM objects WHERE bucket=?", (bucket,))
            self._db.execute("DELETE FROM records WHERE scope=?", (bucket,))

    def _bucket_row(self, bucket: str) -> dict | None:
        row = self._db.execute(
            "SELECT name, project, resource, created_ns, updated_ns, metageneration "
            "FROM buckets WHERE name=?",
            (bucket,),
        ).fetchone()
        if not row:
            return None
        keys = ("name", "project", "resource", "created_ns", "updated_ns", "metageneration")
        return {**dict(zip(keys, row, strict=True)), "resource": json.loads(row[2])}

    def _insert_bucket_row(self, bucket: str, project: str, resource: dict[str, Any]) -> dict:
        now = time.time_ns()
        self._db.execute(
            "INSERT OR REPLACE INTO buckets VALUES (?, ?, ?, ?, ?, 1)",
            (bucket, project, json.dumps(resource), now, now),
        )
        return self.get_bucket(bucket)

    def _require_bucket(self, bucket: str) -> Path:
        root = self.bucket_root(bucket)
        if not root.is_dir():
            raise not_found(NO_SUCH_BUCKET)
        return root

    # -- objects: read -----------------------------------------------------------------------
    def stat(
        self, bucket: str, name: str, *, hashes: bool = True, generation: int | None = None
    ) -> ObjectRecord | None:
        """The live object, or None. Files changed on disk get fresh derived metadata."""
        self._require_bucket(bucket)
        path = self.object_path(bucket, name)
        with self._lock:
            row = self._object_row(bucket, name)
        folder = is_folder_name(name)
        record = row if folder else self._file_record(bucket, name, path, row, hashes)
        if record and generation is not None and record.generation != generation:
            return None
        return record

    def require(
        self, bucket: str, name: str, generation: int | None = None, hashes: bool = True
    ) -> ObjectRecord:
        record = self.stat(bucket, name, hashes=hashes, generation=generation)
        if record is None:  # Google's words, with or without a generation asked for
            raise not_found(f"No such object: {bucket}/{name}")
        return record

    def _file_record(
        self, bucket: str, name: str, path: Path, row: ObjectRecord | None, hashes: bool
    ) -> ObjectRecord | None:
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not _is_regular(st):
            return None
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        if row and row.file_key == key:
            return row
        derived = ObjectRecord(
            bucket=bucket, name=name, generation=st.st_mtime_ns, metageneration=1,
            size=st.st_size, md5=None, crc32c=None,
            content_type=mimetypes.guess_type(name)[0] or DEFAULT_CONTENT_TYPE, fields={},
            created_ns=st.st_mtime_ns, updated_ns=st.st_mtime_ns, file_key=key,
        )  # fmt: skip
        return self._cache_hashes(path, derived) if hashes else derived

    def _cache_hashes(self, path: Path, record: ObjectRecord) -> ObjectRecord:
        """Hashes a file that has no valid sidecar row, caching the result if it held still."""
        hasher = hash_file(path)
        record = replace(record, md5=hasher.md5, crc32c=hasher.crc32c)
        st = os.stat(path)
        if (st.st_size, st.st_mtime_ns, st.st_ino) == record.file_key:
            with self._lock:
                self._put_object_row(record)
        return record

    # -- objects: write ----------------------------------------------------------------------
    def commit(
        self,
        temp: Path,
        hasher: Hasher,
        bucket: str,
        name: str,
        content_type: str | None,
        fields: dict[str, Any],
        preconditions: Preconditions = Preconditions(),
    ) -> ObjectRecord:
        """Moves a fully written temp file into place as the new live generation of the object."""
        try:
            self._require_bucket(bucket)
            path = self.object_path(bucket, name)
            if is_folder_name(name) and hasher.size:
                raise bad_request(
                    f"Object name {name!r} ends with '/': the local store keeps such names only "
                    "as zero-byte folder placeholders."
                )
            with self._lock:
                current = self.stat(bucket, name, hashes=False)
                preconditions.check(current)
                key = FOLDER_KEY
                if not is_folder_name(name):
                    self._make_parents(bucket, name, path)
                    os.replace(temp, path)
                    st = os.stat(path)
                    key = (st.st_size, st.st_mtime_ns, st.st_ino)
                return self._put_new_generation(
                    bucket, name, current, hasher, content_type, fields, key
                )
        finally:
            temp.unlink(missing_ok=True)

    def _put_new_generation(
        self,
        bucket: str,
        name: str,
        current: ObjectRecord | None,
        hasher: Hasher,
        content_type: str | None,
        fields: dict[str, Any],
        key: tuple[int, int, int],
    ) -> ObjectRecord:
        now = time.time_ns()
        generation = max(now, current.generation + 1 if current else 0)
        record = ObjectRecord(
            bucket=bucket, name=name, generation=generation, metageneration=1,
            size=hasher.size, md5=hasher.md5, crc32c=hasher.crc32c,
            content_type=content_type or mimetypes.guess_type(name)[0] or DEFAULT_CONTENT_TYPE,
            fields={**_clean_fields(fields), **_system_fields(fields)},
            created_ns=now, updated_ns=now, file_key=key,
        )  # fmt: skip
        self._put_object_row(record)
        return record

    def _make_parents(self, bucket: str, name: str, path: Path) -> None:
        """Creates the object's directories, refusing names that collide with a file or dir."""
        root = self.bucket_root(bucket)
        parent = path.parent
        for ancestor in [parent, *parent.parents]:
            if ancestor == root:
                break
            if ancestor.is_file():
                other = ancestor.relative_to(root).as_posix()
                raise conflict(
                    f"Cannot store {name!r}: object {other!r} exists, and in the local store "
                    "(objects are files) an object name cannot also be a folder of other objects."
                )
        if path.is_dir():
            raise conflict(
                f"Cannot store {name!r}: objects named {name + '/'!r}... exist, and in the local "
                "store (objects are files) a folder of objects cannot also be an object."
            )
        parent.mkdir(parents=True, exist_ok=True)

    def write_bytes(
        self, bucket: str, name: str, data: bytes, content_type: str | None = None,
        fields: dict[str, Any] | None = None, preconditions: Preconditions = Preconditions(),
    ) -> ObjectRecord:  # fmt: skip
        hasher = Hasher()
        hasher.update(data)
        with self.filling_temp() as temp:
            temp.write_bytes(data)
        return self.commit(temp, hasher, bucket, name, content_type, fields or {}, preconditions)

    def write_file(
        self, bucket: str, name: str, source: Path, content_type: str | None = None
    ) -> ObjectRecord:
        with self.filling_temp() as temp:
            hasher = copy_hashed(source, temp)
        return self.commit(temp, hasher, bucket, name, content_type, {})

    def patch(
        self,
        bucket: str,
        name: str,
        changes: dict[str, Any],
        preconditions: Preconditions,
        *,
        replace_all: bool = False,
        generation: int | None = None,
    ) -> ObjectRecord:
        """PATCH merges fields (a null metadata value deletes the key); PUT replaces them."""
        with self._lock:
            current = self.require(bucket, name, generation)
            preconditions.check(current)
            fields = {} if replace_all else dict(current.fields)
            for key, value in changes.items():
                if key == "metadata" and isinstance(value, dict) and not replace_all:
                    merged = {**fields.get("metadata", {}), **value}
                    fields["metadata"] = {k: v for k, v in merged.items() if v is not None}
                elif key in WRITABLE_FIELDS:
                    fields[key] = value
            content_type = changes.get("contentType") or (
                DEFAULT_CONTENT_TYPE if replace_all else current.content_type
            )
            record = replace(
                current, fields={**_clean_fields(fields), **_system_fields(current.fields)},
                content_type=content_type,
                metageneration=current.metageneration + 1, updated_ns=time.time_ns(),
            )  # fmt: skip
            self._put_object_row(record)
            return record

    def delete(
        self, bucket: str, name: str, preconditions: Preconditions, generation: int | None = None
    ) -> None:
        with self._lock:
            current = self.require(bucket, name, generation, hashes=False)
            preconditions.check(current)
            if not current.is_folder:
                path = self.object_path(bucket, name)
                path.unlink(missing_ok=True)
                self._prune_empty_dirs(bucket, path.parent)
            self._db.execute("DELETE FROM objects WHERE bucket=? AND name=?", (bucket, name))

    def _prune_empty_dirs(self, bucket: str, directory: Path) -> None:
        """Removes directories left empty, so their prefix disappears as it does in GCS."""
        root = self.bucket_root(bucket)
        while directory != root and root in directory.parents:
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent

    def copy(
        self,
        source: ObjectRecord,
        bucket: str,
        name: str,
        destination: dict[str, Any],
        preconditions: Preconditions,
    ) -> ObjectRecord:
        """Copies (rewrites) `source` to bucket/name; destination fields override the source's."""
        content_type, fields = _destination_fields(source, destination)
        temp = self.temp_file()
        if source.is_folder:
            temp.touch()
            return self.commit(temp, EMPTY, bucket, name, content_type, fields, preconditions)
        src_path = self.object_path(source.bucket, source.name)
        with self.filling_temp(temp):
            shutil.copyfile(src_path, temp)
        st = os.stat(src_path)
        if (st.st_size, st.st_mtime_ns, st.st_ino) == source.file_key and source.md5:
            hasher = _known_hashes(source)
        else:  # the source changed while we copied: hash what we actually copied
            hasher = hash_file(temp)
        return self.commit(temp, hasher, bucket, name, content_type, fields, preconditions)

    def compose(
        self,
        bucket: str,
        name: str,
        sources: list[dict[str, Any]],
        destination: dict[str, Any],
        preconditions: Preconditions,
    ) -> ObjectRecord:
        if not 1 <= len(sources) <= MAX_COMPOSE_SOURCES:
            raise bad_request(
                f"sourceObjects must list 1 to {MAX_COMPOSE_SOURCES} objects; got {len(sources)}."
            )
        records = [self._compose_source(bucket, source) for source in sources]
        hasher = Hasher()
        with self.filling_temp() as temp, open(temp, "wb") as out:
            for record in records:
                if not record.is_folder:
                    with open(self.object_path(bucket, record.name), "rb") as stream:
                        while chunk := stream.read(1024 * 1024):
                            hasher.update(chunk)
                            out.write(chunk)
        content_type = destination.get("contentType") or records[0].content_type
        fields = {k: v for k, v in destination.items() if k in WRITABLE_FIELDS}
        fields["componentCount"] = sum(r.fields.get("componentCount", 1) for r in records)
        return self.commit(temp, hasher, bucket, name, content_type, fields, preconditions)

    def _compose_source(self, bucket: str, source: dict[str, Any]) -> ObjectRecord:
        if not isinstance(source, dict) or not source.get("name"):
            raise bad_request("sourceObjects[].name is required.")
        generation = _int_or_none(source.get("generation"), "sourceObjects[].generation")
        record = self.require(bucket, source["name"], generation, hashes=False)
        match = (source.get("objectPreconditions") or {}).get("ifGenerationMatch")
        condition = _int_or_none(match, "objectPreconditions.ifGenerationMatch")
        Preconditions(if_generation_match=condition).check(record, f"source {source['name']!r}")
        return record

    def move(
        self, bucket: str, source: str, target: str, preconditions: Preconditions
    ) -> ObjectRecord:
        """Atomic rename within a bucket (objects.move), keeping the metadata."""
        with self._lock:
            record = self.require(bucket, source)
            temp = self.temp_file()
            if not record.is_folder:
                os.replace(self.object_path(bucket, source), temp)
            else:
                temp.touch()
            moved = self.commit(
                temp, _known_hashes(record), bucket, target, record.content_type,
                record.fields, preconditions,
            )  # fmt: skip
            self._db.execute("DELETE FROM objects WHERE bucket=? AND name=?", (bucket, source))
            self._prune_empty_dirs(bucket, self.object_path(bucket, source).parent)
            return moved

    # -- listing -----------------------------------------------------------------------------
    def list(
        self,
        bucket: str,
        prefix: str = "",
        delimiter: str | None = None,
        max_results: int = 1000,
        page_token: str | None = None,
        start_offset: str | None = None,
        end_offset: str | None = None,
        match_glob: str | None = None,
    ) -> Listing:
        self._require_bucket(bucket)
        glob = _glob_regex(match_glob) if match_glob else None
        entries: dict[str, bool] = {}  # name or prefix -> is_prefix
        # Walking one directory level is enough for '/' grouping unless filters drop names.
        shallow = delimiter == "/" and not (glob or start_offset or end_offset)
        for name in sorted(self._names(bucket, prefix, shallow)):
            if (start_offset and name < start_offset) or (end_offset and name >= end_offset):
                continue
            if glob and not glob.fullmatch(name):
                continue
            rest = name[len(prefix) :]
            if delimiter and delimiter in rest:
                entries[prefix + rest[: rest.index(delimiter) + len(delimiter)]] = True
            else:
                entries[name] = False
        ordered = sorted(e for e in entries if page_token is None or e > page_token)
        page, more = ordered[:max_results], len(ordered) > max_results
        items = [r for n in page if not entries[n] and (r := self._listed(bucket, n)) is not None]
        prefixes = [n for n in page if entries[n]]
        return Listing(items, prefixes, page[-1] if more and page else None)

    def _listed(self, bucket: str, name: str) -> ObjectRecord | None:
        try:
            return self.stat(bucket, name)
        except ApiError:  # a file on disk whose name GCS could not hold (e.g. > 1024 bytes)
            return None

    def _names(self, bucket: str, prefix: str, shallow: bool) -> Iterator[str]:
        """Object names under `prefix` (files on disk + placeholders in the sidecar).

        With `shallow`, a directory below the prefix's own directory is yielded as a single
        name `dir/` + one file name (enough for delimiter '/' grouping) instead of walking it.
        """
        root = self._require_bucket(bucket)
        base_name = prefix[: prefix.rindex("/") + 1] if "/" in prefix else ""
        base = root / base_name if base_name else root
        if _safe_dir(root, base):
            yield from self._walk(root, base, prefix, shallow)
        with self._lock:
            rows = self._db.execute(
                "SELECT name FROM objects WHERE bucket=? AND mtime_ns=-1 AND substr(name,1,?)=?",
                (bucket, len(prefix), prefix),
            ).fetchall()
        yield from (row[0] for row in rows)

    def _walk(self, root: Path, base: Path, prefix: str, shallow: bool) -> Iterator[str]:
        for entry in os.scandir(base):
            name = Path(entry.path).relative_to(root).as_posix()
            if entry.is_dir(follow_symlinks=False):
                if not (name + "/").startswith(prefix) and not prefix.startswith(name + "/"):
                    continue
                if shallow and (name + "/").startswith(prefix):
                    first = next(self._walk(root, Path(entry.path), "", shallow=True), None)
                    if first is not None:
                        yield first
                else:
                    yield from self._walk(root, Path(entry.path), prefix, shallow)
            elif entry.is_file() and name.startswith(prefix):
                yield name

    def _has_objects(self, bucket: str, prefix: str) -> bool:
        return next(self._names(bucket, prefix, shallow=True), None) is not None

    def all_file_names(self, bucket: str, prefix: str = "") -> list[str]:
        """Every file-backed object name under `prefix` (placeholders excluded), sorted."""
        names = self._names(bucket, prefix, shallow=False)
        return sorted(n for n in names if not is_folder_name(n))

    # -- resumable uploads -------------------------------------------------------------------
    def start_upload(
        self,
        bucket: str,
        name: str,
        content_type: str | None,
        fields: dict[str, Any],
        preconditions: Preconditions,
        total: int | None,
    ) -> UploadSession:
        self._require_bucket(bucket)
        self.object_path(bucket, name)  # validates the name now, before any byte arrives
        preconditions.check(self.stat(bucket, name, hashes=False))
        session_id = uuid.uuid4().hex
        with self._lock:
            self._db.execute(
                "INSERT INTO uploads VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, bucket, name, content_type, json.dumps(fields),
                 json.dumps(preconditions.__dict__), total, time.time_ns()),
            )  # fmt: skip
        self._part(session_id).touch()
        self._hashers[session_id] = Hasher()
        return self.session(session_id)

    def session(self, session_id: str) -> UploadSession:
        with self._lock:
            row = self._db.execute(
                "SELECT bucket, name, content_type, fields, preconditions, total "
                "FROM uploads WHERE id=?",
                (session_id,),
            ).fetchone()
        if not row or not self._part(session_id).exists():
            raise not_found(f"No such resumable upload session: {session_id!r}.")
        session = UploadSession(
            id=session_id, bucket=row[0], name=row[1], content_type=row[2],
            fields=json.loads(row[3]), preconditions=Preconditions(**json.loads(row[4])),
            total=row[5], part=self._part(session_id),
        )  # fmt: skip
        hasher = self._hashers.get(session_id)
        if hasher is None or hasher.size != session.received:
            # After a restart the running hash is gone: rebuild it from the bytes on disk.
            hasher = self._hashers[session_id] = hash_file(session.part)
        session.hasher = hasher
        return session

    def finish_upload(self, session: UploadSession) -> ObjectRecord:
        assert session.hasher is not None
        try:
            return self.commit(
                session.part, session.hasher, session.bucket, session.name,
                session.content_type, session.fields, session.preconditions,
            )  # fmt: skip
        finally:
            self.cancel_upload(session.id)

    def cancel_upload(self, session_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM uploads WHERE id=?", (session_id,))
        self._hashers.pop(session_id, None)
        self._part(session_id).unlink(missing_ok=True)

    def _part(self, session_id: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{32}", session_id):
            raise not_found(f"No such resumable upload session: {session_id!r}.")
        return self.uploads / f"session-{session_id}"

    # -- sidecar rows ------------------------------------------------------------------------
    def _object_row(self, bucket: str, name: str) -> ObjectRecord | None:
        row = self._db.execute(
            "SELECT generation, metageneration, size, md5, crc32c, content_type, fields, "
            "created_ns, updated_ns, size_key, mtime_ns, ino FROM objects "
            "WHERE bucket=? AND name=?",
            (bucket, name),
        ).fetchone()
        if not row:
            return None
        return ObjectRecord(
            bucket=bucket, name=name, generation=row[0], metageneration=row[1], size=row[2],
            md5=row[3], crc32c=row[4], content_type=row[5], fields=json.loads(row[6]),
            created_ns=row[7], updated_ns=row[8], file_key=(row[9], row[10], row[11]),
        )  # fmt: skip

    def _put_object_row(self, r: ObjectRecord) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (r.bucket, r.name, r.generation, r.metageneration, r.size, r.md5, r.crc32c,
             r.content_type, json.dumps(r.fields), r.created_ns, r.updated_ns, *r.file_key),
        )  # fmt: skip


_SCHEMA = """
CREATE TABLE IF NOT EXISTS buckets (
    name TEXT PRIMARY KEY, project TEXT, resource TEXT NOT NULL,
    created_ns INTEGER NOT NULL, updated_ns INTEGER NOT NULL, metageneration INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS objects (
    bucket TEXT NOT NULL, name TEXT NOT NULL, generation INTEGER NOT NULL,
    metageneration INTEGER NOT NULL, size INTEGER NOT NULL, md5 TEXT, crc32c TEXT,
    content_type TEXT NOT NULL, fields TEXT NOT NULL, created_ns INTEGER NOT NULL,
    updated_ns INTEGER NOT NULL, size_key INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL, PRIMARY KEY (bucket, name));
CREATE TABLE IF NOT EXISTS uploads (
    id TEXT PRIMARY KEY, bucket TEXT NOT NULL, name TEXT NOT NULL, content_type TEXT,
    fields TEXT NOT NULL, preconditions TEXT NOT NULL, total INTEGER, created_ns INTEGER NOT NULL);
"""
_SCHEMA += RECORDS_SCHEMA


def _writer_alive(temp_name: str) -> bool:
    """Whether the process that named the temp file `tmp-PID-...` still runs (a reused pid
    keeps the file until a later start: harmless)."""
    pid = temp_name.split("-")[1]
    if not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_regular(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode)


def _safe_dir(root: Path, directory: Path) -> bool:
    return (
        directory.is_dir()
        and not directory.is_symlink()
        and (directory == root or root in directory.parents)
    )


def _system_fields(fields: dict[str, Any]) -> dict[str, Any]:
    return {key: fields[key] for key in SYSTEM_FIELDS if key in fields}


def _clean_fields(fields: dict[str, Any]) -> dict[str, Any]:
    cleaned = {k: v for k, v in fields.items() if k in WRITABLE_FIELDS and v is not None}
    if "metadata" in cleaned:
        if not isinstance(cleaned["metadata"], dict):
            raise bad_request("metadata must be an object of string keys and values.")
        cleaned["metadata"] = {
            str(k): str(v) for k, v in cleaned["metadata"].items() if v is not None
        }
    return cleaned


def _destination_fields(
    source: ObjectRecord, destination: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """Rewrite/copy keep the source's metadata unless the request body gives new metadata."""
    given = {k: v for k, v in destination.items() if k in WRITABLE_FIELDS}
    if not given and not destination.get("contentType"):
        return source.content_type, dict(source.fields)
    return destination.get("contentType") or source.content_type, given


def _known_hashes(record: ObjectRecord) -> Hasher:
    """A Hasher standing for already-known digests (no bytes re-read)."""
    return _KnownHasher(record)


class _KnownHasher(Hasher):
    def __init__(self, record: ObjectRecord) -> None:
        super().__init__()
        self.size = record.size
        self._known = (record.md5, record.crc32c)

    @property
    def md5(self) -> str:
        return self._known[0] or ""

    @property
    def crc32c(self) -> str:
        return self._known[1] or ""


def _int_or_none(value: Any, field_name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise bad_request(f"{field_name} must be an integer; got {value!r}.") from None


def _glob_regex(glob: str) -> re.Pattern[str]:
    """matchGlob as GCS reads it: `**` crosses '/', `*` and `?` do not, `[...]`, `{a,b}`."""
    out, i = [], 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = glob.find("]", i + 1)
            if end < 0:
                raise bad_request(f"matchGlob {glob!r} has an unclosed '['.")
            body = glob[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end
        elif char == "{":
            end = glob.find("}", i + 1)
            if end < 0:
                raise bad_request(f"matchGlob {glob!r} has an unclosed '{{'.")
            out.append("(?:" + "|".join(re.escape(a) for a in glob[i + 1 : end].split(",")) + ")")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out), re.DOTALL)
