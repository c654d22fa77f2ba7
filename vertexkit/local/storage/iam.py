"""Bucket IAM (`getIamPolicy`, `setIamPolicy`, `testIamPermissions`) as the SDK calls it.

There is one user on this machine, so there is nothing to enforce: a bucket's policy names its
project as owner (Cloud Storage's legacy roles, as a new bucket has them) plus whatever was set,
and every permission asked about is granted.
"""

from __future__ import annotations

import base64
from typing import Any

from vertexkit.local.errors import bad_request
from vertexkit.local.storage.responses import DEFAULT_PROJECT

STORED_KEY = "_iamBindings"  # private: never answered as part of the bucket resource


def default_bindings(project: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "roles/storage.legacyBucketOwner",
            "members": [f"projectEditor:{project}", f"projectOwner:{project}"],
        },
        {"role": "roles/storage.legacyBucketReader", "members": [f"projectViewer:{project}"]},
    ]


def policy_of(bucket: dict[str, Any]) -> dict[str, Any]:
    project = bucket["project"] or DEFAULT_PROJECT
    bindings = bucket["resource"].get(STORED_KEY) or default_bindings(project)
    etag = base64.b64encode(f"{bucket['metageneration']}".encode()).decode()
    return {
        "kind": "storage#policy",
        "resourceId": f"projects/_/buckets/{bucket['name']}",
        "version": 1,
        "etag": etag,
        "bindings": bindings,
    }


def checked_policy(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The bindings of a setIamPolicy body, each a role and a list of members."""
    bindings = body.get("bindings")
    if not isinstance(bindings, list):
        raise bad_request("bindings: required, a list of {role, members}")
    for index, binding in enumerate(bindings):
        field = f"bindings[{index}]"
        if not isinstance(binding, dict) or not isinstance(binding.get("role"), str):
            raise bad_request(f"{field}.role: required, a role name such as roles/storage.admin")
        members = binding.get("members")
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            raise bad_request(f"{field}.members: required, a list of member strings")
    return [{"role": b["role"], "members": list(b["members"])} for b in bindings]


def granted(permissions: list[str]) -> dict[str, Any]:
    answer: dict[str, Any] = {"kind": "storage#testIamPermissionsResponse"}
    if permissions:
        answer["permissions"] = permissions
    return answer
