"""Redaction as an IR-to-IR pass: a redacted run is a new run, never an in-place edit.

Only content is rewritten: message text, reasoning text, tool arguments (parsed and raw, which get the
same placeholders because they share the run's map), tool results, errors, final answers, metadata.
Everything replay depends on is copied unchanged: event ids and sequence numbers, tool call ids and
names, delta bases and ``keep`` counts, tool declarations (and so ``tools_ref`` hashes), roles, usage.
Request fingerprints are recomputed over the redacted messages, so a redacted run replays against
itself exactly as the original did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from replaykit.core.errors import TraceError
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.canonical import fingerprint
from replaykit.core.trace.codecs.frames import without_frames
from replaykit.core.trace.deltas import check_ref, expand_refs
from replaykit.core.trace.ir import (
    EVENT_ADAPTER,
    Event,
    Lineage,
    LLMRequest,
    Message,
    RunHeader,
    ToolCallEvent,
    ToolsEvent,
    ToolSpec,
)
from replaykit.core.trace.run import request_of, tool_message_of

from ._engine import Mode
from ._header import content_fields
from ._redactor import Redactor

# Keys of an event dump whose string values are content to redact (per event kind). Anything not
# listed is structure and is copied verbatim.
_EVENT_TEXT_FIELDS: dict[str, tuple[str, ...]] = {
    "tool_call": ("result", "error"),
    "error": ("message",),
    "subagent": ("goal", "summary"),
    "desync": ("expected", "actual", "reason"),
    "synthetic": ("reason",),
    "turn_end": ("final_answer", "reason"),
    "run_end": ("final_answer", "reason"),
}
_EVENT_VALUE_FIELDS: dict[str, tuple[str, ...]] = {
    "tool_call": ("arguments", "underlying"),
    "meta": ("data",),
    "opaque": ("data",),
}


class _Pass:
    """Rewrites dumped events (plain dicts) with one Redactor; first collects, then substitutes."""

    def __init__(self, redactor: Redactor) -> None:
        self.r = redactor
        self.collect_only = False
        self.leaves: list[tuple[Any, bool]] = []

    # In collect mode every hook records the value and returns it unchanged; the caller then prefetches
    # all leaves in one batch (one nlp.pipe over the uncached text) and runs the pass for real.
    def text(self, value: Any) -> Any:
        if not isinstance(value, str) or not value:
            return value
        if self.collect_only:
            self.leaves.append((value, True))
            return value
        return self.r._walk(value, None)

    def value(self, value: Any, *, hints: bool = True) -> Any:
        if value is None:
            return None
        if self.collect_only:
            self.leaves.append((value, hints))
            return value
        return self.r._walk(value, None, hints)

    def details(self, d: dict[str, Any], key: str = "provider_details") -> None:
        # provider_details hold logprobs ("token": ...) and ids: no key hints there, detectors only.
        if d.get(key) is not None:
            d[key] = self.value(d[key], hints=False)

    def part(self, p: dict[str, Any]) -> None:
        kind = p.get("type")
        if kind in ("text", "reasoning"):
            p["text"] = self.text(p.get("text"))
        elif kind == "tool_call":
            p["arguments"] = self.value(p.get("arguments"))
            if p.get("raw_arguments") is not None:
                p["raw_arguments"] = self.value(p["raw_arguments"])
        elif kind == "tool_result":
            p["content"] = self.value(p.get("content"))
            for block in p.get("blocks") or []:
                self.part(block)
        elif kind == "media":
            p["url"] = self.text(p.get("url"))
        elif kind == "opaque":
            # a block the IR does not model: its text is redacted, its ids and tokens are not
            p["data"] = self.value(p.get("data"), hints=False)
        self.details(p)

    def message(self, m: dict[str, Any]) -> None:
        for p in m.get("parts") or []:
            self.part(p)
        self.details(m)

    def request(self, req: dict[str, Any] | None) -> None:
        if not req:
            return
        for m in (req.get("context") or {}).get("append") or []:
            self.message(m)
        params = req.get("params") or {}
        for key in ("user", "metadata", "instructions"):
            if key in params:
                params[key] = self.value(params[key])
        self.details(req)

    def event(self, d: dict[str, Any]) -> None:
        kind = d["kind"]
        if kind == "tools":
            return  # declarations are code, not data; their hash is referenced by requests
        if kind == "turn_start":
            self.message(d["message"])
        elif kind == "llm_call":
            self.request(d["request"])
            self.message(d["response"]["message"])
            # A stream's frames hold the answer cut at arbitrary points (a name split over two deltas
            # escapes every detector): the redacted run keeps no frames and serves its streams whole.
            d["response"]["provider_details"] = without_frames(d["response"].get("provider_details"))
            self.details(d["response"])
        elif kind == "error":
            self.request(d.get("request"))
        for f in _EVENT_TEXT_FIELDS.get(kind, ()):
            d[f] = self.value(d.get(f))
        if kind == "tool_call" and d.get("raw_arguments") is not None:
            d["raw_arguments"] = self.value(d["raw_arguments"])
        for f in _EVENT_VALUE_FIELDS.get(kind, ()):
            d[f] = self.value(d.get(f), hints=kind != "opaque")
        for block in d.get("result_blocks") or []:
            self.part(block)
        self.details(d)


def redact_events(events: Iterable[Event], redactor: Redactor, *, batch: int = 64) -> Iterator[Event]:
    """Redact events in order, analysing each window of ``batch`` events in one NER batch."""
    window: list[Event] = []
    for event in events:
        window.append(event)
        if len(window) >= batch:
            yield from _redact_window(window, redactor)
            window = []
    if window:
        yield from _redact_window(window, redactor)


def _redact_window(events: Sequence[Event], redactor: Redactor) -> list[Event]:
    dumps = [jsonsafe.model_data(e) for e in events]
    p = _Pass(redactor)
    p.collect_only = True
    for d in dumps:
        p.event(d)
    _prefetch(redactor, p.leaves)
    p.collect_only = False
    out: list[Event] = []
    for original, d in zip(events, dumps, strict=True):
        if isinstance(original, ToolsEvent):
            out.append(original)
            continue
        p.event(d)
        out.append(EVENT_ADAPTER.validate_python(d))
    return out


def _prefetch(redactor: Redactor, leaves: list[tuple[Any, bool]]) -> None:
    texts: list[str] = []
    for leaf, hints in leaves:
        redactor._collect(leaf, None, texts, hints)
    if texts:
        redactor.redact_texts(texts)


def redact_messages(messages: Sequence[Message], redactor: Redactor) -> list[Message]:
    """A request's messages redacted by the hooks the IR pass uses for request messages, with
    ``redactor``'s placeholders: how a live request is put in a redacted cassette's space."""
    dumps = [jsonsafe.model_data(m) for m in messages]
    p = _Pass(redactor)
    p.collect_only = True
    for d in dumps:
        p.message(d)
    _prefetch(redactor, p.leaves)
    p.collect_only = False
    for d in dumps:
        p.message(d)
    return [Message.model_validate(d) for d in dumps]


def redact_event(event: Event, redactor: Redactor) -> Event:
    """Redact one event with a run's Redactor (the Hermes recorder's hook; see docs/redaction.md)."""
    return _redact_window([event], redactor)[0]


def make_event_redactor(
    mode: Mode = "patterns", allow_list: Sequence[str] = ()
) -> Callable[[Event], Event]:
    """A callable ``Event -> Event`` for one run: call it on every event before it is written.

    Keep one per recorded run (it owns the run's placeholder numbering). Events must be passed in
    order; tool declarations pass through unchanged so ``tools_ref`` hashes stay valid.
    """
    redactor = Redactor(mode=mode, allow_list=allow_list)
    return lambda event: redact_event(event, redactor)


def redact_header(header: RunHeader, redactor: Redactor, *, new_run_id: str, mode: str) -> RunHeader:
    data = jsonsafe.model_data(header)
    p = _Pass(redactor)
    data["run_id"] = new_run_id
    for name in content_fields():  # every field that content_free_header drops is redacted here
        if name == "lineage":
            continue  # replaced below (the source's lineage edit/details are not copied)
        data[name] = p.value(data.get(name)) if data.get(name) is not None else data.get(name)
    tags = list(data.get("tags") or [])
    if "redacted" not in tags:
        tags.append("redacted")
    data["tags"] = tags
    new = RunHeader.model_validate(data)
    new.lineage = Lineage(
        relation="redaction",
        parent_run_id=header.run_id,
        details={"mode": mode},
    )
    return new


class FingerprintFixer:
    """Recomputes request fingerprints over redacted messages, streaming (keeps request messages)."""

    def __init__(self) -> None:
        self._messages: dict[str, list[Message]] = {}
        self._tools: dict[str, list[ToolSpec]] = {}
        # The tool calls seen (old and redacted): what request message references name.
        self._tool_calls: dict[str, ToolCallEvent] = {}

    def __call__(self, original: Event, redacted: Event) -> Event:
        if isinstance(redacted, ToolsEvent):
            self._tools[redacted.hash] = redacted.tools
            return redacted
        if isinstance(original, ToolCallEvent) and isinstance(redacted, ToolCallEvent):
            self._tool_calls[f"old:{original.id}"] = original
            self._tool_calls[f"new:{redacted.id}"] = redacted
            return redacted
        req_new = request_of(redacted)
        req_old = request_of(original)
        if req_new is None or req_old is None:
            return redacted
        old_msgs = self._rebuild(f"old:{original.id}", req_old)
        new_msgs = self._rebuild(f"new:{redacted.id}", req_new)
        if req_old.fingerprint is not None:
            tools = self._tools.get(req_old.tools_ref) if req_old.tools_ref else None
            # Only recompute what we can reproduce: a fingerprint made some other way is kept.
            if req_old.fingerprint == fingerprint(old_msgs, tools):
                req_new.fingerprint = fingerprint(new_msgs, tools)
        return redacted

    def _rebuild(self, key: str, req: LLMRequest) -> list[Message]:
        prefix = key.split(":", 1)[0]
        base = req.context.base
        msgs = list(self._messages.get(f"{prefix}:{base}", [])[: req.context.keep]) if base else []
        # A reference rebuilds the (redacted) tool call's result: the one expansion, deltas.expand_refs.
        msgs.extend(expand_refs(req.context.append, lambda ref, strip: self._tool_message(f"{prefix}:{ref}", ref, strip)))
        self._messages[key] = msgs
        return msgs

    def _tool_message(self, key: str, ref: str, strip: bool) -> Message:
        found = self._tool_calls.get(key)
        if found is None:  # a stream read without Run.check_references: still one line, no traceback
            raise TraceError(f"a request message {check_ref(ref, None, None, None, None)}")
        return tool_message_of(found, strip)
