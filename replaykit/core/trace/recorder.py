"""Recorder: the one way adapters and engines turn what happened into IR events.

It numbers events, stamps time offsets, declares each distinct tool set once, and delta-encodes every
LLM request against the previous one (the common prefix is kept by reference), writing a tool message
that repeats an earlier tool call's result as a reference to that event (``ToolRefs``), so a long run's
trace grows linearly and stores each tool result once. Events go to a ``RunWriter`` as they happen (crash-safe) and/or stay in memory.

Thread-safe: adapters call it from worker threads (parallel tools, subagents).
"""

from __future__ import annotations

import os
import random
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

from pydantic_core import to_json

from replaykit.core.trace.canonical import tools_hash
from replaykit.core.trace.deltas import tool_message
from replaykit.core.trace.ir import (
    EVENT_ADAPTER,
    SAME_CORR_KEYS,
    SAME_REQUEST_KEYS,
    Correlation,
    DesyncEvent,
    ErrorEvent,
    Event,
    LLMCallEvent,
    LLMRequest,
    LLMResponse,
    Message,
    MessageDelta,
    MessageRef,
    MetaEvent,
    OpaqueEvent,
    Provenance,
    ResultBlock,
    RunEndEvent,
    RunHeader,
    SubagentEvent,
    SyntheticEvent,
    ToolCallEvent,
    ToolsEvent,
    ToolSpec,
    TurnEndEvent,
    TurnStartEvent,
    UnderlyingCall,
)
from replaykit.core.trace.run import tool_message_of
from replaykit.core.trace.store import RunWriter

# Event ids only need to differ between runs that share a prefix (branches keep their parent's ids), not
# to be secret: a PRNG seeded from the OS (reseeded in forked children) instead of a getrandom syscall
# per event, which showed up on the recorder's hot path.
_rng = random.Random(secrets.randbits(64))  # noqa: S311  # not a secret (see above)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _rng.seed(secrets.randbits(64)))


_REQUEST_KINDS = frozenset(("llm_call", "error"))
_STICKY = frozenset(SAME_CORR_KEYS)
_REQUEST_SAME = SAME_REQUEST_KEYS  # what a ``same`` request may leave out


def _new_event_id(seq: int) -> str:
    return f"e{seq}-{_rng.getrandbits(24):06x}"


class ToolRefs:
    """The tool call events a run's next request may refer to instead of repeating their results.

    Recorders note each tool call event (``note``: a ``ToolCallEvent``; ``note_json``: its JSON dict, for
    hot paths that build events as dicts) with the message(s) a reference to it stands for
    (``replaykit.core.trace.deltas.tool_message``, and its ``strip`` variant when the result has surrounding
    whitespace), in the form the recorder's requests hold. ``swap`` then replaces, in the next request's
    appended messages, every message equal to a noted one by its reference, and forgets every noted call:
    memory stays bounded by the tool calls between two requests, and a reference is only ever written
    where the message is exactly what the reference rebuilds. Cheap on a hot path: a few dict equality
    tests per request (a different message fails on its first differing key).
    """

    __slots__ = ("_recent",)

    def __init__(self) -> None:
        self._recent: dict[str, list[tuple[Any, Any]]] = {}  # call id -> [(tool message, reference item)]

    def note(self, event: ToolCallEvent) -> None:
        pairs: list[tuple[Any, Any]] = [(tool_message_of(event), MessageRef(ref=event.id))]
        result = event.result or ""
        if result.strip() != result:
            pairs.append((tool_message_of(event, True), MessageRef(ref=event.id, strip=True)))
        self._recent[event.call_id] = pairs

    def note_json(self, event_id: str, body: dict[str, Any]) -> None:
        """``body``: a tool call event as its JSON dict (``call_id``, ``name``, ``result``, ``status``)."""
        pairs: list[tuple[Any, Any]] = [(tool_message(body), {"ref": event_id})]
        result = body.get("result") or ""
        if result.strip() != result:
            pairs.append((tool_message(body, strip=True), {"ref": event_id, "strip": True}))
        self._recent[body["call_id"]] = pairs

    def clear(self) -> None:
        self._recent.clear()

    def swap(self, append: list[Any]) -> list[Any]:
        """``append`` with each noted tool message replaced by its reference (a new list when any is);
        every noted call is forgotten."""
        recent = self._recent
        if not recent:
            return append
        out = append
        for i, item in enumerate(append):
            found = next(((call_id, ref) for call_id, pairs in recent.items()
                          for message, ref in pairs if item == message), None)
            if found is not None:
                if out is append:
                    out = list(append)
                out[i] = found[1]
                del recent[found[0]]
                if not recent:
                    break
        recent.clear()
        return out


class Recorder:
    """Builds a run's events. ``writer=None`` keeps them in memory only (``keep_events`` forced on)."""

    def __init__(
        self,
        header: RunHeader,
        writer: RunWriter | None = None,
        *,
        keep_events: bool = True,
        clock: Callable[[], float] = time.monotonic,
        start_seq: int = 0,
        t0: float | None = None,
    ) -> None:
        self.header = header
        self.writer = writer
        self.keep_events = keep_events or writer is None
        self.events: list[Event] = []
        self._clock = clock
        self._t0 = clock() if t0 is None else t0
        self._seq = start_seq
        self._lock = threading.RLock()
        self._declared_tools: dict[str, str] = {}  # tools hash -> hash (set semantics, insertion order)
        self._last_tools: tuple[Sequence[ToolSpec], str] | None = None
        self._last_request_id: str | None = None
        self._last_messages: list[Message] = []
        # Tool calls since the last request: what the next request refers to (see ToolRefs). Requests
        # built here go through ``request``; hot-path adapters that build their own call ``swap`` too.
        self.tool_refs = ToolRefs()
        # The ids of the last written event's correlation (``emit_dict`` writes the next one relative to it).
        self._last_corr: dict[str, Any] | None = None
        self._last_request: dict[str, Any] | None = None  # and of the last written request

    # ----------------------------------------------------------------------------------- basics

    @property
    def run_id(self) -> str:
        return self.header.run_id

    def now(self) -> float:
        """Seconds since the run started (the ``t`` of an event happening now)."""
        return round(self._clock() - self._t0, 6)

    def _take_seq(self) -> int:
        seq = self._seq
        self._seq += 1
        return seq

    def emit(self, event: Event) -> Event:
        """Write (and keep) an already-built event; its ``seq`` must come from ``next_ids``."""
        with self._lock:
            if self.writer is not None:
                self.writer.append(event)
            if self.keep_events:
                self.events.append(event)
            if event.corr is not None:
                self._last_corr = event.corr.model_dump(exclude_none=True)
            request = getattr(event, "request", None) if event.kind in _REQUEST_KINDS else None
            if request is not None:
                self._last_request = request.model_dump(mode="json", include=set(_REQUEST_SAME), exclude_none=True)
            kind = event.kind
            if kind == "tool_call":
                self.tool_refs.note(cast(ToolCallEvent, event))
            elif kind in _REQUEST_KINDS and cast(Any, event).request is not None:
                self.tool_refs.clear()
        return event

    def emit_dict(self, body: dict[str, Any]) -> str:
        """Hot path for adapters: write an event given as a plain dict, without building a pydantic model.

        ``body`` is the event without ``seq`` and ``id`` (added here), already in its JSON shape: exactly
        what ``model_dump(mode="json", exclude_none=True)`` gives, key order included (see
        ``replaykit.adapters.hermes.fastpath``). It is written as one line by pydantic-core's serializer
        (one ``os.write``, like ``emit``), so the bytes are those ``emit`` would write, except that the
        correlation ids and request fields equal to the previous event's and request's are left out
        (``Correlation.same``, ``LLMRequest.same``); the store validates the line, and fills them in, when
        the run is read. Values the serializer cannot write on its own go through validation instead, so such events are written, or rejected, exactly as the slow path would.
        Kept events (``keep_events``) are validated. Requests written this way bypass this class's delta
        encoder (``_last_request_id``): callers encode their own deltas. Returns the event id.
        """
        if not body:
            raise ValueError("emit_dict needs the event's fields")
        with self._lock:  # written relative to the previous event and request: in order
            written = self._compact_request(self._compact_corr(body))
            try:
                # pydantic-core's serializer (what model_dump_json uses; ~4x faster than json.dumps here):
                # same float, NaN and non-ASCII output as the slow path; refuses lone surrogates like it.
                text: bytes | None = to_json(written, inf_nan_mode="null")
            except Exception:  # a value pydantic-core cannot write by itself: let validation decide
                text = None
            seq = self._seq
            event_id = _new_event_id(seq)
            event = None
            if text is None or self.keep_events:
                event = EVENT_ADAPTER.validate_python({"seq": seq, "id": event_id, **body})
            if text is None:
                self._take_seq()
                self.emit(event)  # type: ignore[arg-type]
                return event_id
            if self.writer is not None:
                # Bytes straight from the serializer: no decode and re-encode of the line.
                self.writer.append_raw(b"".join((b'{"seq":%d,"id":"%s",' % (seq, event_id.encode()),
                                                 memoryview(text)[1:])))
            self._take_seq()
            if event is not None:
                self.events.append(event)
            if body.get("request") is not None:  # a request was written: forget the tool calls before it
                self.tool_refs.clear()
        return event_id

    def _compact_corr(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` with its correlation marked ``same`` and without the ids equal to the previous
        event's, when that says the same (schema 2: ``Correlation``); remembers its ids (under the lock)."""
        corr = body.get("corr")
        if not corr:
            return body
        previous, self._last_corr = self._last_corr, corr
        if previous is None:
            return body
        compact: dict[str, Any] = {}
        for key, value in corr.items():
            if key in _STICKY and value == previous.get(key):
                continue
            compact[key] = value
        for key in _STICKY:  # empty means "the previous event's": only where that is what it is
            if not corr.get(key) and previous.get(key):
                return body
        if len(compact) == len(corr):
            return body
        compact["same"] = True
        return {**body, "corr": compact}

    def _compact_request(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` with its request marked ``same`` and without the model, tools, params and provider
        details equal to the previous request's, when that says the same (schema 2: ``LLMRequest.same``);
        remembers them (under the lock)."""
        request = body.get("request")
        if request is None:
            return body
        previous, self._last_request = self._last_request, request
        if previous is None:
            return body
        compact = dict(request)
        for key in _REQUEST_SAME:
            value = request.get(key)
            if not value:
                if previous.get(key):  # left out means "the previous request's": not what it is
                    return body
                continue
            if value == previous.get(key):
                # params stays, empty: the line is then exactly what pydantic writes for what it reads
                if key == "params":
                    compact[key] = {}
                else:
                    del compact[key]
        if compact == request:
            return body
        compact["same"] = True
        return {**body, "request": compact}

    def next_ids(self) -> tuple[int, str]:
        with self._lock:
            seq = self._take_seq()
        return seq, _new_event_id(seq)

    def _base(self, t: float | None, duration: float | None, provenance: Provenance,
              corr: Correlation | None, provider_details: dict[str, Any] | None) -> dict[str, Any]:
        seq = self._take_seq()
        return {
            "seq": seq,
            "id": _new_event_id(seq),
            "t": self.now() if t is None else t,
            "duration": duration,
            "provenance": provenance,
            "corr": corr,
            "provider_details": provider_details,
        }

    def sync(self) -> None:
        if self.writer is not None:
            self.writer.sync()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    # ------------------------------------------------------------------------------------ tools

    def declare_tools(self, tools: Sequence[ToolSpec] | None) -> str | None:
        """Emit a ``tools`` event the first time a tool set is seen; return its hash."""
        if not tools:
            return None
        last = self._last_tools
        if last is not None and last[0] is tools:
            return last[1]  # the same tool list object again (every call of a run, usually): no re-hash
        digest = tools_hash(tools)
        with self._lock:
            if digest not in self._declared_tools:
                self._declared_tools[digest] = digest
                base = self._base(None, None, Provenance.RECORDED, None, None)
                self.emit(ToolsEvent(**base, hash=digest, tools=list(tools)))
            self._last_tools = (tools, digest)  # only once declared: another thread may use it at once
        return digest

    # ------------------------------------------------------------------------------------ delta

    def _delta(self, messages: Sequence[Message]) -> MessageDelta:
        previous = self._last_messages
        n = len(previous)
        if n and len(messages) >= n and list(messages[:n]) == previous:
            keep = n  # the conversation grew: one C-level comparison (identity short-cuts each message)
        else:
            keep = 0
            limit = min(n, len(messages))
            while keep < limit and (previous[keep] is messages[keep] or previous[keep] == messages[keep]):
                keep += 1
        if self._last_request_id is None or keep == 0:
            return MessageDelta(base=None, keep=0, append=self.tool_refs.swap(list(messages)))
        return MessageDelta(base=self._last_request_id, keep=keep, append=self.tool_refs.swap(list(messages[keep:])))

    def request(
        self,
        messages: Sequence[Message],
        *,
        api: str = "openai-chat",
        model: str | None = None,
        tools: Sequence[ToolSpec] | None = None,
        params: dict[str, Any] | None = None,
        fingerprint: str | None = None,
        provider_details: dict[str, Any] | None = None,
    ) -> LLMRequest:
        """Build the delta-encoded request for the next LLM call (call under ``self._lock``)."""
        return LLMRequest(
            api=api,  # type: ignore[arg-type]
            model=model,
            context=self._delta(messages),
            tools_ref=self.declare_tools(tools),
            params=dict(params or {}),
            fingerprint=fingerprint,
            provider_details=provider_details,
        )

    # ---------------------------------------------------------------------------------- events

    def llm_call(
        self,
        messages: Sequence[Message],
        response: LLMResponse,
        *,
        api: str = "openai-chat",
        model: str | None = None,
        tools: Sequence[ToolSpec] | None = None,
        params: dict[str, Any] | None = None,
        t: float | None = None,
        duration: float | None = None,
        attempt: int = 1,
        provenance: Provenance = Provenance.RECORDED,
        corr: Correlation | None = None,
        fingerprint: str | None = None,
        request_details: dict[str, Any] | None = None,
        provider_details: dict[str, Any] | None = None,
    ) -> LLMCallEvent:
        with self._lock:
            request = self.request(
                messages, api=api, model=model, tools=tools, params=params,
                fingerprint=fingerprint, provider_details=request_details,
            )
            base = self._base(t, duration, provenance, corr, provider_details)
            event = LLMCallEvent(**base, request=request, response=response, attempt=attempt)
            self.emit(event)
            self._last_request_id = event.id
            self._last_messages = list(messages)
        return event

    def llm_error(
        self,
        messages: Sequence[Message] | None,
        *,
        message: str,
        error_type: str | None = None,
        status_code: int | None = None,
        retryable: bool | None = None,
        attempt: int | None = None,
        api: str = "openai-chat",
        model: str | None = None,
        tools: Sequence[ToolSpec] | None = None,
        params: dict[str, Any] | None = None,
        t: float | None = None,
        duration: float | None = None,
        provenance: Provenance = Provenance.RECORDED,
        corr: Correlation | None = None,
        provider_details: dict[str, Any] | None = None,
    ) -> ErrorEvent:
        with self._lock:
            request = None
            if messages is not None:
                request = self.request(messages, api=api, model=model, tools=tools, params=params)
            base = self._base(t, duration, provenance, corr, provider_details)
            event = ErrorEvent(
                **base, where="llm", error_type=error_type, message=message, status_code=status_code,
                retryable=retryable, attempt=attempt, request=request,
            )
            self.emit(event)
            if messages is not None:
                self._last_request_id = event.id
                self._last_messages = list(messages)
        return event

    def tool_call(
        self,
        call_id: str,
        name: str,
        arguments: Any = None,
        *,
        raw_arguments: str | None = None,
        result: str | None = None,
        result_blocks: list[ResultBlock] | None = None,
        status: str = "ok",
        error: str | None = None,
        llm_call_id: str | None = None,
        t: float | None = None,
        duration: float | None = None,
        provenance: Provenance = Provenance.RECORDED,
        corr: Correlation | None = None,
        provider_details: dict[str, Any] | None = None,
        underlying: UnderlyingCall | None = None,
    ) -> ToolCallEvent:
        with self._lock:
            base = self._base(t, duration, provenance, corr, provider_details)
            event = ToolCallEvent(
                **base, call_id=call_id, name=name, arguments=arguments, raw_arguments=raw_arguments,
                result=result, result_blocks=result_blocks, status=status,  # type: ignore[arg-type]
                error=error, llm_call_id=llm_call_id, underlying=underlying,
            )
            self.emit(event)
        return event

    def _simple(self, cls: type[Any], *, t: float | None = None, duration: float | None = None,
                provenance: Provenance = Provenance.RECORDED, corr: Correlation | None = None,
                provider_details: dict[str, Any] | None = None, **fields: Any) -> Any:
        with self._lock:
            base = self._base(t, duration, provenance, corr, provider_details)
            event = cls(**base, **fields)
            self.emit(event)
        return event

    def turn_start(self, message: Message, *, turn: int = 0, **kw: Any) -> TurnStartEvent:
        event: TurnStartEvent = self._simple(TurnStartEvent, message=message, turn=turn, **kw)
        return event

    def turn_end(self, final_answer: str | None, *, status: str = "completed", reason: str | None = None,
                 sync: bool = True, **kw: Any) -> TurnEndEvent:
        event: TurnEndEvent = self._simple(TurnEndEvent, final_answer=final_answer, status=status,
                                           reason=reason, **kw)
        if sync:  # turn end is the durability point: fsync
            self.sync()
        return event

    def meta(self, data: dict[str, Any], **kw: Any) -> MetaEvent:
        event: MetaEvent = self._simple(MetaEvent, data=data, **kw)
        return event

    def opaque(self, source: str, name: str, data: Any = None, **kw: Any) -> OpaqueEvent:
        event: OpaqueEvent = self._simple(OpaqueEvent, source=source, name=name, data=data, **kw)
        return event

    def error(self, message: str, *, where: str = "run", **fields: Any) -> ErrorEvent:
        event: ErrorEvent = self._simple(ErrorEvent, message=message, where=where, **fields)
        return event

    def subagent(self, phase: str, **fields: Any) -> SubagentEvent:
        event: SubagentEvent = self._simple(SubagentEvent, phase=phase, **fields)
        return event

    def desync(self, step: int, *, reason: str, expected: str | None = None, actual: str | None = None,
               **kw: Any) -> DesyncEvent:
        kw.setdefault("provenance", Provenance.DESYNC)
        event: DesyncEvent = self._simple(DesyncEvent, step=step, reason=reason, expected=expected,
                                          actual=actual, **kw)
        return event

    def synthetic(self, step: int, *, reason: str, **kw: Any) -> SyntheticEvent:
        kw.setdefault("provenance", Provenance.SYNTHETIC)
        event: SyntheticEvent = self._simple(SyntheticEvent, step=step, reason=reason, **kw)
        return event

    def run_end(self, final_answer: str | None = None, *, status: str = "completed",
                reason: str | None = None, **kw: Any) -> RunEndEvent:
        event: RunEndEvent = self._simple(RunEndEvent, final_answer=final_answer, status=status,
                                          reason=reason, **kw)
        self.sync()
        return event

    def copy_events(self, events: Sequence[Event]) -> None:
        """Append events from another run verbatim (a branch's served prefix), keeping ids and
        continuing numbering after them. Delta bases stay valid because ids are kept."""
        with self._lock:
            for event in events:
                self.emit(event)
                self._seq = max(self._seq, event.seq + 1)
                if isinstance(event, ToolsEvent):
                    self._declared_tools[event.hash] = event.hash
            # The next request is delta-encoded against the last copied request.
            for event in reversed(events):
                if isinstance(event, LLMCallEvent) or (isinstance(event, ErrorEvent) and event.request):
                    self._last_request_id = event.id
                    break

    def resume(self, events: Sequence[Event], last_request: tuple[str, Sequence[Message]] | None) -> None:
        """Continue an existing run (appending to its file): number after ``events``, keep time going
        from the last event's offset, know its tool sets, and delta-encode the next request against
        ``last_request`` (the id and messages of its last request). Nothing is re-emitted."""
        with self._lock:
            for event in events:
                self._seq = max(self._seq, event.seq + 1)
                if isinstance(event, ToolsEvent):
                    self._declared_tools[event.hash] = event.hash
            if events:
                self._t0 = self._clock() - max(e.t for e in events)
            if last_request is not None:
                self._last_request_id, messages = last_request
                self._last_messages = list(messages)

    def set_last_request(self, event_id: str, messages: Sequence[Message]) -> None:
        """Tell the delta encoder which request later ones extend (after ``copy_events``)."""
        with self._lock:
            self._last_request_id = event_id
            self._last_messages = list(messages)
