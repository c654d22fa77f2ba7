"""IAM policies of BigQuery resources (tables, routines): getIamPolicy, setIamPolicy and
testIamPermissions, on a policy stored beside the resource.
https://cloud.google.com/bigquery/docs/reference/rest/v2/Policy

The local cloud has one caller, its sole owner, so a stored policy grants or withholds nothing
here: it is kept and answered as set (with an etag, so a read-modify-write that raced another
write is refused as on Google), and testIamPermissions answers every BigQuery permission asked
for, the owner holding them all. Fields honoured: `policy.bindings` (role, members), `version`,
`etag` (a stale one is refused) and `updateMask` (bindings, etag). Refused with a 400 naming
them: `auditConfigs` (BigQuery resources have no audit configuration of their own) and binding
`condition`s (a condition is an access rule that nothing here evaluates).
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from vertexkit.local.errors import ApiError, bad_request

POLICY_FIELDS = ("bindings", "etag", "version")
MASK_FIELDS = ("bindings", "etag")  # what updateMask may name (its default is both)
POLICY_VERSIONS = (0, 1, 3)  # GetPolicyOptions.requestedPolicyVersion's allowed values


def etag(policy: dict) -> str:
    """An opaque base64 tag that changes whenever the bindings do, as Google's does."""
    digest = hashlib.sha256(json.dumps(policy.get("bindings", []), sort_keys=True).encode())
    return base64.b64encode(digest.digest()[:8]).decode()


def answer(stored: dict | None) -> dict:
    """The Policy answered: Google omits empty bindings and always gives version and etag."""
    policy = {"version": 1, **(stored or {})}
    policy["etag"] = etag(policy)
    return policy


def check_get_request(body: dict) -> None:
    version = (body.get("options") or {}).get("requestedPolicyVersion", 1)
    if version not in POLICY_VERSIONS:
        raise bad_request(
            f"options.requestedPolicyVersion must be one of {list(POLICY_VERSIONS)}, "
            f"got {version!r}"
        )


def updated_policy(stored: dict | None, body: dict) -> dict:
    """setIamPolicy: the policy to store, after validating the request in full."""
    policy = body.get("policy")
    if not isinstance(policy, dict):
        raise bad_request("policy: required, a Policy object")
    unknown = sorted(set(policy) - set(POLICY_FIELDS))
    if unknown:
        raise bad_request(
            f"policy.{unknown[0]}: not accepted by the local BigQuery; allowed: "
            f"{', '.join(POLICY_FIELDS)}"
        )
    bindings = _bindings(policy.get("bindings", []))
    _check_etag(stored, policy)
    version = policy.get("version", 1)
    if version not in POLICY_VERSIONS:
        raise bad_request(f"policy.version must be one of {list(POLICY_VERSIONS)}, got {version!r}")
    if "bindings" not in _mask(body.get("updateMask")):
        bindings = (stored or {}).get("bindings", [])
    return {"version": version or 1, **({"bindings": bindings} if bindings else {})}


def _mask(raw: Any) -> set[str]:
    if raw is None or raw == "":
        return set(MASK_FIELDS)
    if not isinstance(raw, str):
        raise bad_request("updateMask must be a comma-separated string of field names")
    fields = {part.strip() for part in raw.split(",") if part.strip()}
    unknown = sorted(fields - set(MASK_FIELDS))
    if unknown:
        raise bad_request(
            f"updateMask: field {unknown[0]!r} cannot be set; allowed: bindings, etag"
        )
    return fields


def _check_etag(stored: dict | None, policy: dict) -> None:
    given = policy.get("etag")
    if given and given != answer(stored)["etag"]:
        raise ApiError(
            409,
            "There were concurrent policy changes. Please retry the whole read-modify-write "
            "with exponential backoff.",
            reason="aborted",
            status="ABORTED",
        )


def _bindings(raw: Any) -> list[dict]:
    if not isinstance(raw, list):
        raise bad_request("policy.bindings must be a list of {role, members}")
    return [_binding(index, item) for index, item in enumerate(raw)]


def _binding(index: int, item: Any) -> dict:
    where = f"policy.bindings[{index}]"
    if not isinstance(item, dict):
        raise bad_request(f"{where} must be an object with role and members")
    if "condition" in item:
        raise bad_request(f"{where}.condition: IAM conditions are not evaluated by the local cloud")
    unknown = sorted(set(item) - {"role", "members"})
    if unknown:
        raise bad_request(f"{where}.{unknown[0]}: unknown field; allowed: role, members")
    role, members = item.get("role"), item.get("members", [])
    if not isinstance(role, str) or not role.startswith("roles/"):
        raise bad_request(f"{where}.role must name a role, e.g. roles/bigquery.dataViewer")
    if not isinstance(members, list) or not all(_member(m) for m in members):
        raise bad_request(
            f"{where}.members must be principals such as user:EMAIL, serviceAccount:EMAIL, "
            "group:EMAIL, domain:DOMAIN, allUsers, allAuthenticatedUsers"
        )
    return {"role": role, "members": list(members)}


def _member(member: Any) -> bool:
    if member in ("allUsers", "allAuthenticatedUsers"):
        return True
    kinds = ("user:", "serviceAccount:", "group:", "domain:", "principal:", "principalSet:")
    return isinstance(member, str) and member.startswith(kinds) and ":" in member


def permissions_held(body: dict) -> dict:
    """testIamPermissions: the sole local owner holds every BigQuery permission it asks for;
    a wildcard is refused, as Google refuses one."""
    asked = body.get("permissions", [])
    if not isinstance(asked, list) or not all(isinstance(p, str) for p in asked):
        raise bad_request("permissions must be a list of permission names")
    wild = [p for p in asked if "*" in p]
    if wild:
        raise bad_request(f"Permissions ({', '.join(wild)}) are not allowed: no wildcards")
    held = [p for p in asked if p.startswith("bigquery.")]
    return {"permissions": held} if held else {}
