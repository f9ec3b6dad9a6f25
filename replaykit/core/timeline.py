"""A run's timeline as plain rows: what ``inspect`` prints, the HTML report and the viewer render.

Every row has a one-line ``summary`` for people and structured fields for programs (``inspect --json``):
tool steps carry ``tool``, ``call_id``, ``arguments`` and ``status``; LLM steps ``finish_reason``,
``tool_calls`` (id, name), ``usage`` and ``model``; a subagent row its ``child_run_id``. Every row has
its ``provenance``.
"""

from __future__ import annotations

import json
from typing import Any, cast

from replaykit.core import jsonsafe
from replaykit.core.ir import (
    DesyncEvent,
    ErrorEvent,
    Event,
    LLMCallEvent,
    MetaEvent,
    OpaqueEvent,
    RunEndEvent,
    SubagentEvent,
    SyntheticEvent,
    ToolCallEvent,
    ToolsEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from replaykit.core.replay_doc import clip_text
from replaykit.core.run import Run


def _clip(text: str | None, limit: int = 120) -> str:
    return clip_text(text, limit)


def describe(event: Event) -> str:
    """A one-line human summary of an event."""
    # Dispatch on ``kind`` (a string): ``isinstance`` against pydantic models goes through ABCMeta and
    # costs microseconds per miss, which a 10,000-step timeline pays tens of thousands of times.
    kind = event.kind
    if kind == "llm_call":
        message = cast(LLMCallEvent, event).response.message
        calls = message.tool_calls
        if calls:
            names = ", ".join(f"{c.name}({_clip(c.arguments_json(), 60)})" for c in calls)
            return f"model -> {names}"
        return f"model: {_clip(message.text)!s}"
    if kind == "tool_call":
        tool = cast(ToolCallEvent, event)
        shown = tool.raw_arguments
        if shown is None and tool.arguments is not None:
            shown = json.dumps(tool.arguments, ensure_ascii=False, default=str)
        args = _clip(shown, 60)
        outcome = tool.error if tool.status == "error" and tool.error else tool.result
        return f"{tool.name}({args}) -> {_clip(outcome, 80)}"
    if kind == "error":
        error = cast(ErrorEvent, event)
        code = f" {error.status_code}" if error.status_code else ""
        attempt = f" attempt {error.attempt}" if error.attempt else ""
        return f"{error.where} error{code}{attempt}: {_clip(error.message, 100)}"
    if kind == "turn_start":
        return f"user: {_clip(cast(TurnStartEvent, event).message.text)}"
    if kind in ("turn_end", "run_end"):
        end = cast(TurnEndEvent | RunEndEvent, event)
        return f"{end.kind} {end.status}: {_clip(end.final_answer or end.reason or '')}"
    if kind == "subagent":
        sub = cast(SubagentEvent, event)
        return f"subagent {sub.phase} {sub.child_run_id or sub.child_session_id or ''} {_clip(sub.goal or sub.summary or '', 80)}"
    if kind == "desync":
        desync = cast(DesyncEvent, event)
        return f"desync at step {desync.step}: {_clip(desync.reason)}"
    if kind == "synthetic":
        synthetic = cast(SyntheticEvent, event)
        return f"synthetic at step {synthetic.step}: {_clip(synthetic.reason)}"
    if kind == "tools":
        tools = cast(ToolsEvent, event)
        return f"{len(tools.tools)} tools declared: {_clip(', '.join(t.name for t in tools.tools), 100)}"
    if kind == "meta":
        return "meta: " + _clip(", ".join(sorted(cast(MetaEvent, event).data)), 100)
    if kind == "opaque":
        opaque = cast(OpaqueEvent, event)
        return f"opaque {opaque.source}/{opaque.name}"
    return str(kind)


def parsed_arguments(arguments: Any, raw: str | None = None) -> Any:
    """A tool call's arguments as data: the raw string parsed when it is JSON, else what was given."""
    if raw is not None:
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def entry_fields(event: Event) -> dict[str, Any]:
    """The structured fields of one timeline entry (beside its summary)."""
    if isinstance(event, ToolCallEvent):
        return {"tool": event.name, "call_id": event.call_id,
                "arguments": parsed_arguments(event.arguments, event.raw_arguments), "error": event.error}
    if isinstance(event, LLMCallEvent):
        response = event.response
        return {
            "model": response.model or event.request.model,
            "finish_reason": response.finish_reason,
            "tool_calls": [{"id": c.id, "name": c.name} for c in response.message.tool_calls],
            "usage": jsonsafe.model_data(response.usage, exclude_none=True) if response.usage else None,
        }
    if isinstance(event, SubagentEvent):
        return {"child_run_id": event.child_run_id, "phase": event.phase}
    if isinstance(event, DesyncEvent | SyntheticEvent):
        return {"at_step": event.step}
    return {}


def timeline_rows(run: Run, *, include_bookkeeping: bool = False) -> list[dict[str, Any]]:
    """One row per event worth showing; steps carry their step number."""
    step_of = {step.event.id: step.index for step in run.steps}
    failing = run.failing_step
    rows: list[dict[str, Any]] = []
    for event in run.events:
        kind = event.kind
        if not include_bookkeeping and kind in ("tools", "meta"):
            continue
        step = step_of.get(event.id)
        status = "ok"
        if kind == "tool_call":
            status = cast(ToolCallEvent, event).status
        elif kind == "error":
            status = "error"
        elif kind == "llm_call":
            status = cast(LLMCallEvent, event).response.finish_reason or "ok"
        elif kind in ("turn_end", "run_end"):
            status = cast(TurnEndEvent | RunEndEvent, event).status
        rows.append(
            {
                "seq": event.seq,
                "step": step,
                "kind": event.kind,
                "t": event.t,
                "duration": event.duration,
                "provenance": str(event.provenance),
                "status": status,
                "summary": describe(event),
                "failing": step is not None and step == failing,
                "event_id": event.id,
                **entry_fields(event),
            }
        )
    return rows
