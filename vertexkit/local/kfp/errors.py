"""KFP's error shape, as grpc-gateway writes it: `{error, code, message, details}`, with `code` a
google.rpc.Code and the HTTP status grpc-gateway maps it to."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION = 3, 5, 6, 9
UNIMPLEMENTED, INTERNAL = 12, 13
# grpc-gateway's runtime.HTTPStatusFromCode
HTTP_STATUS = {
    INVALID_ARGUMENT: 400,
    NOT_FOUND: 404,
    ALREADY_EXISTS: 409,
    FAILED_PRECONDITION: 400,
    UNIMPLEMENTED: 501,
    INTERNAL: 500,
}


class KfpError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def body(self) -> dict[str, Any]:
        return {"error": self.message, "code": self.code, "message": self.message, "details": []}

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=HTTP_STATUS.get(self.code, 500))


def invalid(message: str) -> KfpError:
    return KfpError(INVALID_ARGUMENT, message)


def not_found(message: str) -> KfpError:
    return KfpError(NOT_FOUND, message)


def already_exists(message: str) -> KfpError:
    return KfpError(ALREADY_EXISTS, message)


def failed_precondition(message: str) -> KfpError:
    return KfpError(FAILED_PRECONDITION, message)


def unimplemented(message: str) -> KfpError:
    return KfpError(UNIMPLEMENTED, message)
