"""``replaykit mcp --http``: the same server over streamable HTTP, on 127.0.0.1 only, behind a token.

The defences are the viewer's (``replaykit/viewer/security.py``, ``replaykit/viewer/server.py``), in
the form MCP clients speak:

- **Loopback only**: the socket is bound to 127.0.0.1 before the server starts; no option binds
  elsewhere.
- **Token**: a random token (``new_token``) printed at start, required as ``Authorization: Bearer
  TOKEN`` on every request and compared in constant time (``token_matches``); without it, 401 and
  nothing else. (MCP clients send headers, not query strings: the viewer's ``?token=`` would leak
  into logs.)
- **Host and Origin**: the SDK's DNS-rebinding protection, given the exact ``127.0.0.1:PORT`` and
  ``localhost:PORT`` names, refuses any other Host or browser Origin.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from replaykit.core.trace.store import RunStore
from replaykit.mcp.tools import LiveEndpoint
from replaykit.viewer.security import bearer_token, new_token, token_matches
from replaykit.viewer.server import HOST, bind_loopback

PATH = "/mcp"


class BearerGate:
    """Pure ASGI middleware: every HTTP request carries the token, or gets 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] == "http" and not token_matches(bearer_token(scope), self.token):
            body = json.dumps({"error": "unauthorized: send the token replaykit mcp --http printed, as "
                                        "'Authorization: Bearer TOKEN'"}).encode() + b"\n"
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="replaykit"'), (b"cache-control", b"no-store")]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


@dataclass
class HttpEndpoint:
    url: str
    token: str

    def announce(self) -> None:
        """What a client needs, on stdout (the URL, the header) and how to add it to Claude Code."""
        print(self.url, flush=True)
        print(f"Authorization: Bearer {self.token}", flush=True)
        print(f"replaykit mcp: serving on {self.url} (Ctrl-C to stop); add it with: claude mcp add --transport "
              f"http replaykit {self.url} --header \"Authorization: Bearer {self.token}\"", file=sys.stderr,
              flush=True)


def serve_http(store: RunStore, *, port: int = 0, live: LiveEndpoint | None = None,
               token: str | None = None) -> None:
    """Serve until interrupted (the SDK's session manager runs in the app's lifespan)."""
    from replaykit.mcp.server import build_server, require_sdk

    require_sdk()
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    sock = bind_loopback(port)
    bound = sock.getsockname()[1]
    endpoint = HttpEndpoint(f"http://{HOST}:{bound}{PATH}", token or new_token())
    hosts = [f"{HOST}:{bound}", f"localhost:{bound}"]
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                         allowed_origins=[f"http://{h}" for h in hosts])
    app = build_server(store, live=live).streamable_http_app(streamable_http_path=PATH, transport_security=security,
                                                             host=HOST)
    config = uvicorn.Config(BearerGate(app, endpoint.token), log_level="warning", access_log=False, lifespan="on",
                            server_header=False, date_header=False)
    endpoint.announce()
    uvicorn.Server(config).run(sockets=[sock])
