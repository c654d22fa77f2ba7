"""Bucket and object name rules: Cloud Storage's own, plus the few a file-backed store needs.

Every name is checked before anything touches the disk, so no request can reach outside the
store: absolute names, `.` and `..` segments and NUL are refused with a 400 naming the problem.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from vertexkit.local.errors import ApiError, bad_request
from vertexkit.specs import SpecError, validate_labels

MAX_OBJECT_NAME_BYTES = 1024
_BUCKET_CHARS = re.compile(r"^[a-z0-9][a-z0-9._-]*[a-z0-9]$")
_FORBIDDEN_OBJECT_CHARS = {"\x00": "NUL", "\r": "carriage return", "\n": "line feed"}


def check_bucket_name(name: str) -> str:
    """Returns `name` if Cloud Storage would accept it as a bucket name, else raises 400."""
    rules = (
        "bucket names are 3-63 characters (up to 222 with dots, each dot-separated part at "
        "most 63) of lowercase letters, digits, '-', '_' and '.', starting and ending with a "
        "letter or digit"
    )
    problem = _bucket_name_problem(name)
    if problem:
        raise bad_request(f"Invalid bucket name {name!r}: {problem}; {rules}.")
    return name


def _bucket_name_problem(name: str) -> str | None:
    if not 3 <= len(name) <= (222 if "." in name else 63):
        return f"length {len(name)} is out of range"
    if not _BUCKET_CHARS.match(name):
        return "it holds a character that is not allowed or starts/ends with one"
    if any(len(part) > 63 or not part for part in name.split(".")):
        return "a dot-separated part is empty or longer than 63 characters"
    if name.startswith("goog") or "google" in name:
        return "names starting with 'goog' or containing 'google' are reserved"
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return None
    return "a bucket name cannot be an IP address"


def check_bucket_labels(labels: Any, *, removals: bool) -> None:
    """Bucket labels follow Google's label rules (keys 1-63 characters starting with a
    lowercase letter, values 0-63, at most 64); a PATCH may set a key to null to remove it."""
    if labels is None:
        return
    if removals and isinstance(labels, dict):
        labels = {key: value for key, value in labels.items() if value is not None}
    try:
        validate_labels(labels, "labels")
    except SpecError as exc:
        raise bad_request(f"Invalid argument: {exc}") from None


def check_object_name(name: str, *, allow_folder: bool = True) -> str:
    """Returns `name` if it is a valid object name this store can hold, else raises 400.

    Beyond Cloud Storage's rules (1-1024 UTF-8 bytes, no CR/LF/NUL), a file-backed store cannot
    hold names with empty, `.` or `..` segments or a leading `/`: they would alias or escape.
    A trailing `/` marks a zero-byte folder placeholder (kept in metadata only).
    """
    if not name:
        raise bad_request("Object name is empty; object names are 1-1024 bytes of UTF-8.")
    size = len(name.encode("utf-8", errors="surrogatepass"))
    if size > MAX_OBJECT_NAME_BYTES:
        raise bad_request(
            f"Object name is {size} bytes; object names are at most {MAX_OBJECT_NAME_BYTES} "
            "bytes of UTF-8."
        )
    for char, label in _FORBIDDEN_OBJECT_CHARS.items():
        if char in name:
            raise bad_request(f"Object name {name!r} contains {label}, which is not allowed.")
    if name.startswith("/"):
        raise bad_request(
            f"Object name {name!r} starts with '/': absolute names are not allowed in the "
            "local store."
        )
    body = name[:-1] if name.endswith("/") else name
    if name.endswith("/") and not allow_folder:
        raise bad_request(f"Object name {name!r} ends with '/', which names a folder here.")
    for segment in body.split("/"):
        if segment in ("", ".", ".."):
            shown = segment or "an empty segment ('//')"
            raise bad_request(
                f"Object name {name!r} contains {shown!s}: '.', '..' and empty path segments "
                "are not allowed in the local store, whose objects are files."
            )
    return name


def is_folder_name(name: str) -> bool:
    return name.endswith("/")


def require(condition: bool, code: int, message: str) -> None:
    if not condition:
        raise ApiError(code, message)
