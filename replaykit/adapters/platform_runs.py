"""One run from the steps an observability platform recorded (Langfuse observations, LangSmith runs,
Inspect AI events): the shared rule every platform importer hands its steps to.

A platform records what the instrumented code reported, which is rarely the whole run: generations
without the tool calls between them, tool spans without the id of the call they answer, inputs that
are the app's own view of the conversation. ``build_run`` turns the steps, in the order they happened,
into IR events and marks every event ``reconstructed`` (the platform's record, read back by replaykit):

- an LLM step without input messages gets the conversation so far (``replaykit.core.trace.interop``);
- a user message new in a request starts a turn (in the first request only the last one: the earlier
  ones are history the app sent along, turns of another trace or session);
- a tool step without a call id answers the model's first open call of that tool; a call the model
  made that no tool step answers takes its result from the next request that carries it (what the
  model saw is what replay must serve), else it is listed as a loss;
- a tool result the next request shows differently from the tool step's output is served as the
  request shows it (the step's own output is kept in ``provider_details``);
- anything else (retrievers, evaluators, events, guardrails) is an opaque event, never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replaykit.adapters.base import ImportedRun
from replaykit.core.trace.interop import Conversation, Losses
from replaykit.core.trace.ir import (
    Correlation,
    Lineage,
    LLMResponse,
    Message,
    Provenance,
    RunHeader,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from replaykit.core.trace.recorder import Recorder

RECONSTRUCTED = Provenance.RECONSTRUCTED


@dataclass
class Timing:
    t: float = 0.0
    duration: float | None = None
    corr: Correlation | None = None
    details: dict[str, Any] | None = None  # the event's provider_details


@dataclass
class LlmStep:
    at: Timing
    messages: list[Message] | None  # None: the platform kept no input, the conversation so far is used
    response: Message | None  # None: the call failed (``error``) or the platform kept no output
    model: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    tools: list[ToolSpec] | None = None
    usage: Usage | None = None
    finish_reason: str | None = None
    response_id: str | None = None
    error: str | None = None
    api: str = "openai-chat"


@dataclass
class ToolStep:
    at: Timing
    name: str
    call_id: str | None  # None: the platform does not say which call this answers
    arguments: Any = None
    result: str | None = None
    status: str = "ok"
    error: str | None = None


@dataclass
class OpaqueStep:
    at: Timing
    source: str
    name: str
    data: Any = None


Step = LlmStep | ToolStep | OpaqueStep


@dataclass
class RunEnd:
    status: str = "completed"
    final_answer: str | None = None  # None: the last answer of the model, when it asked for no tool
    reason: str | None = None


def build_run(header: RunHeader, steps: list[Step], *, platform: str, end: RunEnd | None = None,
              warnings: list[str] | None = None, losses: Losses | None = None) -> ImportedRun:
    """The run of ``steps`` (in the order they happened); ``losses`` names what the source held that the
    run cannot carry, ``warnings`` what the importer had to assume."""
    builder = _Builder(header, platform, losses or Losses())
    for s in steps:
        if isinstance(s, LlmStep) and s.messages:
            for m in s.messages:
                if m.role == "tool":
                    for p in m.tool_results:
                        builder.seen[p.tool_call_id] = p
                        builder.shown.setdefault(p.tool_call_id, []).append(p)
    for step in steps:
        builder.step(step)
    builder.finish(end or RunEnd())
    notes = [*(warnings or []), *builder.notes]
    return ImportedRun(header=header, events=builder.recorder.events, warnings=notes, losses=builder.losses)


class _Builder:
    def __init__(self, header: RunHeader, platform: str, losses: Losses) -> None:
        self.recorder = Recorder(header, clock=lambda: 0.0)
        self.platform = platform
        self.losses = losses
        self.notes: list[str] = []
        self.conv = Conversation()
        self.users = 0  # user messages seen in requests so far (each new one starts a turn)
        self.last_llm: str | None = None
        self.last_answer: Message | None = None
        self.pending: list[tuple[str, str, Any]] = []  # (call id, tool name, arguments) asked, not answered
        self.seen: dict[str, ToolResultPart] = {}  # call id -> its result as a later request shows it
        self.shown: dict[str, list[ToolResultPart]] = {}  # call id -> every later request's copy of it
        self.from_request = 0
        self.rewritten = 0
        self.end_t = 0.0  # when the last step ended (the run's end)

    def step(self, step: Step) -> None:
        if isinstance(step, LlmStep):
            self.llm(step)
        elif isinstance(step, ToolStep):
            self.tool(step)
        else:
            self.recorder.opaque(step.source, step.name, step.data, **self.fields(step.at))

    def fields(self, at: Timing) -> dict[str, Any]:
        self.end_t = max(self.end_t, round(at.t + (at.duration or 0.0), 6))
        return {"t": at.t, "duration": at.duration, "provenance": RECONSTRUCTED, "corr": at.corr,
                "provider_details": at.details}

    # --------------------------------------------------------------------------------------- LLM

    def llm(self, step: LlmStep) -> None:
        messages = step.messages if step.messages is not None else self.conv.expected()
        if step.messages is None and (self.conv.messages or step.response is not None):
            self.losses.add("input messages", f"{self.platform} call at t={step.at.t}: rebuilt from the "
                            "conversation so far")
        self.answer_from_request(messages, step.at)
        users = [m for m in messages if m.role == "user"]
        if self.last_llm is None and not self.users and len(users) > 1:
            self.users = len(users) - 1  # the first request's earlier users are history (another trace's turns)
        for message in users[self.users:]:
            self.recorder.turn_start(message, turn=self.users, t=step.at.t, provenance=RECONSTRUCTED,
                                     corr=step.at.corr)
            self.users += 1
        common: dict[str, Any] = {"api": step.api, "model": step.model, "tools": step.tools,
                                  "params": step.params}
        if step.response is None:
            self.recorder.llm_error(messages, message=step.error or "no output recorded", **common,
                                    **self.fields(step.at))
            self.conv.adopt(messages)
            return
        response = LLMResponse(message=step.response, finish_reason=step.finish_reason, usage=step.usage,
                               model=step.model, response_id=step.response_id)
        event = self.recorder.llm_call(messages, response, **common, **self.fields(step.at))
        self.last_llm = event.id
        self.last_answer = step.response
        self.conv.adopt(messages)
        self.conv.add(step.response)
        self.pending = [(c.id, c.name, c.arguments) for c in step.response.tool_calls]

    def answer_from_request(self, messages: list[Message], at: Timing) -> None:
        """Calls the model asked for that no tool step answered: the request that follows shows their
        results, so they become tool calls read from it."""
        if not self.pending:
            return
        results = {p.tool_call_id: p for m in messages if m.role == "tool" for p in m.tool_results}
        for call_id, name, arguments in self.pending:
            part = results.get(call_id)
            if part is None:
                self.losses.add("tool results", f"call {call_id} ({name}): the model asked for it, no step "
                                "or later request holds its result")
                continue
            self.recorder.tool_call(call_id, name, arguments, result=part.content, status="error" if
                                    part.is_error else "ok", llm_call_id=self.last_llm, t=at.t,
                                    provenance=RECONSTRUCTED, corr=Correlation(tool_call_id=call_id))
            self.from_request += 1
        self.pending = []

    # -------------------------------------------------------------------------------------- tools

    def tool(self, step: ToolStep) -> None:
        ids = [p[0] for p in self.pending]
        call_id = step.call_id if step.call_id in ids else None
        if call_id is None and step.call_id is None:
            call_id = next((i for i, n, _ in self.pending if n == step.name), None)
        asked = next((p for p in self.pending if p[0] == call_id), None)
        if call_id is None:
            call_id = step.call_id or (step.at.corr.api_request_id if step.at.corr else None) or \
                f"{self.platform}-tool-{len(self.recorder.events)}"
            if self.last_llm is not None:
                self.notes.append(f"tool step {step.name!r} ({call_id}) answers no call the model made: "
                                  "kept as a tool call of its own")
        details = dict(step.at.details or {})
        mine = dict(details.get(self.platform) or {})
        arguments = step.arguments
        if asked is not None:  # the call as the model made it is what replay matches; the tool's own view is kept
            if step.arguments is not None and step.arguments != asked[2]:
                mine["tool_input"] = step.arguments
            arguments = asked[2]
        corr = step.at.corr.model_copy(update={"tool_call_id": call_id}) if step.at.corr else \
            Correlation(tool_call_id=call_id)
        result, status = step.result, step.status
        shown = self.seen.get(call_id)
        if status == "error":
            # The platform says the tool failed; a Chat tool message has no error flag, so the requests
            # that follow carry the failure as plain text. It is the same message: mark it failed there
            # too (the wire bytes do not change), so the failed step replays as the request shows it.
            for part in self.shown.get(call_id, ()):
                part.is_error = True
        if shown is not None and (shown.content != (result or "") or shown.is_error != (status == "error")):
            # The model saw the request's version: replay serves that; the step's own output is kept.
            mine.update({"tool_output": result, "tool_status": status})
            result, status = shown.content, "error" if shown.is_error else "ok"
            self.rewritten += 1
        if mine:
            details[self.platform] = mine
        fields = {**self.fields(step.at), "corr": corr, "provider_details": details or None}
        self.recorder.tool_call(call_id, step.name, arguments, result=result, status=status,
                                error=step.error, llm_call_id=self.last_llm, **fields)
        self.conv.tool_result(call_id, step.name, result or "", is_error=status == "error")
        self.pending = [p for p in self.pending if p[0] != call_id]

    # ---------------------------------------------------------------------------------------- end

    def finish(self, end: RunEnd) -> None:
        if self.pending:
            for call_id, name, _ in self.pending:
                self.losses.add("tool results", f"call {call_id} ({name}): the model asked for it, the record "
                                "ends before its result")
        if self.from_request:
            self.notes.append(f"{self.from_request} tool call(s) had no tool step: their results were read "
                              "from the request that followed")
        if self.rewritten:
            self.notes.append(f"{self.rewritten} tool result(s) differ from what the next request shows: the "
                              "request's text is served, the tool step's output kept in provider_details")
        final = end.final_answer
        if final is None and self.last_answer is not None and not self.last_answer.tool_calls:
            final = self.last_answer.text
        if not self.recorder.events:
            return
        self.recorder.run_end(final, status=end.status, reason=end.reason, t=self.end_t,
                             provenance=RECONSTRUCTED)


def session_lineage(session_id: str, run_id: str, sessions: dict[str, list[str]], platform: str) -> Lineage | None:
    """A run after the first of its session descends from the run before it (``relation: import``): the
    lineage ``runs`` and the viewer show, so the traces of one conversation read as one chain."""
    ids = sessions.get(session_id, [run_id])
    position = ids.index(run_id) if run_id in ids else 0
    if position == 0:
        return None
    return Lineage(relation="import", parent_run_id=ids[position - 1],
                   details={"link": "session", "session_id": session_id, "position": position, "source": platform})


def session_links(session_id: str, run_id: str, sessions: dict[str, list[str]]) -> dict[str, Any]:
    """How a run sits among the runs of its session (Langfuse session, LangSmith thread), in start
    order: kept in the run header's metadata so each run names its neighbours."""
    ids = sessions.get(session_id, [run_id])
    position = ids.index(run_id)
    return {"id": session_id, "position": position, "run_ids": ids,
            "previous_run_id": ids[position - 1] if position else None,
            "next_run_id": ids[position + 1] if position + 1 < len(ids) else None}
