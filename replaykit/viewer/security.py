"""The viewer's defences, each one on its own enough to refuse a request.

- **Token**: a random token (``secrets.token_urlsafe(32)``) is printed in the URL and must be in the
  query string of every request (``?token=``), compared in constant time; anything else gets 403. Other
  local users and other web pages cannot guess it.
- **Host**: the ``Host`` header must be the address the server is bound to (127.0.0.1 or localhost with
  its port): a DNS-rebinding page cannot talk to the viewer under its own name.
- **POSTs** need both a per-page CSRF token (issued when a form is rendered, bound to the form's action
  path, single use) and an ``Origin`` header equal to the viewer's own origin. Either alone refuses.
- **Headers**: a strict Content-Security-Policy (no script at all, styles only with the page's nonce,
  nothing loaded from anywhere else, forms only to the viewer itself, no framing), a ``same-origin``
  referrer policy so the token never leaves in a Referer (``no-referrer`` would also make Chromium send
  ``Origin: null`` on the viewer's own POSTs), ``nosniff``, ``no-store``.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

#: How many issued-but-unused CSRF tokens are remembered (oldest forgotten first).
CSRF_CAPACITY = 1024


def new_token() -> str:
    """The access token of a local server (``view``, ``mcp --http``): 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def token_matches(given: str | None, token: str) -> bool:
    """Whether a presented token is the server's, compared in constant time (no timing oracle)."""
    return hmac.compare_digest((given or "").encode(), token.encode())


def request_headers(scope: dict[str, Any]) -> dict[str, str]:
    """An ASGI request's headers, names lower-cased."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def bearer_token(scope: dict[str, Any]) -> str:
    """The token of an ``Authorization: Bearer TOKEN`` header ("" without one)."""
    scheme, _, value = request_headers(scope).get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


def content_security_policy(nonce: str) -> str:
    return (
        "default-src 'none'; "
        f"style-src 'nonce-{nonce}'; "
        "img-src 'self' data:; "
        "script-src 'none'; connect-src 'none'; font-src 'none'; frame-src 'none'; object-src 'none'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    )


SECURITY_HEADERS = {
    "referrer-policy": "same-origin",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}


class CsrfTokens:
    """Per-page CSRF tokens: issued for one form action path, accepted once, for that path only."""

    def __init__(self, capacity: int = CSRF_CAPACITY) -> None:
        self._issued: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self._capacity = capacity

    def issue(self, action_path: str) -> str:
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._issued[token] = action_path
            while len(self._issued) > self._capacity:
                self._issued.popitem(last=False)
        return token

    def redeem(self, token: str | None, action_path: str) -> bool:
        if not token:
            return False
        with self._lock:
            path = self._issued.pop(token, None)
        return path is not None and hmac.compare_digest(path, action_path)


class Guard:
    """Pure ASGI middleware: token and Host on every request, security headers on every response,
    and a fresh CSP nonce in ``scope["replaykit.nonce"]`` for the page's ``<style>``."""

    def __init__(self, app: Any, *, token: str, allowed_hosts: Callable[[], set[str]]) -> None:
        self.app = app
        self.token = token
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        headers = request_headers(scope)
        if headers.get("host", "") not in self.allowed_hosts():
            await _refuse(send, nonce, "403 Forbidden: unexpected Host header")
            return
        if not token_matches(_query_token(scope), self.token):
            await _refuse(send, nonce, "403 Forbidden: open the viewer with the URL replaykit view printed "
                                       "(it carries the access token)")
            return
        scope["replaykit.nonce"] = nonce

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                extra = [(k.encode(), v.encode()) for k, v in _headers(nonce).items()]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _headers(nonce: str) -> dict[str, str]:
    return {**SECURITY_HEADERS, "content-security-policy": content_security_policy(nonce)}


def _query_token(scope: dict[str, Any]) -> str:
    from urllib.parse import parse_qs

    query = scope.get("query_string", b"").decode("latin-1")
    values = parse_qs(query).get("token") or [""]
    return values[0]


async def _refuse(send: Callable[[Any], Awaitable[None]], nonce: str, text: str) -> None:
    body = text.encode() + b"\n"
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in _headers(nonce).items()]
    await send({"type": "http.response.start", "status": 403, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def origin_ok(origin: str | None, allowed_origins: set[str]) -> bool:
    """A POST's Origin must be the viewer's own (a missing Origin is refused: browsers send it)."""
    return bool(origin) and origin in allowed_origins
