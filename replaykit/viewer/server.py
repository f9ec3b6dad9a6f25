"""Run the viewer: bind 127.0.0.1 (never another address), serve with uvicorn, in this thread or another.

The socket is bound here, before uvicorn starts, so ``--port 0`` gets a free port whose number the
printed URL (and the Host/Origin checks) can name, and so the address cannot be anything but loopback.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from replaykit.core.errors import BadInput, MissingExtra
from replaykit.core.trace.store import RunStore
from replaykit.viewer.security import new_token

HOST = "127.0.0.1"


def _require_extra() -> None:
    for module in ("starlette", "uvicorn", "jinja2"):
        try:
            __import__(module)
        except ImportError as exc:
            raise MissingExtra("view", module) from exc


def bind_loopback(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (never another address); BadInput for a bad or busy port.
    Bound before the server starts, so ``port`` 0 gets a free port whose number the caller can print."""
    if not 0 <= port <= 65535:
        raise BadInput(f"--port {port}: not a TCP port")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise BadInput(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from exc
    sock.listen(64)
    return sock


#: Modules the pages import on first use; imported in the background as the server starts, so the first
#: step page does not pay for them (the codecs, pricing: a quarter of a second together).
WARM_MODULES = ("replaykit.core.analysis.step_detail", "replaykit.core.trace.codecs",
                "replaykit.core.analysis.run_index", "replaykit.exporters.html_report", "genai_prices")


def _warm_imports() -> None:
    import importlib

    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional extra (genai-prices): its pages say so
            pass


class ViewerServer:
    """``start()`` in a background thread (tests) or ``serve_forever()`` (the CLI)."""

    def __init__(self, store: RunStore, *, port: int = 0, token: str | None = None) -> None:
        _require_extra()
        from replaykit.viewer.app import Viewer, build_app

        self.sock = bind_loopback(port)
        self.viewer = Viewer(store, token or new_token())
        self.viewer.port = self.sock.getsockname()[1]
        self.app = build_app(self.viewer)
        threading.Thread(target=_warm_imports, daemon=True, name="replaykit-view-warm").start()
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.viewer.port}"

    @property
    def url(self) -> str:
        """The URL to open: it carries the access token."""
        return self.origin + self.viewer.url("/")

    def _uvicorn(self) -> Any:
        import uvicorn

        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="off",
                                server_header=False, date_header=False)
        self._server = uvicorn.Server(config)
        return self._server

    def serve_forever(self) -> None:
        self._uvicorn().run(sockets=[self.sock])

    def start(self) -> ViewerServer:
        server = self._uvicorn()
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [self.sock]}, daemon=True,
                                        name="replaykit-view")
        self._thread.start()
        import time

        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.sock.close()

    def __enter__(self) -> ViewerServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
