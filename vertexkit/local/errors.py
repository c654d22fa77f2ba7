"""Errors in the JSON shape Google APIs answer with, so the client libraries raise the same
exceptions (BadRequest, NotFound, Conflict, PreconditionFailed, ...) they raise against Google."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from vertexkit.specs.errors import NotServedLocally, SpecError

STATUS_BY_CODE = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ALREADY_EXISTS",
    412: "FAILED_PRECONDITION",
    413: "INVALID_ARGUMENT",
    416: "OUT_OF_RANGE",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
}
REASON_BY_CODE = {
    400: "invalid",
    404: "notFound",
    409: "duplicate",
    412: "conditionNotMet",
    416: "requestedRangeNotSatisfiable",
    500: "backendError",
    501: "notImplemented",
}


class ApiError(Exception):
    """An error answered to the client as `{"error": {...}}` with an HTTP status."""

    def __init__(
        self, code: int, message: str, *, reason: str | None = None, status: str | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or REASON_BY_CODE.get(code, "error")
        self.status = status or STATUS_BY_CODE.get(code, "UNKNOWN")

    def body(self, *, with_status: bool = True, with_errors: bool = True) -> dict[str, Any]:
        """Google's error JSON, in each service's shape: BigQuery's has code, message, status
        and `errors[]`; Cloud Storage's JSON API has no `status` (its routes ask
        `with_status=False`); Vertex AI's, a google.rpc.Status, has no `errors[]` (recorded
        Vertex traffic, k8s-config-connector: `{"error": {"code": 404, "message": ...,
        "status": "NOT_FOUND"}}`)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if with_status:
            error["status"] = self.status
        if with_errors:
            error["errors"] = [{"message": self.message, "domain": "global", "reason": self.reason}]
        return {"error": error}


def bad_request(message: str, reason: str = "invalid") -> ApiError:
    return ApiError(400, message, reason=reason)


def not_found(message: str) -> ApiError:
    return ApiError(404, message)


NOT_SERVED_SUFFIX = "is not served by the local cloud."


def not_served(method: str, path: str) -> ApiError:
    """A service or method the local cloud does not serve: 501, never 404 (a 404 reads as
    "resource not found" and would make a client's not-found path pass falsely)."""
    return ApiError(501, f"{method} /{path.lstrip('/')} {NOT_SERVED_SUFFIX}")


def refused(reason: str) -> ApiError:
    """A method the local cloud reads but cannot carry out here, with its reason ("TPU pods
    are not run locally"): Google's UNIMPLEMENTED, never the generic `not_served`."""
    return ApiError(501, reason, reason="notImplemented", status="UNIMPLEMENTED")


def conflict(message: str) -> ApiError:
    return ApiError(409, message)


def failed_precondition(message: str) -> ApiError:
    """Vertex's FAILED_PRECONDITION (an action the resource's state does not allow) travels as
    HTTP 400, unlike Cloud Storage's 412 `conditionNotMet` (precondition_failed)."""
    return ApiError(400, message, reason="failedPrecondition", status="FAILED_PRECONDITION")


def precondition_failed(message: str) -> ApiError:
    return ApiError(412, message)


VERTEX_PATHS = ("/v1/", "/ui/")  # Vertex AI's REST paths (and Resource Manager's /v1/projects)


async def api_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return _answer(request, exc)


def _answer(request: Request, error: ApiError) -> JSONResponse:
    vertex = request.url.path.startswith(VERTEX_PATHS)
    return JSONResponse(error.body(with_errors=not vertex), status_code=error.code)


async def spec_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """The one place a rule of `vertexkit.specs` broken by a request becomes Google's answer:
    a 400 INVALID_ARGUMENT whose message names the field and the allowed values (a 501 with
    the reason for what is not carried out here)."""
    assert isinstance(exc, SpecError)
    error = refused(str(exc)) if isinstance(exc, NotServedLocally) else bad_request(str(exc))
    return _answer(request, error)
