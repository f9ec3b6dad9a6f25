"""What a PydanticAI replay of a run needs, read once from the run: its LLM calls in order (with the
PydanticAI history each one was sent and the response to serve), how they group into agent runs, the
recorded tool results by call id, and the tool declarations.

An *agent run* (segment) is a stretch of LLM calls where each request is the previous request plus the
previous answer plus tool results, i.e. exactly what one ``Agent.run`` produces on its own. A new user
turn, or a request the agent loop would not have built by itself (context compression), starts a new
segment, replayed as a new ``Agent.run`` whose history is that request. Messages are compared as the
request fingerprint compares them (``canonical.same_message``): PydanticAI sends a recorded tool call back
as ``{"city":"Paris"}`` when the provider wrote ``{"city": "Paris"}``, and that is the same conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replaykit.core.trace.canonical import same_message
from replaykit.core.trace.ir import LLMCallEvent, Message, ToolCallEvent, ToolResultPart, ToolSpec
from replaykit.core.trace.run import Run
from replaykit.engines.pydantic_ai.messages import PydanticHistory, response_to_pydantic_ai, to_pydantic_ai


@dataclass
class PlannedCall:
    index: int  # position among the run's LLM calls
    step: int  # step number in the run
    event: LLMCallEvent
    request: list[Message]
    history: PydanticHistory  # the request as PydanticAI history
    response: Any  # ModelResponse to serve (deep-copied on every use)
    segment: int


@dataclass
class Segment:
    index: int
    first: int  # index of its first PlannedCall
    stop: int  # one past its last PlannedCall
    new_input: list[Message]  # messages added since the previous segment's conversation (a user turn)
    continues: bool  # True when the request extends the previous segment's conversation


@dataclass
class Plan:
    run: Run
    calls: list[PlannedCall]
    segments: list[Segment]
    tool_events: dict[str, ToolCallEvent]  # by tool call id (the recorded results)
    tool_steps: dict[str, int]  # tool call id -> step number
    tools: list[ToolSpec]
    api: str
    lost: list[str] = field(default_factory=list)

    def step_of_call(self, index: int) -> int:
        return self.calls[index].step


def _tool_messages(message_list: list[Message]) -> bool:
    """Only tool results: what the agent loop itself sends after running the tools. Chat Completions
    gives each result a ``tool`` message; Anthropic Messages carries them in a ``user`` message made of
    ``tool_result`` blocks, which is the same step of the loop, not a new user turn."""
    return all(m.role == "tool" or (m.role == "user" and m.parts and all(isinstance(p, ToolResultPart)
                                                                          for p in m.parts))
               for m in message_list)


def build_plan(run: Run) -> Plan:
    step_of = {s.event.id: s.index for s in run.steps}
    calls: list[PlannedCall] = []
    segments: list[Segment] = []
    previous: list[Message] | None = None
    memo: dict[Any, Any] = {}  # requests share their prefix: each message group is converted once
    for event in run.llm_calls():
        request = run.request_messages(event)
        history = to_pydantic_ai(request, memo)
        continues = False
        new_input = request
        if previous is not None and len(request) >= len(previous) and all(
                a is b or same_message(a, b) for a, b in zip(request, previous, strict=False)):
            continues = True
            new_input = request[len(previous):]
        if not calls or not (continues and new_input and _tool_messages(new_input)):
            segments.append(Segment(len(segments), len(calls), len(calls), list(new_input), continues))
        calls.append(PlannedCall(
            index=len(calls), step=step_of[event.id], event=event, request=request, history=history,
            response=response_to_pydantic_ai(event.response, provider_name=_provider(run)),
            segment=len(segments) - 1,
        ))
        segments[-1].stop = len(calls)
        previous = [*request, event.response.message]

    tool_events: dict[str, ToolCallEvent] = {}
    tool_steps: dict[str, int] = {}
    for tool_event in run.tool_calls():
        tool_events.setdefault(tool_event.call_id, tool_event)
        tool_steps.setdefault(tool_event.call_id, step_of[tool_event.id])

    lost: list[str] = []
    for call in calls:
        for line in call.history.lost:
            if line not in lost:
                lost.append(line)
    api = calls[0].event.request.api if calls else "openai-chat"
    return Plan(run, calls, segments, tool_events, tool_steps, _tool_specs(run), api, lost)


def _provider(run: Run) -> str | None:
    return run.header.provider


def _tool_specs(run: Run) -> list[ToolSpec]:
    """Every tool the run declared (latest declaration of a name wins), plus any tool the model called
    that was never declared (with an open schema), so the agent never rejects a recorded call."""
    by_name: dict[str, ToolSpec] = {}
    for event in run.llm_calls():
        for spec in run.request_tools(event.request) or []:
            by_name[spec.name] = spec
    for event in run.llm_calls():
        for part in event.response.message.tool_calls:
            if part.name not in by_name:
                by_name[part.name] = ToolSpec(name=part.name, parameters={"type": "object"},
                                              provider_details={"replaykit": "undeclared"})
    return list(by_name.values())
