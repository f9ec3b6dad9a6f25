"""A run's messages read through the one bridge rule (``bridge.py``): each bridged tool call (Hermes 0.22's
Tool Search ``tool_call``) as the underlying call, and the name on its result as the underlying tool.

Kept apart from ``bridge.py``, which is embedded verbatim in generated code and so imports nothing of
replaykit. Used where a bridged call and its direct equivalent must read alike: a port's view of its
recordings (``exporters/port``), ``diff``, and a play on an engine that cannot take a bridged call as made
(``ReplayCursor(unbridge=True)``: Hermes 0.19.0 playing a Hermes 0.22 Tool Search recording), which serves
each one as its underlying call (``unbridged_response``) and matches requests in that view.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from replaykit.core.trace.bridge import BRIDGE_TOOL_NAMES, underlying_call
from replaykit.core.trace.canonical import parsed_arguments
from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    ToolCallEvent,
    ToolCallPart,
    ToolResultPart,
    UnderlyingCall,
)
from replaykit.core.trace.run import Run

Recorded = Mapping[str, "UnderlyingCall | None"]


def recorded_underlying(run: Run) -> dict[str, UnderlyingCall | None]:
    """The ``underlying`` the recorder wrote beside each tool call, by call id. A call id with several
    tool events (a batched ``tool_call`` whose entries Hermes ran one by one) maps to None: no one
    underlying call stands for it, so the rule reads its arguments (a batch stays as made)."""
    out: dict[str, UnderlyingCall | None] = {}
    for event in run.events:
        if isinstance(event, ToolCallEvent):
            out[event.call_id] = None if event.call_id in out else event.underlying
    return out


def part_underlying(part: ToolCallPart, recorded: Recorded | None = None) -> tuple[str, Any]:
    """The ``(name, parsed arguments)`` of the tool a tool call part really invokes."""
    return underlying_call(part.name, parsed_arguments(part.arguments, part.raw_arguments),
                           recorded=(recorded or {}).get(part.id))


def underlying_message(message: Message, recorded: Recorded) -> Message:
    """The message with each bridged tool call (and the name on its result) rewritten to the underlying
    call; the message itself when it holds none."""
    parts: list[Any] = []
    changed = False
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            name, arguments = part_underlying(part, recorded)
            if name != part.name:
                part = part.model_copy(update={"name": name, "arguments": arguments, "raw_arguments": None})
                changed = True
        elif isinstance(part, ToolResultPart) and part.name in BRIDGE_TOOL_NAMES:
            call = recorded.get(part.tool_call_id)
            if call is not None and call.name:
                part = part.model_copy(update={"name": call.name})
                changed = True
        parts.append(part)
    return message.model_copy(update={"parts": parts}) if changed else message


def underlying_messages(messages: Iterable[Message], recorded: Recorded) -> list[Message]:
    return [underlying_message(m, recorded) for m in messages]


def unbridged_response(response: LLMResponse, recorded: Recorded) -> LLMResponse:
    """``response`` with each bridged tool call rewritten to the underlying call (the response itself
    when it asks for none): what an engine that cannot bridge is served. The call keeps its id, so the
    tool step that answers it is found as before; a batch of several calls in one ``tool_call`` has no
    one underlying call and stays as made."""
    message = underlying_message(response.message, recorded)
    return response if message is response.message else response.model_copy(update={"message": message})


def unbridged_calls(run: Run) -> int:
    """How many of ``run``'s model tool calls ``unbridged_response`` rewrites (0: a play that unbridges
    serves this run exactly as made)."""
    recorded = recorded_underlying(run)
    return sum(part_underlying(part, recorded)[0] != part.name
               for event in run.llm_calls() for part in event.response.message.tool_calls)
