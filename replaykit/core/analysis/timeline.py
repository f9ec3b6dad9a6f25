"""A run's timeline as plain rows: what ``inspect`` prints, the HTML report and the viewer render.

Every row has a one-line ``summary`` for people and structured fields for programs (``inspect --json``):
tool steps carry ``tool``, ``call_id``, ``arguments`` and ``status``; LLM steps ``finish_reason``,
``tool_calls`` (id, name), ``usage`` and ``model``; a subagent row its ``child_run_id``. Every row has
its ``provenance``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from replaykit.core.replay.replay_doc import clip_text, opaque_summary
from replaykit.core.trace.bridge import event_underlying
from replaykit.core.trace.canonical import dumps_compact, parsed_arguments

if TYPE_CHECKING:  # the IR is not imported at run time: the streaming ``inspect`` never loads pydantic
    from replaykit.core.trace.ir import Event
    from replaykit.core.trace.run import Run

STEP_KINDS = frozenset(("llm_call", "tool_call"))
BOOKKEEPING_KINDS = frozenset(("tools", "meta"))
# What a timeline reads of a request: its model. The delta-encoded messages are left out of the data.
_EVENT_DATA_EXCLUDE = {"request": {"context"}}
_NOT_DESCRIBED = {"request": True, "corr": True, "provider_details": True, "result_blocks": True,
                  "response": {"usage": True, "provider_details": True,
                               "message": {"provider_details": True, "parts": {"__all__": {"provider_details"}}}}}
# ``json.dumps(..., ensure_ascii=False, default=str)`` without building an encoder per tool call
_ARGUMENTS_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def _clip(text: str | None, limit: int = 120) -> str:
    return clip_text(text, limit)


def event_data(event: Event) -> dict[str, Any]:
    """An event as the timeline reads it: the JSON of its trace line (request messages left out)."""
    from replaykit.core.trace import jsonsafe

    data: dict[str, Any] = jsonsafe.model_data(event, exclude_none=True, exclude=_EVENT_DATA_EXCLUDE)
    return data


def _message_text(message: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in message.get("parts", ()) if p.get("type") == "text")


def _tool_call_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message.get("parts", ()) if p.get("type") == "tool_call"]


def _arguments_json(call: dict[str, Any]) -> str:
    """A tool call part's arguments as the provider sent them (``ToolCallPart.arguments_json``)."""
    raw = call.get("raw_arguments")
    if raw is not None:
        return str(raw)
    arguments = call.get("arguments")
    return dumps_compact({} if arguments is None else arguments)


def is_failed_step(event: dict[str, Any]) -> bool:
    """A step that failed: a tool error, an LLM call that finished with an error (``Step.failed``)."""
    if event["kind"] == "tool_call":
        return bool(event.get("status") == "error")
    return event["response"].get("finish_reason") in ("error", "content_filter")


def describe_data(event: dict[str, Any]) -> str:
    """A one-line human summary of an event given as the JSON of its trace line (defaults may be absent)."""
    kind = event["kind"]
    if kind == "llm_call":
        message = event["response"]["message"]
        calls = _tool_call_parts(message)
        if calls:
            names = ", ".join(f"{c['name']}({_clip(_arguments_json(c), 60)})" for c in calls)
            return f"model -> {names}"
        return f"model: {_clip(_message_text(message))!s}"
    if kind == "tool_call":
        error = event.get("error")
        outcome = error if event.get("status") == "error" and error else event.get("result")
        name, arguments = event_underlying(event)
        if name != event["name"]:  # a bridged call (Tool Search): the tool that ran, then how it was asked
            return f"{name}({_clip(_ARGUMENTS_ENCODER.encode(arguments), 60)}) via {event['name']} -> {_clip(outcome, 80)}"
        shown = event.get("raw_arguments")
        if shown is None and event.get("arguments") is not None:
            shown = _ARGUMENTS_ENCODER.encode(event["arguments"])
        args = _clip(shown, 60)
        return f"{event['name']}({args}) -> {_clip(outcome, 80)}"
    if kind == "error":
        code = f" {event['status_code']}" if event.get("status_code") else ""
        attempt = f" attempt {event['attempt']}" if event.get("attempt") else ""
        return f"{event.get('where', 'llm')} error{code}{attempt}: {_clip(event.get('message', ''), 100)}"
    if kind == "turn_start":
        return f"user: {_clip(_message_text(event['message']))}"
    if kind in ("turn_end", "run_end"):
        return f"{kind} {event.get('status', 'completed')}: {_clip(event.get('final_answer') or event.get('reason') or '')}"
    if kind == "subagent":
        child = event.get("child_run_id") or event.get("child_session_id") or ""
        return f"subagent {event['phase']} {child} {_clip(event.get('goal') or event.get('summary') or '', 80)}"
    if kind in ("desync", "synthetic"):
        return f"{kind} at step {event['step']}: {_clip(event.get('reason', ''))}"
    if kind == "tools":
        tools = event["tools"]
        return f"{len(tools)} tools declared: {_clip(', '.join(t['name'] for t in tools), 100)}"
    if kind == "meta":
        return "meta: " + _clip(", ".join(sorted(event["data"])), 100)
    if kind == "opaque":
        data = event.get("data")
        if event["name"] == "auxiliary_call" and isinstance(data, dict):
            # An LLM call outside the agent loop (Hermes 0.22: titles, compression, vision): not a step.
            answer = data.get("error") or _auxiliary_answer(data.get("response"))
            return f"auxiliary {data.get('task') or 'call'} ({event['source']}): {_clip(str(answer or ''), 100)}"
        return opaque_summary(event)
    return str(kind)


def _auxiliary_answer(response: Any) -> Any:
    message = response.get("assistant_message") if isinstance(response, dict) else None
    return message.get("content") if isinstance(message, dict) else None


def describe(event: Event) -> str:
    """A one-line human summary of an event (a loaded one: dumped without what no summary reads)."""
    from replaykit.core.trace import jsonsafe

    return describe_data(jsonsafe.model_data(event, exclude_none=True, exclude=_NOT_DESCRIBED))


def entry_fields(event: dict[str, Any]) -> dict[str, Any]:
    """The structured fields of one timeline entry (beside its summary), from the event's JSON."""
    kind = event["kind"]
    if kind == "tool_call":
        return {"tool": event["name"], "call_id": event["call_id"],
                "arguments": parsed_arguments(event.get("arguments"), event.get("raw_arguments")),
                "error": event.get("error")}
    if kind == "llm_call":
        response = event["response"]
        usage = response.get("usage")
        return {
            "model": response.get("model") or event["request"].get("model"),
            "finish_reason": response.get("finish_reason"),
            "tool_calls": [{"id": c["id"], "name": c["name"]} for c in _tool_call_parts(response["message"])],
            "usage": None if usage is None else {k: v for k, v in usage.items() if v is not None},
        }
    if kind == "subagent":
        return {"child_run_id": event.get("child_run_id"), "phase": event["phase"]}
    if kind in ("desync", "synthetic"):
        return {"at_step": event["step"]}
    if kind == "opaque":
        corr = event.get("corr") or {}
        return {"source": event["source"], "name": event["name"], "source_id": corr.get("api_request_id")}
    return {}


def _status(event: dict[str, Any]) -> str:
    kind = event["kind"]
    if kind == "tool_call":
        return str(event.get("status", "ok"))
    if kind == "error":
        return "error"
    if kind == "llm_call":
        return str(event["response"].get("finish_reason") or "ok")
    if kind in ("turn_end", "run_end"):
        return str(event.get("status", "completed"))
    return "ok"


class Timeline:
    """Rows built one event at a time (the streaming ``inspect`` feeds it raw trace lines; a loaded
    ``Run`` its events' JSON): steps are numbered as they come, the first failed one is remembered, and
    only the rows kept (no bookkeeping unless asked), never the events."""

    def __init__(self, *, include_bookkeeping: bool = False, window: tuple[int, int] | None = None,
                 first_step: int = 0, first_row: int = 0) -> None:
        self.include_bookkeeping = include_bookkeeping
        #: keep only the rows numbered ``start <= n < stop`` (a page), counting every other one: memory is
        #: O(page), and rows outside it cost no summary
        self.window = window
        self.rows: list[dict[str, Any]] = []
        self.steps = first_step  # (``first_step``/``first_row``: a reader that starts mid-run)
        self.shown = first_row  # rows counted, kept or not
        self.failing_step: int | None = None

    def add(self, event: dict[str, Any]) -> None:
        kind = event["kind"]
        step: int | None = None
        if kind in STEP_KINDS:
            step = self.steps
            self.steps += 1
        if not self.include_bookkeeping and kind in BOOKKEEPING_KINDS:
            return
        number = self.shown
        self.shown += 1
        failing = step is not None and self.failing_step is None and is_failed_step(event)
        if failing:
            self.failing_step = step
        window = self.window
        if window is not None and not window[0] <= number < window[1]:
            return
        row = {
            "seq": event["seq"],
            "step": step,
            "kind": kind,
            "t": float(event.get("t", 0.0)),
            "duration": None if event.get("duration") is None else float(event["duration"]),
            "provenance": str(event.get("provenance", "recorded")),
            "status": _status(event),
            "summary": describe_data(event),
            "failing": failing,
            "event_id": event["id"],
            **entry_fields(event),
        }
        self.rows.append(row)


def timeline_rows(run: Run, *, include_bookkeeping: bool = False) -> list[dict[str, Any]]:
    """One row per event worth showing; steps carry their step number."""
    timeline = Timeline(include_bookkeeping=include_bookkeeping)
    for event in run.events:
        if include_bookkeeping or event.kind not in BOOKKEEPING_KINDS:  # (never steps: skipped undumped)
            timeline.add(event_data(event))
    return timeline.rows
