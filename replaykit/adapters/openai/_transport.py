"""The httpx seam: a transport that records or serves model calls (OpenAI Chat Completions, OpenAI
Responses, Anthropic Messages), and the patch that puts it under every httpx / httpx2 client while a
recording or cassette is active.

``RecordingTransport(session, inner)`` works as ``httpx.Client(transport=...)`` or
``httpx.AsyncClient(transport=...)`` (either package: httpx, or httpx2 that openai 3.x and anthropic 2.x
use). Patching (``install`` / ``uninstall``, reference-counted) wraps the transport each client picks per
request (``Client._transport_for_url``), so clients created before the block, cached clients (PydanticAI's
shared client) and clients created inside libraries are all covered, and nothing stays wrapped after it.

Only model calls (``_wire.llm_api``) are touched; every other request goes to the inner transport
unchanged. A served or refused request never reaches the inner transport: no byte leaves the process.
Recording never breaks the call: a failure to record is noted in the run (an ``opaque`` event) and the
response goes to the client as it came.

Streams are kept chunk for chunk (``replaykit.core.trace.codecs.frames``): the tee notes when each byte chunk
arrived, the frames are stored with the response, and a served stream sends the same frames in the same
order, one per chunk, at once (``fast``) or with the recorded gaps (``recorded``: ``Session.stream_timing``).
"""

from __future__ import annotations

import importlib
import json
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from replaykit.adapters.openai._session import Exchange, Origin, Session
from replaykit.adapters.openai._wire import llm_api, refusal_body
from replaykit.core.trace import codecs
from replaykit.core.trace.codecs import frames as stream_frames

_lock = threading.RLock()
_active: list[Session] = []  # a stack: the innermost active block wins
_installed = 0
_originals: dict[tuple[type, str], Any] = {}
_PACKAGES = ("httpx", "httpx2")
_tees: dict[str, tuple[type, type]] = {}  # package name -> its tee stream classes
_players: dict[str, tuple[type, type]] = {}  # package name -> its served-stream classes
#: (bytes received so far, monotonic time) after each chunk of a recorded body
Marks = list[tuple[int, float]]


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


def _served(mod: Any, request: Any, ex: Exchange, timing: str, *, asynchronous: bool) -> Any:
    assert ex.response is not None
    headers = {"x-replaykit": f"served step {ex.step}"}
    if ex.streamed:
        stream = stream_frames.for_serving(ex.api, ex.response, ex.body)
        headers["content-type"] = "text/event-stream"
        players = _player_classes(mod)
        player = players[1] if asynchronous else players[0]
        return mod.Response(200, headers=headers, request=request,
                            stream=player(stream, timing))
    body = json.dumps(codecs.encode_response(ex.api, ex.response).body, ensure_ascii=False).encode()
    headers["content-type"] = "application/json"
    return mod.Response(200, headers=headers, content=body, request=request)


def _refused(mod: Any, request: Any, ex: Exchange) -> Any:
    # A 400 (never retried by the SDKs) whose message is the explanation: the error the agent raises
    # names the missing request; the pytest plugin also fails the test with it.
    error = refusal_body(ex.api, ex.miss or "replaykit: model request not in cassette")
    return mod.Response(400, headers={"content-type": "application/json", "x-replaykit": "cassette miss"},
                        content=json.dumps(error, ensure_ascii=False).encode(), request=request)


def _record_body(session: Session, ex: Exchange, status: int, headers: Any, body: bytes) -> None:
    try:
        if status >= 400:
            text = body.decode("utf-8", "replace")
            session.fail(ex, message=f"HTTP {status}: {text}", error_type=f"HTTP {status}", status_code=status)
            return
        if "event-stream" in headers.get("content-type", ""):
            _record_stream(session, ex, body, True, None)
        else:
            session.finish(ex, codecs.decode_response(ex.api, json.loads(body)))
    except Exception as exc:  # recording must never break the agent's call
        _note(session, ex, exc)


def _record_stream(session: Session, ex: Exchange, body: bytes, complete: bool, marks: Marks | None,
                   t0: float = 0.0) -> None:
    try:
        stream = stream_frames.parse_sse(body)
        stream.api = ex.api
        stream.offsets = _offsets(stream.ends, marks, t0) if marks is not None else None
        complete = complete or stream_frames.finished(stream)
        failure = next((p for p in stream.payloads if p.get("type") == "error"), None)
        if failure is not None:  # the provider broke off with an error event (Anthropic, Responses)
            detail = json.dumps(failure.get("error", failure), ensure_ascii=False)
            session.fail(ex, message=f"stream error event: {detail}", error_type="StreamError")
            return
        try:
            response = codecs.assemble_stream(ex.api, stream.payloads)
        except Exception:
            if complete:
                raise
            session.fail(ex, message="the stream ended before the response was complete",
                         error_type="StreamIncomplete")
            return
        session.finish(ex, stream_frames.with_frames(response, stream), incomplete=not complete)
    except Exception as exc:
        _note(session, ex, exc)


def _offsets(ends: list[int], marks: Marks, t0: float) -> list[float] | None:
    """When each frame arrived (seconds after ``t0``): the time of the chunk that completed it
    (``ends``: the byte offset past each frame; ``marks``: bytes received so far after each chunk)."""
    if not ends or not marks:
        return None
    out, m = [], 0
    for end in ends:
        while m < len(marks) - 1 and marks[m][0] < end:
            m += 1
        out.append(round(max(0.0, marks[m][1] - t0), 4))
    return out


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
        def __init__(self, inner: Any, done: Callable[[bytes, bool, Marks], None]) -> None:
            self._inner, self._done, self._buf, self._finished = inner, done, bytearray(), False
            self._marks: Marks = []

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._inner:
                self._buf += chunk
                self._marks.append((len(self._buf), time.monotonic()))
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
                self._done(bytes(self._buf), complete, self._marks)

    class AsyncTee(mod.AsyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, inner: Any, done: Callable[[bytes, bool, Marks], None]) -> None:
            self._inner, self._done, self._buf, self._finished = inner, done, bytearray(), False
            self._marks: Marks = []

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._inner:
                self._buf += chunk
                self._marks.append((len(self._buf), time.monotonic()))
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
                self._done(bytes(self._buf), complete, self._marks)

    _tees[mod.__name__] = (SyncTee, AsyncTee)
    return SyncTee, AsyncTee


def _player_classes(mod: Any) -> tuple[type, type]:
    """Byte streams that send a served stream's frames one per chunk, after each frame's delay."""
    cached = _players.get(mod.__name__)
    if cached is not None:
        return cached

    class SyncPlayer(mod.SyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, stream: stream_frames.Frames, timing: str) -> None:
            self._stream, self._timing = stream, timing

        def __iter__(self) -> Iterator[bytes]:
            return stream_frames.play(self._stream, self._timing)

    class AsyncPlayer(mod.AsyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, stream: stream_frames.Frames, timing: str) -> None:
            self._stream, self._timing = stream, timing

        async def __aiter__(self) -> AsyncIterator[bytes]:
            import anyio  # httpx's own dependency: sleeps under asyncio and trio alike

            # the async twin of ``frames.play`` (same chunks, same waits): a sync sleep would block the loop
            chunks = stream_frames.render(self._stream)
            for chunk, wait in zip(chunks, stream_frames.delays(self._stream, self._timing), strict=True):
                if wait > 0:
                    await anyio.sleep(wait)
                yield chunk

    _players[mod.__name__] = (SyncPlayer, AsyncPlayer)
    return SyncPlayer, AsyncPlayer


# ----------------------------------------------------------------------------------- transports

def _origin(request: Any) -> Origin:
    """The endpoint a request went to (scheme, host, port and the path before the API route; never the
    userinfo or the query) and its User-Agent."""
    url = request.url
    path = str(url.path)
    for route in ("/chat/completions", "/responses", "/messages"):
        if path.endswith(route):
            path = path[: -len(route)]
            break
    port = f":{url.port}" if url.port else ""
    return Origin(f"{url.scheme}://{url.host}{port}{path}", request.headers.get("user-agent"))


class _Router:
    def __init__(self, inner: Any, session: Session | None = None) -> None:
        self.inner = inner
        self.session = session  # None: the active block's session (patched clients)

    def _route(self, request: Any) -> tuple[Session, Exchange] | None:
        session = self.session or active_session()
        if session is None:
            return None
        api = llm_api(request.method, request.url.path, request.headers)
        if api is None:
            return None
        try:
            body = request.content
        except Exception:  # a streamed upload: not a JSON model call
            return None
        return session, session.open(api, body, _origin(request))

    def _wrap(self, mod: Any, request: Any, response: Any, session: Session, ex: Exchange,
              tee: type) -> Any:
        t0 = time.monotonic()  # the headers are in: frame times count from here

        def done(raw: bytes, complete: bool, marks: Marks) -> None:
            try:
                body = _decoded(mod, response.headers, raw)
            except Exception as exc:
                _note(session, ex, exc)
                return
            if response.status_code >= 400 or "event-stream" not in response.headers.get("content-type", ""):
                _record_body(session, ex, response.status_code, response.headers, body)
            else:  # frame times only where the bytes on the wire are the body (no content-encoding)
                timed = "content-encoding" not in response.headers
                _record_stream(session, ex, body, complete, marks if timed else None, t0)

        return mod.Response(response.status_code, headers=response.headers, stream=tee(response.stream, done),
                            request=request, extensions=response.extensions)

    @staticmethod
    def _failed(mod: Any, request: Any, response: Any, raw: bytes, session: Session, ex: Exchange) -> Any:
        """An HTTP error, recorded with its body at once: clients that retry (a 429, a 5xx) close such a
        response without reading it, and the error event must still say what the provider said."""
        try:
            body = _decoded(mod, response.headers, raw)
        except Exception:
            body = raw
        _record_body(session, ex, response.status_code, response.headers, body)
        return mod.Response(response.status_code, headers=response.headers, content=raw, request=request,
                            extensions=response.extensions)


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
            return _served(mod, request, ex, session.stream_timing, asynchronous=False)
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
        if response.status_code >= 400:
            try:
                raw = b"".join(response.iter_raw())
            finally:
                response.close()
            return self._failed(mod, request, response, raw, session, ex)
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
            return _served(mod, request, ex, session.stream_timing, asynchronous=True)
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
        if response.status_code >= 400:
            try:
                raw = b"".join([chunk async for chunk in response.aiter_raw()])
            finally:
                await response.aclose()
            return self._failed(mod, request, response, raw, session, ex)
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
