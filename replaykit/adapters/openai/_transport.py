"""The httpx seam: a transport that records or serves OpenAI model calls, and the patch that puts it
under every httpx / httpx2 client while a recording or cassette is active.

``RecordingTransport(session, inner)`` works as ``httpx.Client(transport=...)`` or
``httpx.AsyncClient(transport=...)`` (either package: httpx, or httpx2 that openai 3.x uses). Patching
(``install`` / ``uninstall``, reference-counted) wraps the transport each client picks per request
(``Client._transport_for_url``), so clients created before the block, cached clients (PydanticAI's
shared client) and clients created inside libraries are all covered, and nothing stays wrapped after it.

Only model calls (``POST .../chat/completions`` and ``.../responses``) are touched; every other request
goes to the inner transport unchanged. A served or refused request never reaches the inner transport:
no byte leaves the process. Recording never breaks the call: a failure to record is noted in the run
(an ``opaque`` event) and the response goes to the client as it came.
"""

from __future__ import annotations

import importlib
import json
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from replaykit.adapters.openai._session import Exchange, Session
from replaykit.adapters.openai._wire import llm_api, parse_sse, render_sse, stream_finished
from replaykit.core.trace import codecs

_lock = threading.RLock()
_active: list[Session] = []  # a stack: the innermost active block wins
_installed = 0
_originals: dict[tuple[type, str], Any] = {}
_PACKAGES = ("httpx", "httpx2")
_tees: dict[str, tuple[type, type]] = {}  # package name -> its tee stream classes


def active_session() -> Session | None:
    with _lock:
        return _active[-1] if _active else None


def active_sessions() -> list[Session]:
    with _lock:
        return list(_active)


def activate(session: Session) -> None:
    with _lock:
        _active.append(session)


def deactivate(session: Session) -> None:
    with _lock:
        if session in _active:
            _active.remove(session)


# ------------------------------------------------------------------------------------- helpers

def _module_of(obj: Any) -> Any:
    """The httpx-like package an object comes from (httpx or httpx2)."""
    return sys.modules[type(obj).__module__.split(".")[0]]


def _decoded(mod: Any, headers: Any, raw: bytes) -> bytes:
    """``raw`` (as on the wire) with its content-encoding undone, via the package's own decoders."""
    if "content-encoding" not in headers:
        return raw
    return bytes(mod.Response(200, headers=headers, content=raw).content)


def _served(mod: Any, request: Any, ex: Exchange) -> Any:
    assert ex.response is not None
    headers = {"x-replaykit": f"served step {ex.step}"}
    if ex.streamed:
        body = render_sse(ex.api, ex.response, ex.body)
        headers["content-type"] = "text/event-stream"
    else:
        body = json.dumps(codecs.encode_response(ex.api, ex.response).body, ensure_ascii=False).encode()
        headers["content-type"] = "application/json"
    return mod.Response(200, headers=headers, content=body, request=request)


def _refused(mod: Any, request: Any, ex: Exchange) -> Any:
    # A 400 (never retried by the openai client) whose message is the explanation: the error the agent
    # raises names the missing request; the pytest plugin also fails the test with it.
    error = {"error": {"message": ex.miss, "type": "replaykit_cassette_miss", "param": None,
                       "code": "cassette_miss"}}
    return mod.Response(400, headers={"content-type": "application/json", "x-replaykit": "cassette miss"},
                        content=json.dumps(error, ensure_ascii=False).encode(), request=request)


def _record_body(session: Session, ex: Exchange, status: int, headers: Any, body: bytes) -> None:
    try:
        if status >= 400:
            text = body.decode("utf-8", "replace")
            session.fail(ex, message=f"HTTP {status}: {text}", error_type=f"HTTP {status}", status_code=status)
            return
        if "event-stream" in headers.get("content-type", ""):
            session.finish(ex, codecs.assemble_stream(ex.api, parse_sse(body)))
        else:
            session.finish(ex, codecs.decode_response(ex.api, json.loads(body)))
    except Exception as exc:  # recording must never break the agent's call
        _note(session, ex, exc)


def _record_stream(session: Session, ex: Exchange, body: bytes, complete: bool) -> None:
    try:
        events = parse_sse(body)
        complete = complete or stream_finished(ex.api, body, events)
        try:
            response = codecs.assemble_stream(ex.api, events)
        except Exception:
            if complete:
                raise
            session.fail(ex, message="the stream ended before the response was complete",
                         error_type="StreamIncomplete")
            return
        session.finish(ex, response, incomplete=not complete)
    except Exception as exc:
        _note(session, ex, exc)


def _note(session: Session, ex: Exchange, exc: Exception) -> None:
    if session.recorder is None:
        return
    try:
        session.recorder.opaque("replaykit.adapters.openai", "unrecorded_response",
                                {"api": ex.api, "error": f"{type(exc).__name__}: {exc}"[:500]})
    except Exception:  # noqa: S110  # the run is already closed (a stream read after its block ended)
        pass


def _stream_classes(mod: Any) -> tuple[type, type]:
    """Tee byte streams built on ``mod``'s stream bases (the client checks them with isinstance)."""
    cached = _tees.get(mod.__name__)
    if cached is not None:
        return cached

    class SyncTee(mod.SyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, inner: Any, done: Callable[[bytes, bool], None]) -> None:
            self._inner, self._done, self._buf, self._finished = inner, done, bytearray(), False

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._inner:
                self._buf += chunk
                yield chunk
            self._finish(True)

        def close(self) -> None:
            try:
                self._inner.close()
            finally:
                self._finish(False)

        def _finish(self, complete: bool) -> None:
            if not self._finished:
                self._finished = True
                self._done(bytes(self._buf), complete)

    class AsyncTee(mod.AsyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, inner: Any, done: Callable[[bytes, bool], None]) -> None:
            self._inner, self._done, self._buf, self._finished = inner, done, bytearray(), False

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._inner:
                self._buf += chunk
                yield chunk
            self._finish(True)

        async def aclose(self) -> None:
            try:
                await self._inner.aclose()
            finally:
                self._finish(False)

        def _finish(self, complete: bool) -> None:
            if not self._finished:
                self._finished = True
                self._done(bytes(self._buf), complete)

    _tees[mod.__name__] = (SyncTee, AsyncTee)
    return SyncTee, AsyncTee


# ----------------------------------------------------------------------------------- transports

class _Router:
    def __init__(self, inner: Any, session: Session | None = None) -> None:
        self.inner = inner
        self.session = session  # None: the active block's session (patched clients)

    def _route(self, request: Any) -> tuple[Session, Exchange] | None:
        session = self.session or active_session()
        if session is None:
            return None
        api = llm_api(request.method, request.url.path)
        if api is None:
            return None
        try:
            body = request.content
        except Exception:  # a streamed upload: not a JSON model call
            return None
        return session, session.open(api, body)

    def _wrap(self, mod: Any, request: Any, response: Any, session: Session, ex: Exchange,
              tee: type) -> Any:
        def done(raw: bytes, complete: bool) -> None:
            try:
                body = _decoded(mod, response.headers, raw)
            except Exception as exc:
                _note(session, ex, exc)
                return
            if response.status_code >= 400 or "event-stream" not in response.headers.get("content-type", ""):
                _record_body(session, ex, response.status_code, response.headers, body)
            else:
                _record_stream(session, ex, body, complete)

        return mod.Response(response.status_code, headers=response.headers, stream=tee(response.stream, done),
                            request=request, extensions=response.extensions)


class RecordingTransport(_Router):
    """A sync httpx transport that records (or serves) model calls through ``session``. ``inner`` is the
    real transport (default: ``HTTPTransport()`` of ``package``, "httpx" or "httpx2" for openai 3.x)."""

    def __init__(self, session: Session | None = None, inner: Any = None, *, package: str = "httpx") -> None:
        if inner is None:
            inner = importlib.import_module(package).HTTPTransport()
        super().__init__(inner, session)

    def handle_request(self, request: Any) -> Any:
        routed = self._route(request)
        if routed is None:
            return self.inner.handle_request(request)
        session, ex = routed
        mod = _module_of(request)
        if ex.action == "serve":
            return _served(mod, request, ex)
        if ex.action == "miss":
            return _refused(mod, request, ex)
        session.note_provider_call()
        try:
            response = self.inner.handle_request(request)
        except Exception as exc:
            session.fail(ex, message=str(exc) or type(exc).__name__, error_type=type(exc).__name__)
            raise
        if ex.action == "pass":
            return response
        return self._wrap(mod, request, response, session, ex, _stream_classes(mod)[0])

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> RecordingTransport:
        self.inner.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.inner.__exit__(*exc)


class AsyncRecordingTransport(_Router):
    """The async twin of ``RecordingTransport`` (``httpx.AsyncClient(transport=...)``)."""

    def __init__(self, session: Session | None = None, inner: Any = None, *, package: str = "httpx") -> None:
        if inner is None:
            inner = importlib.import_module(package).AsyncHTTPTransport()
        super().__init__(inner, session)

    async def handle_async_request(self, request: Any) -> Any:
        routed = self._route(request)
        if routed is None:
            return await self.inner.handle_async_request(request)
        session, ex = routed
        mod = _module_of(request)
        if ex.action == "serve":
            return _served(mod, request, ex)
        if ex.action == "miss":
            return _refused(mod, request, ex)
        session.note_provider_call()
        try:
            response = await self.inner.handle_async_request(request)
        except Exception as exc:
            session.fail(ex, message=str(exc) or type(exc).__name__, error_type=type(exc).__name__)
            raise
        if ex.action == "pass":
            return response
        return self._wrap(mod, request, response, session, ex, _stream_classes(mod)[1])

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> AsyncRecordingTransport:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.inner.__aexit__(*exc)


# ---------------------------------------------------------------------------------------- patch

def _patched(original: Any, router: type[_Router]) -> Any:
    def _transport_for_url(self: Any, url: Any) -> Any:
        transport = original(self, url)
        if isinstance(transport, _Router):
            return transport  # wired by hand: it already routes
        return router(None, transport)

    _transport_for_url.__replaykit__ = True  # type: ignore[attr-defined]
    return _transport_for_url


def install() -> None:
    """Route every httpx / httpx2 client's model calls through the active session (nestable)."""
    global _installed
    with _lock:
        _installed += 1
        if _installed > 1:
            return
        for name in _PACKAGES:
            try:
                mod = importlib.import_module(name)
            except ImportError:
                continue
            for cls, router in ((mod.Client, RecordingTransport), (mod.AsyncClient, AsyncRecordingTransport)):
                original = cls.__dict__["_transport_for_url"]
                _originals[(cls, "_transport_for_url")] = original
                cls._transport_for_url = _patched(original, router)


def uninstall() -> None:
    global _installed
    with _lock:
        if _installed == 0:
            return
        _installed -= 1
        if _installed:
            return
        for (cls, attr), original in _originals.items():
            setattr(cls, attr, original)
        _originals.clear()
