"""Access-control lists (bucketAccessControls, defaultObjectAccessControls, objectAccessControls)
in Google's shape: entries are validated as Cloud Storage validates them, stored, and answered.

There is one user on this machine, so an ACL grants or denies nothing here: what is stored is
what the ACL calls (and `projection=full` reads) answer. A bucket's ACL and default object ACL
live in its resource (private keys, so changing them bumps the bucket's metageneration as in
Cloud Storage); an object's ACL is a record keyed by its generation, so a new generation starts
from the bucket's default object ACL, as a new object does in Cloud Storage.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.projects import project_number
from vertexkit.local.storage.responses import DEFAULT_PROJECT, quoted

BUCKET_KEY, DEFAULT_OBJECT_KEY = "_acl", "_defaultObjectAcl"
# Roles from the REST reference of BucketAccessControl.role / ObjectAccessControl.role.
BUCKET_ROLES = ("OWNER", "READER", "WRITER")
OBJECT_ROLES = ("OWNER", "READER")
# Entity forms from the discovery document's BucketAccessControl.entity description.
_ENTITY = re.compile(
    r"(?:user|group)-.+|domain-.+|project-(?:owners|editors|viewers)-[a-z0-9-]+"
    r"|allUsers|allAuthenticatedUsers"
)
# Fields a client may send; the rest of an entry is output only (Cloud Storage ignores them).
_WRITABLE = {"entity", "role"}
_OUTPUT_ONLY = {
    "kind",
    "id",
    "selfLink",
    "bucket",
    "object",
    "generation",
    "etag",
    "email",
    "domain",
    "entityId",
    "projectTeam",
}
UBLA_DOCS = "Read more at https://cloud.google.com/storage/docs/uniform-bucket-level-access"


def checked_entry(body: dict[str, Any], roles: tuple[str, ...], entity: str | None = None) -> dict:
    """{entity, role} of a request body; the path's entity wins and must agree with the body's."""
    unknown = sorted(set(body) - _WRITABLE - _OUTPUT_ONLY)
    if unknown:
        raise bad_request(
            f"{unknown[0]}: not a field of an access-control entry "
            "(entity and role are the writable ones)."
        )
    given = body.get("entity")
    if entity is not None and given not in (None, entity):
        raise bad_request(f"entity: the body names {given!r} but the path names {entity!r}.")
    return {
        "entity": checked_entity(entity or given),
        "role": checked_role(body.get("role"), roles),
    }


def checked_entity(entity: Any) -> str:
    if not isinstance(entity, str) or not _ENTITY.fullmatch(entity):
        raise bad_request(
            f"entity: {entity!r} is not one of user-<id or email>, group-<id or email>, "
            "domain-<domain>, project-<owners|editors|viewers>-<project>, allUsers, "
            "allAuthenticatedUsers."
        )
    team = re.fullmatch(r"project-(owners|editors|viewers)-(.+)", entity)
    if team and not team.group(2).isdigit():  # Cloud Storage names the team by project number
        return f"project-{team.group(1)}-{project_number(team.group(2))}"
    return entity


def checked_role(role: Any, roles: tuple[str, ...]) -> str:
    if role not in roles:
        raise bad_request(f"role: {role!r} is not one of {', '.join(roles)}.")
    return role


def checked_list(entries: Any, roles: tuple[str, ...], field: str) -> list[dict[str, str]]:
    """The `acl` / `defaultObjectAcl` list of a bucket or object resource a client sends."""
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise bad_request(f"{field}: a list of {{entity, role}} entries.")
    return list({e["entity"]: e for e in (checked_entry(e, roles) for e in entries)}.values())


def project_entries(project: str | None, viewers: str | None = "READER") -> list[dict[str, str]]:
    """The project-team entries a new bucket's ACLs hold (the REST reference's projectPrivate)."""
    number = project_number(project or DEFAULT_PROJECT)
    entries = [
        {"entity": f"project-owners-{number}", "role": "OWNER"},
        {"entity": f"project-editors-{number}", "role": "OWNER"},
    ]
    if viewers:
        entries.append({"entity": f"project-viewers-{number}", "role": viewers})
    return entries


def predefined(name: str, project: str | None, for_objects: bool) -> list[dict[str, str]]:
    """The entries of a predefinedAcl / predefinedDefaultObjectAcl, as the REST reference of
    buckets.insert and objects.insert defines them. The object owner of Cloud Storage is the
    project's owners team here (the local cloud has no caller identity to name)."""
    owners = project_entries(project)[:1]
    table = {
        "private": owners,
        "projectPrivate": project_entries(project),
        "publicRead": [*owners, {"entity": "allUsers", "role": "READER"}],
        "authenticatedRead": [*owners, {"entity": "allAuthenticatedUsers", "role": "READER"}],
    }
    if for_objects:
        table["bucketOwnerRead"] = table["bucketOwnerFullControl"] = owners
    else:
        table["publicReadWrite"] = [*owners, {"entity": "allUsers", "role": "WRITER"}]
    if name not in table:
        raise bad_request(f"predefined ACL {name!r} is not one of {', '.join(sorted(table))}.")
    return table[name]


def stored_bucket_acl(bucket: dict[str, Any], key: str) -> list[dict[str, str]]:
    stored = bucket["resource"].get(key)
    return stored if stored is not None else project_entries(bucket["project"])


def ubla_enabled(bucket: dict[str, Any]) -> bool:
    config = bucket["resource"].get("iamConfiguration") or {}
    return bool((config.get("uniformBucketLevelAccess") or {}).get("enabled"))


def entry_resource(
    entry: dict[str, str],
    base_url: str,
    bucket: str,
    target: tuple[str, int] | None = None,
    kind: str = "bucket",
) -> dict:
    """An entry as the API answers it. `target` is (object name, generation) for an object's."""
    entity = entry["entity"]
    path = f"b/{quoted(bucket)}/" + (
        f"o/{quoted(target[0])}/acl"
        if target
        else "acl"
        if kind == "bucket"
        else "defaultObjectAcl"
    )
    resource: dict[str, Any] = {
        "kind": "storage#bucketAccessControl"
        if kind == "bucket"
        else "storage#objectAccessControl",
        "id": "/".join([bucket, *((target[0], str(target[1])) if target else ()), entity]),
        "selfLink": f"{base_url}/storage/v1/{path}/{quoted(entity)}",
        "bucket": bucket,
        "entity": entity,
        "role": entry["role"],
        "etag": base64.b64encode(hashlib.md5(repr(entry).encode()).digest()[:6]).decode(),
    }
    if target:
        resource.update(object=target[0], generation=str(target[1]))
    resource.update(_entity_details(entity))
    return resource


def _entity_details(entity: str) -> dict[str, Any]:
    """email / domain / projectTeam / entityId, as Cloud Storage fills them from the entity."""
    kind, _, rest = entity.partition("-")
    if kind in ("user", "group"):
        return {"email": rest} if "@" in rest else {"entityId": rest}
    if kind == "domain":
        return {"domain": rest}
    team = re.fullmatch(r"project-(owners|editors|viewers)-(\d+)", entity)
    if team:
        return {"projectTeam": {"projectNumber": team.group(2), "team": team.group(1)}}
    return {}
