"""IAM policies of Vertex resources: `:getIamPolicy`, `:setIamPolicy`, `:testIamPermissions`.

The local cloud has one principal, the user at its keyboard, who owns every resource: a policy
is kept and answered exactly as set (Google's `google.iam.v1.Policy`, with its etag for
read-modify-write), but it grants and denies nothing here. `testIamPermissions` therefore answers
every well-formed permission asked for. What a policy would refuse on Google is not refused
locally; the policy itself is validated as Google validates it, so a policy that Google rejects
is a 400 here too.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

from google.iam.v1 import iam_policy_pb2
from google.protobuf import json_format

from vertexkit.local.errors import ApiError, bad_request
from vertexkit.local.vertex.router import VertexRequest, VertexRouter
from vertexkit.local.vertex.store import Resource, ResourceStore

COLLECTION = "iamPolicies"
# The etag of a policy never set, as Google answers it (recorded traffic of
# GoogleCloudPlatform/k8s-config-connector: `{"etag": "ACAB"}` for a resource with no policy).
EMPTY_POLICY_ETAG = "ACAB"
POLICY_VERSIONS = (0, 1, 3)  # iam.v1 Policy.version: "Valid values are 0, 1, and 3"
MEMBER = re.compile(
    r"^(allUsers|allAuthenticatedUsers|(user|serviceAccount|group|domain|deleted:user|"
    r"deleted:serviceAccount|deleted:group|projectOwner|projectEditor|projectViewer):.+|"
    r"principal(Set)?://.+)$"
)
CONCURRENT_CHANGE = ("There were concurrent policy changes. Please retry the whole "
                     "read-modify-write with exponential backoff.")  # fmt: skip
PERMISSION = re.compile(r"^[a-z][a-zA-Z0-9]*(\.[a-zA-Z][a-zA-Z0-9]*){2}$")


class IamPolicies:
    def __init__(self, store: ResourceStore) -> None:
        self._store = store

    def register(self, router: VertexRouter, resource_template: str, kind: str) -> None:
        """The three IAM verbs on one collection's resources (`.../models/{model}`)."""

        def target(request: VertexRequest) -> str:
            name = request.path.rsplit(":", 1)[0]
            self._store.get(name, kind)  # a 404 naming the resource, as Google answers
            return name

        router.route("POST", f"{resource_template}:getIamPolicy")(
            lambda request: self.get(target(request), request.query, request.body)
        )
        router.route("POST", f"{resource_template}:setIamPolicy")(
            lambda request: self.set(target(request), request.body)
        )
        router.route("POST", f"{resource_template}:testIamPermissions")(
            lambda request: test_permissions(target(request), asked_permissions(request))
        )

    def get(self, resource: str, query: dict[str, str], body: dict[str, Any]) -> Resource:
        options = body.get("options") or {}
        requested = query.get(
            "options.requestedPolicyVersion", options.get("requestedPolicyVersion")
        )
        if requested not in (None, "") and int(requested) not in POLICY_VERSIONS:
            raise bad_request(f"options.requestedPolicyVersion: {requested} is not one of "
                              f"{', '.join(map(str, POLICY_VERSIONS))}.")  # fmt: skip
        stored = self._store.find(policy_name(resource))
        return stored["policy"] if stored else {"etag": EMPTY_POLICY_ETAG}

    def set(self, resource: str, body: dict[str, Any]) -> Resource:
        policy = parsed_policy(body)
        current = self.get(resource, {}, {})
        if policy.get("etag") and policy["etag"] != current["etag"]:
            # iam.v1: "If no etag is provided ... the existing policy is overwritten"; a stale
            # one is refused with ABORTED (HTTP 409).
            raise ApiError(409, CONCURRENT_CHANGE, status="ABORTED")
        policy.pop("etag", None)
        policy["etag"] = etag_of(policy)
        record = {"name": policy_name(resource), "policy": policy}
        if self._store.find(record["name"]):
            self._store.put(record["name"], record)
        else:
            self._store.insert(COLLECTION, record["name"], record)
        return policy


def policy_name(resource: str) -> str:
    return f"{resource}/iamPolicy"


def parsed_policy(body: dict[str, Any]) -> dict[str, Any]:
    """The request's policy, checked as Google checks it (field names, members, roles)."""
    try:
        request = json_format.ParseDict(body, iam_policy_pb2.SetIamPolicyRequest())
    except json_format.ParseError as exc:
        raise bad_request(f"Invalid JSON payload received. {exc}") from exc
    if request.HasField("update_mask"):
        bad = [p for p in request.update_mask.paths if p not in ("bindings", "etag")]
        if bad:
            raise bad_request(f"updateMask: {bad[0]} is not a field of the policy to update; "
                              "use bindings or etag.")  # fmt: skip
    policy = json_format.MessageToDict(request.policy)
    check_policy(policy)
    return policy


def check_policy(policy: dict[str, Any]) -> None:
    version = int(policy.get("version") or 0)
    if version not in POLICY_VERSIONS:
        raise bad_request(f"policy.version: {version} is not one of 0, 1, 3.")
    for i, binding in enumerate(policy.get("bindings") or []):
        field = f"policy.bindings[{i}]"
        if not str(binding.get("role", "")).startswith(("roles/", "projects/", "organizations/")):
            raise bad_request(f"{field}.role: a role such as roles/aiplatform.user is required.")
        if not binding.get("members"):
            raise bad_request(f"{field}.members: a binding needs at least one member.")
        for member in binding["members"]:
            if not MEMBER.match(member):
                raise bad_request(f"{field}.members: invalid member {member!r} (user:, "
                                  "serviceAccount:, group:, domain:, allUsers ...).")  # fmt: skip
        if binding.get("condition") and version != 3:
            raise bad_request(f"{field}.condition: a conditional binding needs policy.version 3.")


def etag_of(policy: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(policy, sort_keys=True).encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def asked_permissions(request: VertexRequest) -> list[str]:
    """aiplatform.v1 sends them as the repeated query parameter `permissions`; a body too."""
    return request.query_list("permissions") or request.body.get("permissions") or []


def test_permissions(resource: str, permissions: list[str]) -> Resource:
    """The permissions asked for that the caller holds: all of them, for the sole local owner."""
    del resource  # checked to exist by the route
    for permission in permissions:
        if not isinstance(permission, str) or not PERMISSION.match(permission):
            raise bad_request(f"permissions: {permission!r} is not a permission such as "
                              "aiplatform.models.get.")  # fmt: skip
    return {"permissions": permissions} if permissions else {}
