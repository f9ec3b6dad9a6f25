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

from replaykit.core.trace.bridge import (
    BRIDGE_TOOL_NAME,
    BRIDGE_TOOL_NAMES,
    bridge_entries,
    event_underlying,
    underlying_call,
)
from replaykit.core.trace.canonical import arguments_key, parsed_arguments
from replaykit.core.trace.ir import (
    LLMCallEvent,
    LLMResponse,
    Message,
    ToolCallEvent,
    ToolCallPart,
    ToolResultPart,
    UnderlyingCall,
)
from replaykit.core.trace.run import Run

Recorded = Mapping[str, "UnderlyingCall | None"]


class RecordedCalls(dict[str, "UnderlyingCall | None"]):
    """The ``underlying`` the recorder wrote beside each tool call, by call id, and ``batches``: for each
    bridged call that batched several tools (``tool_call({"calls": [a, b, ...]})``), the ids its entries
    after the first ran under. Hermes 0.22 expands a batch into one bridged call per entry before running
    them (the first keeps the call's id, the others get new ones, and its history holds the expansion);
    the recorder writes the first entry as the call's ``underlying`` and the others as tool steps of the
    new ids."""

    batches: dict[str, list[str]]


def recorded_underlying(run: Run) -> RecordedCalls:
    """The recorded underlying calls of ``run`` (``RecordedCalls``). A call id with several tool events maps
    to None: no one underlying call stands for it, so the rule reads its arguments. A batch's other ids
    are the tool steps answering the same model response under ids it does not hold, matched to the
    entries by tool and arguments (else in order)."""
    out = RecordedCalls()
    out.batches = {}
    asked: set[str] = set()
    open_entries: list[tuple[str, str, str]] = []  # (batch call id, tool, arguments key) not yet matched
    for event in run.events:
        if isinstance(event, LLMCallEvent):
            calls = event.response.message.tool_calls
            asked = {c.id for c in calls}
            open_entries = []
            for call in calls:
                if call.name != BRIDGE_TOOL_NAME:  # (no arguments parsed for any other call)
                    continue
                entries = bridge_entries(call.name, parsed_arguments(call.arguments, call.raw_arguments)) or []
                if len(entries) > 1:
                    out.batches[call.id] = []
                    open_entries += [(call.id, name, arguments_key(args)) for name, args in entries[1:]]
        elif isinstance(event, ToolCallEvent):
            out[event.call_id] = None if event.call_id in out else event.underlying
            if event.call_id not in asked and open_entries:
                name, arguments = event_underlying(event)
                key = arguments_key(arguments)
                match = next((e for e in open_entries if e[1] == name and e[2] == key), open_entries[0])
                open_entries.remove(match)
                out.batches[match[0]].append(event.call_id)
    return out


def _batch_parts(part: ToolCallPart, recorded: Recorded) -> list[ToolCallPart] | None:
    """A batched bridge call as one underlying call per entry, under the ids Hermes ran them with
    (``RecordedCalls.batches``); None for anything else, and for a batch the record does not show run
    entry by entry under ids of their own (it stays as made)."""
    if part.name != BRIDGE_TOOL_NAME:
        return None
    entries = bridge_entries(part.name, parsed_arguments(part.arguments, part.raw_arguments))
    if entries is None or len(entries) < 2:
        return None
    ids = [part.id, *getattr(recorded, "batches", {}).get(part.id, [])]
    if len(ids) != len(entries):
        return None
    return [part.model_copy(update={"id": call_id, "name": name, "arguments": arguments, "raw_arguments": None})
            for call_id, (name, arguments) in zip(ids, entries, strict=True)]


def part_underlying(part: ToolCallPart, recorded: Recorded | None = None) -> tuple[str, Any]:
    """The ``(name, parsed arguments)`` of the tool a tool call part really invokes. A batch of several
    tools in one bridged call invokes no one tool: it is returned as made (whatever the recorder wrote
    beside it, which names the first entry; ``underlying_message`` expands the batch where it can)."""
    arguments = parsed_arguments(part.arguments, part.raw_arguments)
    entries = bridge_entries(part.name, arguments)
    if entries is not None and len(entries) > 1:
        return part.name, arguments
    return underlying_call(part.name, arguments, recorded=(recorded or {}).get(part.id))


def underlying_message(message: Message, recorded: Recorded) -> Message:
    """The message with each bridged tool call (and the name on its result) rewritten to the underlying
    call, a batch to one call per entry (``RecordedCalls``); the message itself when it holds none."""
    parts: list[Any] = []
    changed = False
    for part in message.parts:
        if isinstance(part, ToolCallPart) and (batch := _batch_parts(part, recorded)) is not None:
            parts += batch
            changed = True
            continue
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
    tool step that answers it is found as before; a batch becomes one call per entry, under the ids the
    record ran them with (``RecordedCalls``)."""
    message = underlying_message(response.message, recorded)
    return response if message is response.message else response.model_copy(update={"message": message})


def expanded_response(response: LLMResponse, recorded: Recorded) -> LLMResponse:
    """``response`` with each batch Hermes ran entry by entry replaced by the bridged calls Hermes 0.22
    expanded it into (``tool_call({"calls": [entry]})`` per entry, under the ids they ran with:
    ``RecordedCalls``), as Hermes's own history, and so the record's next request, holds them; the
    response itself when it holds no such batch. What the cursor serves: an engine then asks for each tool
    step the record holds, and its history is the record's."""
    parts: list[Any] = []
    changed = False
    for part in response.message.parts:
        batch = _batch_parts(part, recorded) if isinstance(part, ToolCallPart) else None
        if batch is None:
            parts.append(part)
            continue
        parts += [call.model_copy(update={"name": BRIDGE_TOOL_NAME, "raw_arguments": None, "arguments": {
            "calls": [{"name": call.name, "arguments": call.arguments}]}}) for call in batch]
        changed = True
    if not changed:
        return response
    return response.model_copy(update={"message": response.message.model_copy(update={"parts": parts})})


def unbridged_calls(run: Run) -> int:
    """How many of ``run``'s model tool calls ``unbridged_response`` rewrites (0: a play that unbridges
    serves this run exactly as made)."""
    recorded = recorded_underlying(run)
    return sum(_batch_parts(part, recorded) is not None or part_underlying(part, recorded)[0] != part.name
               for event in run.llm_calls() for part in event.response.message.tool_calls)
