"""A run's timeline as plain rows: what ``inspect`` prints, the HTML report and the viewer render.

Every row has a one-line ``summary`` for people and structured fields for programs (``inspect --json``):
tool steps carry ``tool``, ``call_id``, ``arguments`` and ``status``; LLM steps ``finish_reason``,
``tool_calls`` (id, name), ``usage`` and ``model``; a subagent row its ``child_run_id``. Every row has
its ``provenance``.
"""

from __future__ import annotations

import json
from typing import Any

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
from replaykit.core.run import Run


def _clip(text: str | None, limit: int = 120) -> str:
    if not text:
        return ""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe(event: Event) -> str:
    """A one-line human summary of an event."""
    if isinstance(event, LLMCallEvent):
        message = event.response.message
        calls = message.tool_calls
        if calls:
            names = ", ".join(f"{c.name}({_clip(c.arguments_json(), 60)})" for c in calls)
            return f"model -> {names}"
        return f"model: {_clip(message.text)!s}"
    if isinstance(event, ToolCallEvent):
        shown = event.raw_arguments
        if shown is None and event.arguments is not None:
            shown = json.dumps(event.arguments, ensure_ascii=False, default=str)
        args = _clip(shown, 60)
        outcome = event.error if event.status == "error" and event.error else event.result
        return f"{event.name}({args}) -> {_clip(outcome, 80)}"
    if isinstance(event, ErrorEvent):
        code = f" {event.status_code}" if event.status_code else ""
        attempt = f" attempt {event.attempt}" if event.attempt else ""
        return f"{event.where} error{code}{attempt}: {_clip(event.message, 100)}"
    if isinstance(event, TurnStartEvent):
        return f"user: {_clip(event.message.text)}"
    if isinstance(event, TurnEndEvent | RunEndEvent):
        return f"{event.kind} {event.status}: {_clip(event.final_answer or event.reason or '')}"
    if isinstance(event, SubagentEvent):
        return f"subagent {event.phase} {event.child_run_id or event.child_session_id or ''} {_clip(event.goal or event.summary or '', 80)}"
    if isinstance(event, DesyncEvent):
        return f"desync at step {event.step}: {_clip(event.reason)}"
    if isinstance(event, SyntheticEvent):
        return f"synthetic at step {event.step}: {_clip(event.reason)}"
    if isinstance(event, ToolsEvent):
        return f"{len(event.tools)} tools declared: {_clip(', '.join(t.name for t in event.tools), 100)}"
    if isinstance(event, MetaEvent):
        return "meta: " + _clip(", ".join(sorted(event.data)), 100)
    if isinstance(event, OpaqueEvent):
        return f"opaque {event.source}/{event.name}"
    return event.kind


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
            "usage": response.usage.model_dump(mode="json", exclude_none=True) if response.usage else None,
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
        if not include_bookkeeping and isinstance(event, ToolsEvent | MetaEvent):
            continue
        step = step_of.get(event.id)
        status = "ok"
        if isinstance(event, ToolCallEvent):
            status = event.status
        elif isinstance(event, ErrorEvent):
            status = "error"
        elif isinstance(event, LLMCallEvent):
            status = event.response.finish_reason or "ok"
        elif isinstance(event, TurnEndEvent | RunEndEvent):
            status = event.status
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
