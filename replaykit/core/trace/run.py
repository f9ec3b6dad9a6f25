"""A loaded run: the header, its events, and the views every engine needs.

``Run`` resolves the IR's compact encodings: the delta-encoded request messages of each LLM call
(``request_messages``), the tool declarations it referenced (``request_tools``), the numbered steps
(LLM calls and tool calls, in recorded order), the final conversation and answer, the failing step.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar, cast

from replaykit.core.errors import TraceError
from replaykit.core.gcpause import cyclic_gc_paused
from replaykit.core.trace.deltas import check_ref, expand_refs, tool_message
from replaykit.core.trace.ir import (
    ErrorEvent,
    Event,
    LLMCallEvent,
    LLMRequest,
    Message,
    MessageDelta,
    MessageRef,
    MetaEvent,
    OpaqueEvent,
    RunEndEvent,
    RunHeader,
    ToolCallEvent,
    ToolsEvent,
    ToolSpec,
    TurnEndEvent,
    TurnStartEvent,
)
from replaykit.core.trace.reader import iter_trace
from replaykit.core.trace.store_index import ReadReport

StepEvent = LLMCallEvent | ToolCallEvent
_E = TypeVar("_E", bound=Event)  # type: ignore[valid-type]

# A recorder that decides a request's delta before verifying all of it (the Hermes capture, see
# adapters/hermes/capture/wire_deltas.py) restates the delta of a request it finds it got wrong with an
# ``opaque`` event of this source and name: ``{"event": <event id>, "context": <MessageDelta>}``.
REQUEST_FIX_SOURCE = "replaykit"
REQUEST_FIX_NAME = "request_fix"
_STEP_KINDS = frozenset(("llm_call", "tool_call"))
_RESOLVED_KEPT = 4  # request message lists ``Run.request_messages`` keeps resolved


@dataclass(frozen=True)
class Step:
    """A numbered step: one LLM call or one tool call."""

    index: int
    event: StepEvent

    @property
    def kind(self) -> str:
        return "llm" if isinstance(self.event, LLMCallEvent) else "tool"

    @property
    def failed(self) -> bool:
        event = self.event
        if isinstance(event, ToolCallEvent):
            return event.status == "error"
        return event.response.finish_reason in ("error", "content_filter")


class Run:
    def __init__(self, header: RunHeader, events: Iterable[Event], report: ReadReport | None = None) -> None:
        self.header = header
        self.events: list[Event] = list(events)
        self.report = report
        _apply_request_fixes(self.events)
        self._messages_cache: dict[str, list[Message]] = {}

    # ----------------------------------------------------------------------------------- loading

    @classmethod
    def load(cls, path: str | Path) -> Run:
        path = Path(path)
        report = ReadReport(path)
        lines = iter_trace(path, report)
        header = next(lines)
        assert isinstance(header, RunHeader)
        events: list[Event] = []
        with cyclic_gc_paused():  # many long-lived objects, no cycles (measured: 5x slower loads otherwise)
            for item in lines:
                assert not isinstance(item, RunHeader)
                events.append(item)
        run = cls(header, events, report)
        run.check_references()
        return run

    @property
    def run_id(self) -> str:
        return self.header.run_id

    @cached_property
    def by_id(self) -> dict[str, Event]:
        return {e.id: e for e in self.events}

    def check_references(self) -> None:
        """Every delta base, message reference and tools_ref must point backwards at an existing event
        of the right kind."""
        seen: dict[str, Event] = {}
        tools: set[str] = set()
        for event in self.events:
            request = request_of(event)
            if request is not None:
                base = request.context.base
                if base is not None:
                    base_event = seen.get(base)
                    if base_event is None or request_of(base_event) is None:
                        raise TraceError(
                            f"run {self.run_id}: event {event.seq} refers to unknown earlier request {base!r}"
                        )
                for item in request.context.append:
                    if type(item) is MessageRef:  # type, not isinstance: see ``steps``
                        self._ref_target(event, item.ref, self.by_id)  # by seq: a later event is named as such
                if request.tools_ref is not None and request.tools_ref not in tools:
                    raise TraceError(
                        f"run {self.run_id}: event {event.seq} refers to undeclared tools {request.tools_ref!r}"
                    )
            if event.kind == "tools":
                tools.add(cast(ToolsEvent, event).hash)
            seen[event.id] = event

    def _ref_target(self, event: Event, ref: str, events_by_id: dict[str, Event]) -> ToolCallEvent:
        """The tool call event a message reference in ``event``'s request names (checked: deltas.check_ref)."""
        target = events_by_id.get(ref)
        problem = check_ref(ref, target, target.kind if target else None, target.seq if target else None, event.seq)
        if problem is not None:
            raise TraceError(f"run {self.run_id}: event {event.seq}: request message {problem}")
        return cast(ToolCallEvent, target)

    def _expand(self, event: Event, append: list[Message | MessageRef]) -> list[Message]:
        """``append`` with its message references expanded (``deltas.expand_refs``: the one expansion)."""
        return expand_refs(append, lambda ref, strip: tool_message_of(self._ref_target(event, ref, self.by_id), strip))

    def appended_messages(self, event: Event) -> list[Message]:
        """The messages an LLM call's request appended to its base (references expanded)."""
        request = request_of(event)
        if request is None:
            raise TraceError(f"event {event.seq} ({event.kind}) has no LLM request")
        return self._expand(event, request.context.append)

    # ------------------------------------------------------------------------------------- views

    @cached_property
    def steps(self) -> list[Step]:
        out: list[Step] = []
        for event in self.events:
            # ``kind``, not isinstance: isinstance against pydantic models goes through ABCMeta (microseconds
            # per miss, seconds on a 10,000-step run).
            if event.kind in _STEP_KINDS:
                out.append(Step(len(out), cast(StepEvent, event)))
        return out

    @cached_property
    def tool_sets(self) -> dict[str, list[ToolSpec]]:
        return {e.hash: e.tools for e in _of_kind(self.events, "tools", ToolsEvent)}

    def step(self, index: int) -> Step:
        if not 0 <= index < len(self.steps):
            from replaykit.core.errors import BadInput

            raise BadInput(f"step {index} out of range: run {self.run_id} has steps 0..{len(self.steps) - 1}")
        return self.steps[index]

    def request_tools(self, request: LLMRequest) -> list[ToolSpec] | None:
        if request.tools_ref is None:
            return None
        return self.tool_sets[request.tools_ref]

    def request_messages(self, event: Event) -> list[Message]:
        """The full message list of an LLM call's (or failed attempt's) request.

        Linear: the chain of bases is walked back only to the nearest request resolved recently, and
        only the last few resolved lists are kept (caching every request's full list is O(calls x
        messages) memory: hundreds of MB on a 10,000-step run)."""
        request = request_of(event)
        if request is None:
            raise TraceError(f"event {event.seq} ({event.kind}) has no LLM request")
        cache = self._messages_cache
        cached = cache.get(event.id)
        if cached is not None:
            return list(cached)
        # Walk the chain of bases back to a root or a cached list, then rebuild forward (no recursion).
        chain: list[Event] = []
        cursor: Event | None = event
        while cursor is not None and cursor.id not in cache:
            chain.append(cursor)
            req = request_of(cursor)
            assert req is not None
            base = req.context.base
            cursor = self.by_id.get(base) if base is not None else None
            if base is not None and cursor is None:
                raise TraceError(f"run {self.run_id}: unknown request base {base!r}")
        messages: list[Message] = list(cache[cursor.id]) if cursor is not None else []
        for item in reversed(chain):
            req = request_of(item)
            assert req is not None
            if req.context.base is None:
                messages = self._expand(item, req.context.append)
                continue
            if req.context.keep > len(messages):
                raise TraceError(
                    f"run {self.run_id}: event {item.seq} keeps {req.context.keep} messages "
                    f"of a request that has {len(messages)}"
                )
            del messages[req.context.keep:]
            messages.extend(self._expand(item, req.context.append))
        while len(cache) >= _RESOLVED_KEPT:
            del cache[next(iter(cache))]  # the oldest (dicts keep insertion order)
        cache[event.id] = messages
        return list(messages)

    def llm_calls(self) -> list[LLMCallEvent]:
        return list(_of_kind(self.events, "llm_call", LLMCallEvent))

    def tool_calls(self) -> list[ToolCallEvent]:
        return list(_of_kind(self.events, "tool_call", ToolCallEvent))

    def user_turns(self) -> list[TurnStartEvent]:
        return list(_of_kind(self.events, "turn_start", TurnStartEvent))

    def conversation(self) -> list[Message]:
        """The run's conversation as the model last saw it, plus its last answer and tool results."""
        calls = self.llm_calls()
        if not calls:
            return [e.message for e in self.user_turns()]
        last = calls[-1]
        messages = [*self.request_messages(last), last.response.message]
        results = [
            e for e in self.events if isinstance(e, ToolCallEvent) and e.seq > last.seq and e.result is not None
        ]
        messages.extend(tool_message_of(tool_event) for tool_event in results)
        return messages

    @property
    def final_answer(self) -> str | None:
        for event in reversed(self.events):
            if isinstance(event, (RunEndEvent, TurnEndEvent)) and event.final_answer is not None:
                return event.final_answer
            if isinstance(event, LLMCallEvent):
                if not event.response.message.tool_calls:
                    return event.response.message.text
                return None
        return None

    @property
    def status(self) -> str:
        for event in reversed(self.events):
            if isinstance(event, (RunEndEvent, TurnEndEvent)):
                return event.status
        return "incomplete"

    @property
    def failing_step(self) -> int | None:
        """The first step that failed (a tool error, an LLM error finish), else None."""
        for step in self.steps:
            if step.failed:
                return step.index
        return None

    @property
    def errors(self) -> list[ErrorEvent]:
        return list(_of_kind(self.events, "error", ErrorEvent))

    @cached_property
    def meta(self) -> dict[str, Any]:
        """Header metadata merged with every later ``meta`` event (later wins)."""
        merged = dict(self.header.metadata)
        for event in self.events:
            if isinstance(event, MetaEvent):
                merged.update(event.data)
        return merged

    @property
    def model(self) -> str | None:
        if self.header.model:
            return self.header.model
        for event in self.events:
            if isinstance(event, LLMCallEvent):
                return event.request.model or event.response.model
        value = self.meta.get("model")
        return value if isinstance(value, str) else None

    @property
    def duration(self) -> float:
        end = 0.0
        for event in self.events:
            end = max(end, event.t + (event.duration or 0.0))
        return end


def request_of(event: Event) -> LLMRequest | None:
    """The LLM request an event carries (an ``llm_call``, or a failed attempt's ``error``), else None."""
    kind = event.kind
    if kind == "llm_call":
        return cast(LLMCallEvent, event).request
    if kind == "error":
        return cast(ErrorEvent, event).request
    return None


def tool_message_of(event: ToolCallEvent, strip: bool = False) -> Message:
    """The tool-role message a tool call event puts into the conversation (``deltas.tool_message``: what a
    request's ``MessageRef`` to it stands for)."""
    return Message.model_validate(tool_message({"call_id": event.call_id, "name": event.name,
                                                "result": event.result, "status": event.status}, strip=strip))


def _of_kind(events: Iterable[Event], kind: str, cls: type[_E]) -> Iterator[_E]:
    """The events of one kind, typed (``kind`` tests: see ``Run.steps`` on isinstance)."""
    for event in events:
        if event.kind == kind:
            yield cast(_E, event)


def _apply_request_fixes(events: list[Event]) -> None:
    """Replace the delta of every request that a later ``request_fix`` event restates."""
    fixes = {
        e.data["event"]: e.data["context"]
        for e in events
        if e.kind == "opaque" and isinstance(e, OpaqueEvent)  # kind first: a cheap string test per event
        and e.source == REQUEST_FIX_SOURCE and e.name == REQUEST_FIX_NAME
        and isinstance(e.data, dict) and isinstance(e.data.get("event"), str)
    }
    if not fixes:
        return
    for event in events:
        context = fixes.get(event.id)
        request = request_of(event) if context is not None else None
        if request is not None:
            try:
                request.context = MessageDelta.model_validate(context)
            except ValueError as exc:
                raise TraceError(f"event {event.seq}: malformed request_fix ({exc})") from exc
