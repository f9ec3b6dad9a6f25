"""The serve-then-live cursor: the one replay policy every engine uses (openai loop, Hermes middleware,
PydanticAI model, LangGraph nodes).

An engine asks the cursor before every LLM call (``cursor.llm``) and every tool call (``cursor.tool``):

- before the cut (step index ``cut``) the answer is served from the record: the recorded response, or
  the recorded tool result matched by ``tool_call_id`` (parallel calls in any arrival order);
- from the cut on the decision is ``live``: the engine calls the provider / runs the tool, then reports
  what happened with ``cursor.live_llm`` / ``cursor.live_tool``;
- a request that does not match the record at a served position (``canonical.fingerprint``, volatile
  fields ignored) is a *desync*: a ``desync`` event is appended and the engine fails open to live;
- an LLM request after the record has ended (while still serving) gets a synthetic end-of-turn answer
  and a ``synthetic`` event: never a hidden provider call.

The decision itself is ``replaykit.core.replay.serve`` (stdlib-only, embedded verbatim in generated code);
the cursor adds IR objects, recording and counters. It records every step into the new run (``recorder``), served ones with provenance
``served``, and keeps the counters that go into results (``cursor.counters``). Thread-safe.

``unbridge``: the engine cannot take a bridged tool call as made (Hermes 0.19.0 playing a Hermes 0.22
Tool Search recording: its own bridge takes another shape and answers ``tool_call`` before any
middleware). Each recorded bridged call is then served as its underlying call (the tool that really ran,
``core.trace.bridge_view.unbridged_response``, keeping its id), the record's requests are matched in that
view (``next_request`` gives it too), and tool steps are matched and recorded by the underlying call. The
new run holds what the engine did (direct calls); ``diff`` compares bridged and direct calls by their
underlying call and notes the difference.

A batch of several tools in one bridged call that the record shows Hermes 0.22 ran entry by entry (one
bridged call per entry, the later ones under new ids) is served as that expansion
(``bridge_view.expanded_response``): what Hermes's history, and so the record's next request, holds, so an
engine asks for every tool step the record has.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from replaykit.core.replay import serve
from replaykit.core.trace.bridge import event_underlying
from replaykit.core.trace.bridge_view import (
    expanded_response,
    recorded_underlying,
    unbridged_response,
    underlying_messages,
)
from replaykit.core.trace.canonical import message_units
from replaykit.core.trace.codecs import frames
from replaykit.core.trace.ir import (
    Edit,
    LLMCallEvent,
    LLMResponse,
    Message,
    Provenance,
    TextPart,
    ToolCallEvent,
    ToolCallPart,
    ToolSpec,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run

Action = Literal["serve", "live", "synthetic"]


@dataclass
class Counters:
    """What a replay or play did. ``provider_calls`` counts HTTP attempts (retries included)."""

    provider_calls: int = 0
    tool_executions: int = 0
    served_llm_steps: int = 0
    served_tool_steps: int = 0
    live_llm_steps: int = 0
    live_tool_steps: int = 0
    desyncs: int = 0
    synthetic_steps: int = 0

    def to_json(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class LLMDecision:
    """``serve`` / ``synthetic``: use ``response`` (already recorded). ``live``: call the provider, then
    ``cursor.live_llm(...)``. ``step`` is the record's step index (None past the end of the record)."""

    action: Action
    step: int | None
    response: LLMResponse | None = None
    reason: str = ""
    #: a served step recorded as a stream: the SSE chunks served, one per recorded frame, in order
    #: (already paced by the cursor's ``stream_timing``); None for a response without frames
    stream: list[bytes] | None = None


@dataclass(frozen=True)
class ToolDecision:
    """``serve``: use ``event`` (its ``result``/``status``/``error``; already recorded). ``live``: run
    the tool (or stand in for it), then ``cursor.live_tool(...)``."""

    action: Action
    step: int | None
    event: ToolCallEvent | None = None
    reason: str = ""

    @property
    def result(self) -> str | None:
        return self.event.result if self.event is not None else None


def play_cut(run: Run) -> int:
    """Where live execution starts when ``run`` is played: after a branch's edited step (at it for an
    argument edit, which must run live), else at step 0 (the whole run against the new model)."""
    lineage = run.header.lineage
    if lineage is None or lineage.relation != "branch":
        return 0
    details = lineage.details or {}
    live_from = details.get("live_from")
    if isinstance(live_from, int) and live_from >= 0:
        return min(live_from, len(run.steps))
    return len(run.steps)


class ReplayCursor:
    """Serve ``record``'s steps before ``cut``; live from ``cut`` on. ``cut=None``: serve everything and
    answer any request past the end of the record synthetically (a pure replay through an engine).

    ``reference``: runs searched by ``recorded_tool`` for a matching tool call in the live part (the
    original run a branch came from; defaults to ``record``). ``compare_tools``: also require the offered
    tool declarations to match at served positions (engines whose tool descriptions differ from the
    source framework's pass False). ``stream_timing``: how a served step recorded as a stream is served
    (``frames.play``: ``fast``, every frame at once; ``recorded``, the recorded gap before each frame,
    waited with ``sleep``), before ``llm`` returns it.
    """

    def __init__(
        self,
        record: Run,
        *,
        cut: int | None = None,
        recorder: Recorder | None = None,
        reference: Sequence[Run] = (),
        compare_tools: bool = False,
        offline: bool = False,
        stream_timing: str = "fast",
        sleep: Callable[[float], Any] = time.sleep,
        unbridge: bool = False,
    ) -> None:
        self.record = record
        self.stream_timing = frames.check_timing(stream_timing)
        self._sleep = sleep
        # offline (``play --offline``): nothing may go live; a desync ends the turn synthetically.
        self.offline = offline
        # cut=None: a pure replay; past the end of the record only synthetic answers are given.
        self.serve_only = cut is None
        self.cut = len(record.steps) if cut is None else max(0, cut)
        self.recorder = recorder
        self.reference: list[Run] = [record, *[r for r in reference if r is not record]]
        self.compare_tools = compare_tools
        self.counters = Counters()
        self.edit: Edit | None = record.header.lineage.edit if record.header.lineage else None
        # unbridge: the recorded underlying call of each bridged call, by call id (module docstring). A
        # branch's argument edit replaces a call's arguments: its underlying call is read from the edit.
        self.unbridge = unbridge
        self._underlying = recorded_underlying(record)
        if self.edit is not None and self.edit.target == "args" and self.edit.tool_call_id:
            self._underlying.pop(self.edit.tool_call_id, None)
        self._lock = threading.RLock()
        steps = ((s.index, None if isinstance(s.event, LLMCallEvent) else s.event.call_id, s.event)
                 for s in record.steps)
        self._state = serve.ServeState(serve.rounds_of(steps), len(record.steps), cut)
        self._used_reference: set[str] = set()
        self._taken: list[str] = []  # user messages handed over inside a turn (``take_recorded_input``)
        self._handed: set[tuple[int, str]] = set()  # ... and where in the request they were put
        self._t0 = time.monotonic()

    # ------------------------------------------------------------------------------------- state

    @property
    def live(self) -> bool:
        """True once the cursor has gone live (cut reached or desync)."""
        return self._state.live

    @property
    def exhausted(self) -> bool:
        """True when every recorded LLM step has been consumed (served or passed by going live)."""
        return self._state.exhausted

    def user_turns(self) -> list[Message]:
        """The recording's user messages in order (``turn_start`` events), for engines that replay
        later turns of a multi-turn run."""
        # A branch holds only its prefix; the run it came from has every turn.
        source = max(self.reference, key=lambda run: len(run.user_turns()))
        return [event.message for event in source.user_turns()]

    # --------------------------------------------------------------------------------------- LLM

    def llm(self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None,
            **record_kw: Any) -> LLMDecision:
        """Decide how to answer the next LLM request (see the module docstring). Served and synthetic
        answers are recorded here (``record_kw`` goes to ``Recorder.llm_call``: model, params, api...).
        A served answer recorded as a stream is served frame by frame first (outside the lock: pacing
        never holds up another thread's tool calls)."""
        decision = self._decide_llm(messages, tools, record_kw)
        if decision.action != "serve" or decision.response is None:
            return decision
        chunks = frames.replayed(decision.response, self.stream_timing, self._sleep)
        return decision if chunks is None else replace(decision, stream=chunks)

    def _decide_llm(self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None,
                    record_kw: dict[str, Any]) -> LLMDecision:
        with self._lock:
            state = self._state
            if state.live and self.offline:
                return self._synthetic(messages, tools, record_kw)
            actual = None if state.live or state.exhausted else serve.request_fingerprint(
                messages, tools if self.compare_tools else None)
            decision = state.llm(actual, self._expected_fingerprint)
            if decision.action == "synthetic":
                return self._synthetic(messages, tools, record_kw)
            rnd = decision.round
            if decision.action == "live":
                if decision.reason == "desync" and rnd is not None:
                    self._desync(rnd.llm_step, "LLM request does not match the record", decision.expected,
                                 decision.actual)
                    if self.offline:
                        return self._synthetic(messages, tools, record_kw)
                return LLMDecision("live", rnd.llm_step if rnd is not None else None, reason=decision.reason)
            assert rnd is not None
            response = _apply_args_edit(rnd.llm.response, self.edit)
            edited = response is not rnd.llm.response
            # A batch Hermes 0.22 ran entry by entry is served as the calls it expanded into (bridge_view)
            response = expanded_response(response, self._underlying)
            if self.unbridge:
                response = unbridged_response(response, self._underlying)
            self.counters.served_llm_steps += 1
            if self.recorder is not None:
                self.recorder.llm_call(
                    messages, response, tools=tools,
                    provenance=Provenance.EDITED if edited else _served(rnd.llm),
                    duration=0.0,
                    **_llm_kw(rnd.llm, record_kw),
                )
            return LLMDecision("serve", rnd.llm_step, response=response)

    def recorded_input(self, messages: Sequence[Message]) -> list[tuple[int, Message]]:
        """Messages the application put into the record's next request that an engine's own loop does
        not produce, and where: ``(index, message)`` pairs, ``index`` being the message's place in the
        request once all are in (ascending; ``with_input`` puts them there). Such input is user or system
        text and media, or an assistant message the model did not write: the image a PydanticAI tool
        returned, sent as a user message after the tool result; Terminus-2's handoff after a context
        summarization; two user messages in a row; an assistant turn Hermes's ``inject_message`` added.
        Several places at once are found (an engine whose history does not keep earlier input, such as
        Hermes's, misses it again in later requests). Empty when there is none, when the next request is
        live or past the record, or when the record differs from ``messages`` in anything else (then
        ``llm`` reports the desync as usual)."""
        with self._lock:
            recorded = self.next_request()
            if recorded is None:
                return []
            # Compared in the canonical shape (``canonical.message_units``): an Anthropic user message of
            # tool results and text is the results, then the text, whichever shape the engine holds.
            units = _units(recorded)
            mine = _units(messages)
            if len(units) <= len(mine):  # nothing added: the common case
                return []
            owner = [i for i, m in enumerate(messages) for _ in range(_unit_count(m))]
            keys = [serve.request_fingerprint([m]) for m in mine]
            found: list[tuple[int, Message]] = []
            j = 0
            for unit in units:  # ``messages`` must be a subsequence of the record
                if j < len(keys) and serve.request_fingerprint([unit]) == keys[j]:
                    j += 1
                elif _is_input(unit):
                    found.append(((owner[j - 1] + 1 if j else 0) + len(found), unit))
                else:
                    return []
            return found if j == len(keys) else []

    def next_request(self) -> list[Message] | None:
        """The recorded messages of the next LLM request the cursor will serve (None when it will not
        serve one: live, past the cut, or the record has ended)."""
        with self._lock:
            state = self._state
            if state.live or state.exhausted:
                return None
            rnd = state.rounds[state.next_round]
            if rnd.llm_step >= self.cut:
                return None
            return self._view(self.record.request_messages(rnd.llm))

    def continues(self, messages: Sequence[Message]) -> bool:
        """True when the record's next request is ``messages`` as they stand: the application called the
        model again on the history that ends with the model's answer, with nothing added (two assistant
        answers in a row, as Hermes trajectories hold them). An engine whose loop would end the turn on a
        final answer calls the model once more instead. False when live, past the cut, or at the end."""
        recorded = self.next_request()
        return recorded is not None and len(recorded) == len(messages) and \
            serve.request_fingerprint(recorded) == serve.request_fingerprint(messages)

    def take_recorded_input(self, messages: Sequence[Message]) -> list[tuple[int, Message]]:
        """``recorded_input`` for an engine that hands the input over: each user message in it starts a
        turn in the new run (as recorded) and is not a later turn any more (``next_turn`` skips it).
        Input handed over again at the same place (an engine whose own history does not keep it, such as
        Hermes's loop, is missing it from every later request too) starts no second turn."""
        found = self.recorded_input(messages)
        with self._lock:
            for index, message in found:
                key = serve.request_fingerprint([message])
                if message.role != "user" or (index, key) in self._handed:
                    continue
                self._handed.add((index, key))
                self._taken.append(key)
                if self.recorder is not None:
                    self.recorder.turn_start(message, provenance=Provenance.SERVED)
        return found

    def next_turn(self, pending: list[Message]) -> Message | None:
        """The next of ``pending`` (later user turns, popped in order) not already handed over inside a
        turn by ``take_recorded_input``; None when none is left."""
        with self._lock:
            while pending:
                message = pending.pop(0)
                key = serve.request_fingerprint([message])
                if key in self._taken:
                    self._taken.remove(key)
                    continue
                return message
        return None

    def live_llm(self, messages: Sequence[Message], response: LLMResponse,
                 tools: Sequence[ToolSpec] | None = None, **record_kw: Any) -> LLMCallEvent | None:
        """Record an LLM step the engine answered live (provenance ``live``)."""
        with self._lock:
            self.counters.live_llm_steps += 1
            self._state.pending = None
            if self.recorder is None:
                return None
            record_kw.setdefault("provenance", Provenance.LIVE)
            return self.recorder.llm_call(messages, response, tools=tools, **record_kw)

    def note_provider_call(self) -> None:
        """Count one request sent to a provider (every attempt, retries included)."""
        with self._lock:
            self.counters.provider_calls += 1

    # -------------------------------------------------------------------------------------- tools

    def tool(self, call_id: str, name: str, arguments: Any = None) -> ToolDecision:
        """Decide how to answer a tool call: served (matched by ``call_id`` among the calls of the last
        served LLM step, any order; by name and arguments when the id differs) or live."""
        with self._lock:
            if self.unbridge:  # the engine was served the underlying calls: it asks for those
                decision = self._state.tool(call_id, name, arguments, _underlying_name, _underlying_arguments)
            else:
                decision = self._state.tool(call_id, name, arguments, _name_of, _arguments_of)
            if decision.action == "synthetic":  # the record ends before this call's result
                return ToolDecision("synthetic", None, reason=decision.reason)
            if decision.action == "live":
                if decision.reason == "desync" and decision.step is not None:
                    self._desync(decision.step, f"tool call {name!r} ({call_id}) is not in the record here",
                                 decision.expected, call_id)
                    return ToolDecision("live", None, reason="desync")
                return ToolDecision("live", decision.step, event=None, reason=decision.reason)
            step, event = decision.step, decision.event
            self.counters.served_tool_steps += 1
            if self.recorder is not None:
                fallback = _underlying_arguments(event) if self.unbridge else event.arguments
                given = arguments if arguments is not None else fallback
                # the call as recorded (a bridged one as made) keeps the tool that ran beside it
                as_made = name == event.name and serve.arguments_key(given) == serve.arguments_key(event.arguments)
                self.recorder.tool_call(
                    call_id, name, given,
                    raw_arguments=event.raw_arguments if arguments is None and fallback is event.arguments else None,
                    result=event.result, result_blocks=event.result_blocks, status=event.status,
                    error=event.error, provenance=_served(event), duration=0.0,
                    underlying=event.underlying if as_made else None,
                )
            return ToolDecision("serve", step, event=event)

    def live_tool(self, call_id: str, name: str, arguments: Any = None, *, result: str | None,
                  status: str = "ok", error: str | None = None, executed: bool = True,
                  provenance: Provenance = Provenance.LIVE, **record_kw: Any) -> ToolCallEvent | None:
        """Record a tool step answered live. ``executed``: the real tool ran (counted in
        ``tool_executions``); False for dry-runs, blocked calls and stand-ins."""
        with self._lock:
            # A stand-in answered from a recorded call (a reference run) is served, as the timeline says.
            if provenance == Provenance.SERVED:
                self.counters.served_tool_steps += 1
            else:
                self.counters.live_tool_steps += 1
            if executed:
                self.counters.tool_executions += 1
            if self.recorder is None:
                return None
            return self.recorder.tool_call(call_id, name, arguments, result=result, status=status,
                                           error=error, provenance=provenance, **record_kw)

    def recorded_tool(self, name: str, arguments: Any) -> ToolCallEvent | None:
        """A recorded call of ``name`` with the same (parsed) arguments in the record or a reference
        run: the first not yet used, else any. Lets an engine without real tools answer live calls."""
        wanted = serve.arguments_key(arguments)
        fallback: ToolCallEvent | None = None
        with self._lock:
            for run in self.reference:
                for event in run.tool_calls():
                    # a bridged call answers for its underlying call too (a play that unbridges asks for that)
                    as_made = event.name == name and serve.arguments_key(event.arguments) == wanted
                    if event.result is None or not (as_made or _underlying_is(event, name, wanted)):
                        continue
                    if event.provenance == Provenance.EDITED:
                        continue
                    if event.id not in self._used_reference:
                        self._used_reference.add(event.id)
                        return event
                    fallback = fallback or event
        return fallback

    # ----------------------------------------------------------------------------------- helpers

    def _expected_fingerprint(self, rnd: serve.Round) -> str:
        event: LLMCallEvent = rnd.llm
        tools = self.record.request_tools(event.request) if self.compare_tools else None
        return serve.request_fingerprint(self._view(self.record.request_messages(event)), tools)

    def _view(self, messages: list[Message]) -> list[Message]:
        """Recorded messages as the engine holds them: with each bridged call unbridged (``unbridge``)."""
        return underlying_messages(messages, self._underlying) if self.unbridge else messages

    def _desync(self, step: int, reason: str, expected: str | None, actual: str | None) -> None:
        self.counters.desyncs += 1
        self._state.go_live()
        if self.recorder is not None:
            self.recorder.desync(step, reason=reason, expected=expected, actual=actual)

    def _synthetic(self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None,
                   record_kw: dict[str, Any]) -> LLMDecision:
        answer = self.record.final_answer or "[replaykit] end of the recorded run"
        response = LLMResponse(message=Message(role="assistant", parts=[TextPart(text=answer)]),
                               finish_reason="stop", usage=Usage(input_tokens=0, output_tokens=0),
                               model="replaykit-synthetic")
        step = len(self.record.steps)
        self.counters.synthetic_steps += 1
        if self.recorder is not None:
            why = "the record cannot answer this request offline" if self._state.live else \
                "completion requested after the record ended"
            self.recorder.synthetic(step, reason=f"{why}: synthetic end-of-turn answer, no provider call")
            kw = {k: v for k, v in record_kw.items() if k in ("model", "params", "api")}
            self.recorder.llm_call(messages, response, tools=tools, provenance=Provenance.SYNTHETIC,
                                   duration=0.0, **kw)
        return LLMDecision("synthetic", None, response=response, reason="record ended")


def with_input(messages: Sequence[Message], found: Sequence[tuple[int, Message]]) -> list[Message]:
    """``messages`` with the input ``recorded_input`` found put in place (each at its index)."""
    out = list(messages)
    for index, message in found:  # ascending: each index counts the ones put in before it
        out.insert(index, message)
    return out


def _units(messages: Sequence[Message]) -> list[Message]:
    """``messages`` in the canonical shape: each tool result a message of its own, then the rest of the
    message that carried it (``canonical.message_units``)."""
    out: list[Message] = []
    for message in messages:
        if not any(p.type == "tool_result" for p in message.parts):
            out.append(message)
            continue
        for role, parts in message_units(message.role, list(message.parts), kind=_part_type):
            out.append(message if parts == message.parts and role == message.role else
                       message.model_copy(update={"role": role, "parts": parts}))
    return out


def _unit_count(message: Message) -> int:
    if not any(p.type == "tool_result" for p in message.parts):
        return 1
    return len(message_units(message.role, list(message.parts), kind=_part_type))


def _part_type(part: Any) -> str:
    return str(part.type)


def _is_input(message: Message) -> bool:
    """A message an application may add between model calls: user, system or assistant text and media
    (an assistant message with tool calls, or a tool result, belongs to the model's loop)."""
    if message.role not in ("user", "system", "developer", "assistant"):
        return False
    return not any(p.type in ("tool_result", "tool_call") for p in message.parts)


def _served(event: LLMCallEvent | ToolCallEvent) -> Provenance:
    # A branch's edited step stays marked as the edit when it is served again (diff names the cause).
    return Provenance.EDITED if event.provenance == Provenance.EDITED else Provenance.SERVED


def _name_of(event: ToolCallEvent) -> str:
    return event.name


def _arguments_of(event: ToolCallEvent) -> Any:
    return event.arguments


def _underlying_name(event: ToolCallEvent) -> str:
    return event_underlying(event)[0]


def _underlying_arguments(event: ToolCallEvent) -> Any:
    name, arguments = event_underlying(event)
    return event.arguments if name == event.name else arguments


def _underlying_is(event: ToolCallEvent, name: str, wanted: str) -> bool:
    target, arguments = event_underlying(event)
    return target != event.name and target == name and serve.arguments_key(arguments) == wanted



def _llm_kw(event: LLMCallEvent, overrides: dict[str, Any]) -> dict[str, Any]:
    kw: dict[str, Any] = {"model": event.request.model, "params": event.request.params,
                          "api": event.request.api}
    kw.update({k: v for k, v in overrides.items() if k in ("model", "params", "api", "corr")})
    return kw


def _apply_args_edit(response: LLMResponse, edit: Edit | None) -> LLMResponse:
    """A branch that edits a tool call's arguments serves the call with the new arguments, so the
    engine runs the edited call (and the model sees it) exactly as the branch says."""
    if edit is None or edit.target != "args" or edit.tool_call_id is None:
        return response
    calls = response.message.tool_calls
    if not any(c.id == edit.tool_call_id for c in calls):
        return response
    from replaykit.core.trace.canonical import dumps_compact

    parts = [
        p.model_copy(update={"arguments": edit.value, "raw_arguments": dumps_compact(edit.value)})
        if isinstance(p, ToolCallPart) and p.id == edit.tool_call_id else p
        for p in response.message.parts
    ]
    message = response.message.model_copy(update={"parts": parts})
    return response.model_copy(update={"message": message})
