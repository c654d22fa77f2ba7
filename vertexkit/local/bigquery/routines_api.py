"""routines.insert/get/list/update/delete and the routine IAM calls over REST; what a routine
is and which of its fields are honoured is routines.py's docstring."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from vertexkit.local.bigquery import iam, routines
from vertexkit.local.bigquery.models import dataset_not_found
from vertexkit.local.bigquery.sql import TableName
from vertexkit.local.errors import bad_request, precondition_failed

if TYPE_CHECKING:
    from vertexkit.local.bigquery.routes import BigQueryService

ROUTINES = "/bigquery/v2/projects/{project}/datasets/{dataset}/routines"
ROUTINE = ROUTINES + "/{routine}"
IF_MATCH: ContextVar[str | None] = ContextVar("if_match", default=None)


class Routines:
    def __init__(self, service: BigQueryService) -> None:
        self.service = service
        self.warehouse = service.warehouse

    def routes(self) -> list[Route]:
        route = self.service._route
        return [
            route(ROUTINES, self.list_routines, "GET"),
            route(ROUTINES, self.insert, "POST"),
            route(ROUTINE + ":getIamPolicy", self.get_policy, "POST"),
            route(ROUTINE + ":setIamPolicy", self.set_policy, "POST"),
            route(ROUTINE + ":testIamPermissions", self.test_permissions, "POST"),
            route(ROUTINE, self.get, "GET"),
            _with_if_match(route(ROUTINE, self.update, "PUT")),
            route(ROUTINE, self.delete, "DELETE"),
        ]

    def _read(self, name: TableName) -> dict:
        cur = self.warehouse.cursor()
        try:
            if not self.warehouse.dataset_exists(cur, name.project, name.dataset):
                raise dataset_not_found(name.project, name.dataset)
            stored = routines.load(cur, name)
        finally:
            cur.close()
        if stored is None:
            raise routines.routine_not_found(name)
        return stored

    def insert(self, params: dict, _: dict, body: dict) -> dict:
        reference = body.get("routineReference")
        if not isinstance(reference, dict):
            raise bad_request("routineReference: required, {projectId, datasetId, routineId}")
        routines.check_routine_id(reference.get("routineId"))
        resource = routines.validate(body, _reference(params, reference["routineId"]))
        self.service._check_writable(params["project"])
        with self.warehouse.transaction() as cur:
            stored = routines.insert(self.warehouse, cur, resource)
        return routines.answer(stored)

    def get(self, params: dict, query: dict, _: dict) -> dict:
        mask = routines.read_mask(query.get("readMask"))
        return routines.answer(self._read(_name(params)), mask)

    def list_routines(self, params: dict, query: dict, _: dict) -> dict:
        """ListRoutinesResponse: by default the fields Google lists (etag, reference, type,
        times, language); `readMask` names others; `filter` is `routineType:TYPE`."""
        from vertexkit.local.bigquery.routes import _page_of, _with_token

        mask = routines.read_mask(query.get("readMask")) or set(routines.LIST_FIELDS)
        wanted = _type_filter(query.get("filter"))
        cur = self.warehouse.cursor()
        try:
            if not self.warehouse.dataset_exists(cur, params["project"], params["dataset"]):
                raise dataset_not_found(params["project"], params["dataset"])
            found = routines.load_all(cur, params["project"], params["dataset"])
        finally:
            cur.close()
        found = [r for r in found if wanted is None or r["routineType"] == wanted]
        page, token = _page_of(found, query)
        body: dict[str, Any] = {}
        if page:  # Google leaves an empty list out
            body["routines"] = [routines.answer(r, mask) for r in page]
        return _with_token(body, token)

    def update(self, params: dict, _: dict, body: dict) -> dict:
        """routines.update replaces the whole routine; creationTime is kept. An `If-Match`
        etag (client.update_routine sends the one it read) that is no longer the routine's
        is refused with 412, as on Google."""
        name = _name(params)
        resource = routines.validate(body, _reference(params, name.table))
        self.service._check_writable(name.project)
        with self.warehouse.transaction() as cur:
            existing = routines.load(cur, name)
            if existing is None:
                self._read(name)  # the dataset's 404, else the routine's
            _check_if_match(existing)
            stored = routines.save(self.warehouse, cur, resource, existing, keep_created=True)
        return routines.answer(stored)

    def delete(self, params: dict, _: dict, __: dict) -> Response:
        name = _name(params)
        self.service._check_writable(name.project)
        self._read(name)
        with self.warehouse.transaction() as cur:
            routines.drop(cur, name)
        return Response(status_code=204)

    # -- IAM (iam.py) ---------------------------------------------------------------------------
    def get_policy(self, params: dict, _: dict, body: dict) -> dict:
        iam.check_get_request(body)
        return iam.answer(self._read(_name(params)).get(routines.POLICY_KEY))

    def set_policy(self, params: dict, _: dict, body: dict) -> dict:
        name = _name(params)
        self.service._check_writable(name.project)
        self._read(name)  # the dataset's 404, else the routine's
        with self.warehouse.transaction() as cur:
            stored = routines.load(cur, name) or {}
            policy = iam.updated_policy(stored.get(routines.POLICY_KEY), body)
            routines.put_policy(cur, name, policy)
        return iam.answer(policy)

    def test_permissions(self, params: dict, _: dict, body: dict) -> dict:
        self._read(_name(params))
        return iam.permissions_held(body)


def _with_if_match(route: Route) -> Route:
    """The route with the request's If-Match header made readable to its handler (which sees
    only the path, query and body): the worker thread inherits the context variable."""
    inner = route.endpoint

    async def endpoint(request: Request) -> Response:
        token = IF_MATCH.set(request.headers.get("if-match"))
        try:
            return await inner(request)
        finally:
            IF_MATCH.reset(token)

    return Route(route.path, endpoint, methods=list(route.methods or ()))


def _check_if_match(existing: dict) -> None:
    expected = IF_MATCH.get()
    if expected and expected not in ("*", existing.get("etag")):
        raise precondition_failed("Precondition check failed: the routine's etag has changed")


def _name(params: dict) -> TableName:
    return TableName(params["project"], params["dataset"], params["routine"])


def _reference(params: dict, routine_id: str) -> dict:
    return {"projectId": params["project"], "datasetId": params["dataset"], "routineId": routine_id}


def _type_filter(raw: str | None) -> str | None:
    if not raw:
        return None
    key, _, value = raw.partition(":")
    if key.strip() != "routineType" or value.strip() not in routines.ROUTINE_TYPES:
        raise bad_request(
            f"filter {raw!r}: the supported form is routineType:TYPE, TYPE one of "
            f"{', '.join(routines.ROUTINE_TYPES)}"
        )
    return value.strip()
