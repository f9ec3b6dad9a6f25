"""Branching: a new run holding a parent's served prefix and one edited step.

``branch(store, parent, at, args=... | result=... | response=...)`` copies every event before step
``at`` (steps re-marked ``served``, ids kept so request deltas stay valid), then appends the edited step
(provenance ``edited``). The header names the parent, the step and the ``Edit``; ``lineage.details``
holds ``live_from``, the step where a later ``play`` goes live: right after the edited step, or *at* it
for an argument edit (the edited call has no result yet: it must run). The parent file is only read.
"""

from __future__ import annotations

import json
from typing import Any

from replaykit.core.errors import BadInput
from replaykit.core.trace.canonical import dumps_compact
from replaykit.core.trace.ir import (
    Edit,
    Event,
    Lineage,
    LLMCallEvent,
    LLMResponse,
    Message,
    Provenance,
    TextPart,
    ToolCallEvent,
    ToolCallPart,
)
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore, new_run_id, utc_now_iso


def parse_json_arg(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise BadInput(f"{what} is not valid JSON: {exc}") from exc


def edit_text(value: Any) -> str | None:
    """An edit given as any JSON value (MCP, Python callers) in the command line's text form: a string is
    taken as is (JSON text for ``args``, the result or the answer text otherwise), anything else is
    written as JSON text (an object result becomes the JSON a tool would have returned; a list of tool
    calls becomes ``--response``'s JSON form). ``None`` stays ``None`` (no such edit)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def parse_response(text: str) -> Message:
    """``--response``: plain text, or tool calls as JSON: a list of ``{"name", "arguments", "id"?}``
    (OpenAI ``{"function": {...}}`` items too), or ``{"content": "...", "tool_calls": [...]}``."""
    stripped = text.strip()
    data: Any = None
    if stripped[:1] in ("[", "{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
    calls: list[Any] | None = None
    content = text
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        calls, content = data, ""
    elif isinstance(data, dict) and isinstance(data.get("tool_calls"), list):
        calls, content = data["tool_calls"], str(data.get("content") or "")
    parts: list[Any] = [TextPart(text=content)] if content.strip() else []
    for index, item in enumerate(calls or []):
        if not isinstance(item, dict):
            raise BadInput(f"--response tool call {index} is not a JSON object")
        nested = item.get("function")
        function: dict[str, Any] = nested if isinstance(nested, dict) else item
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise BadInput(f"--response tool call {index} has no name")
        arguments = function.get("arguments", {})
        if isinstance(arguments, str):
            arguments = parse_json_arg(arguments, f"--response tool call {index} arguments")
        given_id = item.get("id")
        call_id = given_id if isinstance(given_id, str) and given_id else f"call_edit_{index}"
        parts.append(ToolCallPart(id=call_id, name=name, arguments=arguments, raw_arguments=dumps_compact(arguments)))
    if not parts:
        raise BadInput("--response is empty: give the answer text or tool calls as JSON")
    return Message(role="assistant", parts=parts)


def _edited_event(step_event: Event, seq: int, edit: Edit) -> Event:
    base: dict[str, Any] = {"seq": seq, "id": f"e{seq}-edited", "provenance": Provenance.EDITED,
                            "duration": 0.0}
    if edit.target == "response":
        assert isinstance(step_event, LLMCallEvent)
        message = edit.value if isinstance(edit.value, Message) else parse_response(str(edit.value))
        response = LLMResponse(message=message, finish_reason="tool_calls" if message.tool_calls else "stop",
                               model=step_event.response.model)
        return step_event.model_copy(update={**base, "response": response})
    assert isinstance(step_event, ToolCallEvent)
    if edit.target == "args":
        return step_event.model_copy(update={
            **base, "arguments": edit.value, "raw_arguments": dumps_compact(edit.value), "result": None,
            "result_blocks": None, "status": "ok", "error": None,
        })
    return step_event.model_copy(update={
        **base, "result": str(edit.value), "result_blocks": None, "status": "ok", "error": None,
    })


def make_edit(parent: Run, at: int, *, args: str | None = None, result: str | None = None,
              response: str | None = None) -> tuple[Edit, Message | None]:
    """Validate the one edit against step ``at`` of ``parent``."""
    given = [name for name, value in (("--args", args), ("--result", result), ("--response", response))
             if value is not None]
    if len(given) != 1:
        raise BadInput("give exactly one edit: --args JSON, --result TEXT or --response TEXT")
    event = parent.step(at).event
    if args is not None or result is not None:
        if not isinstance(event, ToolCallEvent):
            raise BadInput(f"step {at} is an LLM step; {given[0]} edits a tool step (use --response to change "
                           "the model's answer)")
        if args is not None:
            return Edit(target="args", step=at, value=parse_json_arg(args, "--args"),
                        tool_call_id=event.call_id), None
        return Edit(target="result", step=at, value=result, tool_call_id=event.call_id), None
    if not isinstance(event, LLMCallEvent):
        raise BadInput(f"step {at} is a tool step; --response edits an LLM step (use --args or --result)")
    assert response is not None
    message = parse_response(response)
    return Edit(target="response", step=at, value=response), message


def branch(store: RunStore, parent: Run, at: int, *, args: str | None = None, result: str | None = None,
           response: str | None = None, run_id: str | None = None) -> Run:
    """Create the branch run in ``store`` and return it (loaded back from its file)."""
    edit, message = make_edit(parent, at, args=args, result=result, response=response)
    step_event = parent.step(at).event
    position = next(i for i, e in enumerate(parent.events) if e.id == step_event.id)
    prefix: list[Event] = []
    for event in parent.events[:position]:
        if isinstance(event, (LLMCallEvent, ToolCallEvent)) and event.provenance != Provenance.EDITED:
            event = event.model_copy(update={"provenance": Provenance.SERVED})
        prefix.append(event)
    next_seq = max((e.seq for e in prefix), default=-1) + 1
    edited = _edited_event(step_event, next_seq,
                           edit if message is None else edit.model_copy(update={"value": message}))
    live_from = at if edit.target == "args" else at + 1
    header = parent.header.model_copy(update={
        "run_id": run_id or new_run_id("branch"),
        "created_at": utc_now_iso(),
        "title": f"branch of {parent.run_id} at step {at} ({edit.target})",
        "lineage": Lineage(relation="branch", parent_run_id=parent.run_id, parent_step=at,
                           parent_event_id=step_event.id, edit=edit, details={"live_from": live_from}),
    })
    path = store.write_run(header, [*prefix, edited])
    return Run.load(path)
