"""The console's own rules on top of the local cloud's request guard (`vertexkit.local.guard`).

The guard already refuses a foreign `Host`, `Origin` or `Sec-Fetch-Site`. The console adds:

* a CSRF token on every action (signed double submit): a random session cookie, and a hidden
  form field holding HMAC(per-process secret, that cookie). A page elsewhere can neither read
  the field nor forge it, and a cookie planted by another program on 127.0.0.1 (cookies ignore
  ports) is useless without the secret;
* an action must come from a browser page of the console's own origin (`Origin` present);
* headers that keep the console's pages out of frames and run only its own script and styles;
* artifact contents (untrusted HTML from a pipeline) are served under `Content-Security-Policy:
  sandbox`, shown only in `<iframe sandbox>`: no script runs, and they get an opaque origin.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from starlette.requests import Request

from vertexkit.local.errors import ApiError
from vertexkit.local.guard import own_origins

CSRF_FIELD = "csrf_token"
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; "
        "object-src 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # not no-referrer: under it Chrome sends `Origin: null` on the console's own form posts
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
ARTIFACT_HEADERS = {
    "Content-Security-Policy": (
        "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        "frame-ancestors 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


class Csrf:
    """Issues and checks the console's CSRF tokens; the secret lives as long as the process."""

    cookie = "vertexkit_console"

    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)

    def session(self, request: Request) -> tuple[str, bool]:
        """The browser's session id, and whether it is new (the page must set the cookie)."""
        current = request.cookies.get(self.cookie, "")
        if len(current) == 43:  # token_urlsafe(32)
            return current, False
        return secrets.token_urlsafe(32), True

    def token(self, session: str) -> str:
        return hmac.new(self._secret, session.encode(), hashlib.sha256).hexdigest()

    def check(self, request: Request, submitted: str) -> None:
        session = request.cookies.get(self.cookie, "")
        if not session or not submitted or not hmac.compare_digest(submitted, self.token(session)):
            raise ApiError(
                403,
                "The console's CSRF token is missing or wrong: reload the page.",
                reason="forbidden",
            )


def require_own_origin(request: Request) -> None:
    """Console actions come from the console's pages: the browser names their origin."""
    origin = request.headers.get("origin")
    if origin not in own_origins(request.scope):
        raise ApiError(
            403,
            f"Origin {origin!r}: console actions come from the console only.",
            reason="forbidden",
        )
