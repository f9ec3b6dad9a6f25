"""Each LLM request of a session as a delta against the previous one, decided in O(1) on Hermes's thread.

Hermes sends every API call a fresh list of fresh shallow copies of the whole conversation. Comparing
that list with the previous request's on every call is O(conversation) per call, O(N^2) per session
(measured: about 110 us per Hermes event at 1000 steps). Instead:

- On Hermes's thread, ``RequestChain.prepare`` checks in O(1) what Hermes's own rewrites change: the
  message count (compression shortens the list), the first message (the system prompt; compression and
  a changed prompt replace it) and the last ``WINDOW`` messages of the previous request (moving cache
  markers, a repaired or replaced tail). If all agree, the new request keeps the previous one and only
  its new tail is decoded; if any differs, the old full comparison runs right there (rare: exact).
- The middle of the list, which Hermes never rewrites without also changing one of the above, is
  verified off Hermes's thread by ``Verifier`` (a daemon thread). Should it ever differ, the verifier
  appends a ``request_fix`` event restating that request's delta exactly (``replaykit.core.trace.run`` applies
  it when the run is loaded), so the trace still rebuilds every request byte-equal.

Only Chat Completions (one wire message = one IR message) takes the O(1) path; the Responses and
Anthropic modes, whose elements do not map one-to-one, keep the full comparison.
"""

from __future__ import annotations

import os
import queue
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from replaykit.adapters.hermes import fastpath
from replaykit.adapters.hermes.guarded import log_once
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.ir import Message
from replaykit.core.trace.run import REQUEST_FIX_NAME, REQUEST_FIX_SOURCE

CHAT = "openai-chat"
WINDOW = 4  # trailing messages of the previous request checked on Hermes's thread
CHUNK = 128  # messages the verifier compares per GIL hold


def elements(api: str, body: Mapping[str, Any]) -> list[Any]:
    """The conversation of a request as a list of comparable raw elements."""
    if api == CHAT:
        msgs = body.get("messages")
        # Hermes's own (fresh) list, never mutated: compared, its tail sliced, and kept until the next
        # request of the session replaces it.
        return msgs if isinstance(msgs, list) else []
    out: list[Any] = []
    head = "instructions" if api == "openai-responses" else "system"
    if head in body:
        out.append((head, body[head]))
    items = body.get("input" if api == "openai-responses" else "messages")
    if isinstance(items, str):
        out.append(("input_str", items))
    elif isinstance(items, list):
        out.extend(items)
    return out


def _convert(api: str, element: Any) -> list[Message]:
    """One raw element -> IR messages through the shared provider codecs (so every engine re-encodes a
    recorded request the same way)."""
    if api == CHAT:
        from replaykit.core.trace.codecs import openai_chat

        return [openai_chat.decode_message(element)]
    from replaykit.core.trace import codecs

    if isinstance(element, tuple):
        kind, value = element
        body: dict[str, Any] = {"input": value} if kind == "input_str" else {kind: value}
        if api == "openai-responses":
            body.setdefault("input", [])
        else:
            body.setdefault("messages", [])
        return list(codecs.decode_request(api, body).messages)
    if api == "openai-responses":
        from replaykit.core.trace.codecs import openai_responses

        return list(openai_responses.decode_items([element]))
    from replaykit.core.trace.codecs import anthropic

    return [anthropic.decode_message(element, "message")]


def decode(api: str, element: Any) -> list[dict[str, Any]]:
    """One raw element -> its IR messages as JSON dicts (fast path for Chat, else the codecs)."""
    if api == CHAT:
        fast = fastpath.chat_message(element)
        if fast is not None:
            return [fast]
    return [jsonsafe.model_data(m, exclude_none=True) for m in _convert(api, element)]


@dataclass(slots=True)
class Prepared:
    """A request compared with the last one written: keep its first ``keep`` raw elements, decode the rest."""

    api: str
    raw: list[Any]
    keep: int
    tail: list[list[dict[str, Any]]]
    written: int  # RequestChain.written when prepared (another request written since: prepare again)
    verify_upto: int  # elements [1, verify_upto) were not compared here: the verifier compares them


@dataclass(slots=True)
class RequestChain:
    """The last request written in a session: what the next one is a delta against. Holds a reference
    to Hermes's list of that request (no copies) and one int per element."""

    api: str | None = None
    prev: list[Any] = field(default_factory=list)
    cum: list[int] = field(default_factory=lambda: [0])  # IR messages the first i elements decode to
    last_id: str | None = None
    written: int = 0

    def prepare(self, api: str, raw: list[Any]) -> Prepared:
        prev = self.prev
        n = len(prev) if self.api == api and self.last_id is not None else 0
        verify_upto = 0
        if n and len(raw) >= n:
            lo = max(1, n - WINDOW)
            if api == CHAT and raw[0] == prev[0] and raw[lo:n] == prev[lo:n]:
                keep, verify_upto = n, lo  # the common case: the conversation grew (middle: verifier)
            elif api != CHAT and raw[:n] == prev:
                keep = n
            else:
                keep = _common_prefix(raw, prev, n)
        else:
            keep = _common_prefix(raw, prev, n)
        return Prepared(api, raw, keep, [decode(api, e) for e in raw[keep:]], self.written, verify_upto)

    def delta(self, pre: Prepared) -> tuple[str | None, int, list[dict[str, Any]]]:
        """(base event id, IR messages kept, appended IR messages) of a prepared request."""
        if pre.written != self.written:  # another request of the session was written meanwhile
            fresh = self.prepare(pre.api, pre.raw)
            pre.keep, pre.tail, pre.written, pre.verify_upto = fresh.keep, fresh.tail, fresh.written, fresh.verify_upto
        keep_ir = self.cum[pre.keep] if pre.keep else 0
        return (self.last_id if keep_ir else None), keep_ir, [m for group in pre.tail for m in group]

    def commit(self, pre: Prepared, event_id: str) -> list[Any]:
        """``pre`` was written as ``event_id``; return the previous request's list (for the verifier)."""
        cum = self.cum
        del cum[pre.keep + 1:]
        total = cum[-1]
        for group in pre.tail:
            total += len(group)
            cum.append(total)
        previous = self.prev
        self.api, self.prev, self.last_id = pre.api, pre.raw, event_id
        self.written += 1
        return previous


def _common_prefix(raw: list[Any], prev: list[Any], n: int) -> int:
    keep, limit = 0, min(len(raw), n)
    while keep < limit and raw[keep] == prev[keep]:
        keep += 1
    return keep


@dataclass(slots=True)
class Check:
    """Compare ``raw[1:upto]`` with ``prev[1:upto]``; on a difference, restate event ``event_id``'s delta."""

    recorder: Any  # the session's Recorder
    event_id: str
    base_id: str | None
    prev: list[Any]
    raw: list[Any]
    upto: int
    t: float
    corr: dict[str, Any]


class Verifier:
    """Verifies on a daemon thread the part of each request that Hermes's thread did not compare."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Check | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pending = 0
        self._idle = threading.Condition(self._lock)
        self.fixes = 0  # requests restated so far (a counter for tests and the bench)
        # The verifier thread's CPU (read by the bench): comparing, and then freeing the older request list
        # (Hermes's own garbage: without replaykit, Hermes's thread would free it).
        self.cpu_seconds = 0.0
        self.release_seconds = 0.0
        # A forked child has no verifier thread: start a new one there (instead of asking the thread
        # whether it is alive on every request, ~1-2 us on the hot path).
        ref = weakref.WeakMethod(self._forget_thread)
        os.register_at_fork(after_in_child=lambda: (ref() or (lambda: None))())

    def _forget_thread(self) -> None:
        self._thread = None
        self._queue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0

    def submit(self, check: Check) -> None:
        with self._lock:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="replaykit-verify", daemon=True)
                self._thread.start()
        self._queue.put(check)

    def wait(self, timeout: float = 30.0) -> bool:
        """Block until every submitted check is done (closing a run, tests, benches)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def _run(self) -> None:
        while True:
            check = self._queue.get()
            if check is None:
                return
            started = time.thread_time()
            try:
                self._verify(check)
            except Exception as exc:  # never let the thread die silently: the next check still runs
                log_once("request verification", exc)
            finally:
                # Drop the two request lists now, not when the next check arrives: Hermes's dicts held
                # longer survive more collections and end in the old generation (GC cost, not ours to
                # add to Hermes's process).
                compared = time.thread_time()
                check = None
                self.cpu_seconds += compared - started
                self.release_seconds += time.thread_time() - compared
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

    def _verify(self, check: Check) -> None:
        raw, prev, upto = check.raw, check.prev, check.upto
        first = 1
        while first < upto:
            # Chunks: one C-level comparison holds the GIL throughout; between chunks Hermes's thread
            # gets it back as soon as it asks.
            end = min(upto, first + CHUNK)
            if raw[first:end] != prev[first:end]:
                break
            first = end
        else:
            return
        while raw[first] == prev[first]:
            first += 1
        # Chat maps one wire message to one IR message, so element positions are message positions.
        append = [m for e in raw[first:] for m in decode(CHAT, e)]
        context = {"base": check.base_id, "keep": first, "append": append}
        body = {"t": check.t, "provenance": "recorded", "corr": check.corr, "kind": "opaque",
                "source": REQUEST_FIX_SOURCE, "name": REQUEST_FIX_NAME,
                "data": {"event": check.event_id, "context": context}}
        check.recorder.emit_dict(body)
        self.fixes += 1
