"""The replay document: a pure, stdlib-only function of a run's header and events as plain JSON.

This module imports nothing but the standard library, ``replaykit.core.trace.canonical`` and ``replaykit.core.replay.serve`` (stdlib-only too:
the delta resolver and the recorded tool message), so generated code embeds the three modules
(``canonical``, ``serve``, this one) verbatim and computes the *identical* document from the same data. Only ``replay_duration`` and every ``t_replay`` depend on the
wall clock; every other field is a function of the input alone.

Input: ``header`` is the run header and ``events`` the run's events, each as
``model_dump(mode="json", exclude_none=True)`` of the IR models (which is exactly a trace file line
written by replaykit). The schema of the output is documented in ``docs/replay.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from replaykit.core.trace.canonical import dumps_compact
from replaykit.core.trace.deltas import resolve_delta_chain, tool_message

DOCUMENT_VERSION = 1
STEP_KINDS = ("llm_call", "tool_call")


class RangeError(ValueError):
    """``--from`` / ``--to`` outside the run's steps (the caller maps it to a one-line error)."""


def clip_text(text: Any, limit: int = 120) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``limit`` characters with an ellipsis.
    Looks at no more of the text than it needs (a tool result can be megabytes)."""
    if not text:
        return ""
    text = str(text)
    head = text[: limit * 2]
    flat = " ".join(head.split())
    if len(head) < len(text):  # more follows: it decides only when the head collapsed below the limit
        if len(flat) > limit:
            return flat[: limit - 1] + "…"
        flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_clip = clip_text


def _args_text(call: dict[str, Any]) -> str:
    raw = call.get("raw_arguments")
    if raw is not None:
        return str(raw)
    args = call.get("arguments")
    return "" if args is None else dumps_compact(args)


def _message_text(message: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in message.get("parts", ()) if p.get("type") == "text")


def _tool_calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message.get("parts", ()) if p.get("type") == "tool_call"]


def step_summary(event: dict[str, Any]) -> str:
    """One-line human summary of a step event (the wording of ``replaykit inspect``)."""
    if event["kind"] == "llm_call":
        message = event["response"]["message"]
        calls = _tool_calls(message)
        if calls:
            return "model -> " + ", ".join(f"{c['name']}({_clip(_args_text(c), 60)})" for c in calls)
        return f"model: {_clip(_message_text(message))}"
    outcome = event.get("error") if event.get("status") == "error" and event.get("error") else event.get("result")
    return f"{event['name']}({_clip(_args_text(event), 60)}) -> {_clip(outcome, 80)}"


def opaque_summary(event: dict[str, Any]) -> str:
    """One-line summary of an ``opaque`` event (data replaykit keeps but does not model: a Langfuse EVENT
    or guardrail, an Inspect AI score, an OTel span): its source and kind, then what the data names
    itself and a clipped view of the rest, so a reader sees what it is without opening the trace."""
    data = event.get("data")
    label = ""
    rest: Any = data
    if isinstance(data, dict):
        named = data.get("name") or data.get("event") or data.get("type")
        label = f" {_clip(named, 60)}" if isinstance(named, str) and named != event.get("name") else ""
        rest = {k: v for k, v in data.items() if k not in ("name", "event", "type") and v not in (None, "", [], {})}
    shown = rest if isinstance(rest, str) else (dumps_compact(_preview(rest)) if rest not in (None, {}, []) else "")
    tail = f": {_clip(shown, 100)}" if shown else ""
    return f"opaque {event.get('source')}/{event.get('name')}{label}{tail}"


def _preview(value: Any, depth: int = 0) -> Any:
    """A small copy of ``value`` for a one-line summary: a few keys and items, short strings, three
    levels (an opaque event's data can be megabytes: a summary never serializes all of it)."""
    if isinstance(value, str):
        return value[:120]
    if depth >= 3:
        return "…" if isinstance(value, dict | list) else value
    if isinstance(value, dict):
        return {k: _preview(v, depth + 1) for k, v in list(value.items())[:6]}
    if isinstance(value, list):
        return [_preview(v, depth + 1) for v in value[:4]]
    return value


def _add_usage(totals: dict[str, int], usage: dict[str, Any] | None) -> None:
    if not usage:
        return
    for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                "reasoning_tokens", "total_tokens"):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            totals[key] = totals.get(key, 0) + value


def _step_cost(event: dict[str, Any]) -> float | None:
    """A recorded cost of one LLM call in USD, if the source recorded one."""
    for holder in ((event["response"].get("usage") or {}).get("details"), event["response"].get("provider_details"),
                   event.get("provider_details")):
        if isinstance(holder, dict):
            for key in ("cost_usd", "cost"):
                value = holder.get(key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    return float(value)
    return None


def resolve_range(step_count: int, start: int | None, stop: int | None) -> tuple[int, int]:
    """Validate ``--from``/``--to`` (inclusive) against a run with ``step_count`` steps."""
    first = 0 if start is None else start
    last = step_count - 1 if stop is None else stop
    if step_count == 0:
        if start not in (None, 0) or stop is not None:
            raise RangeError("the run has no steps; --from/--to cannot be used")
        return 0, -1
    if not 0 <= first < step_count:
        raise RangeError(f"--from {first} out of range: the run has steps 0..{step_count - 1}")
    if not 0 <= last < step_count:
        raise RangeError(f"--to {last} out of range: the run has steps 0..{step_count - 1}")
    if first > last:
        raise RangeError(f"--from {first} is after --to {last}")
    return first, last


def build_replay_document(
    header: dict[str, Any],
    events: Sequence[dict[str, Any]],
    *,
    start: int | None = None,
    stop: int | None = None,
    trace_bytes_changed: int = 0,
    clock: Callable[[], float] | None = None,
    resolve_messages: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None,
    response_message: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    serve_llm: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Replay ``events`` (served from the record, nothing executed) and describe the result.

    ``start``/``stop`` are the inclusive step range (``--from``/``--to``); the conversation before
    ``start`` is kept as context. ``clock`` (default ``time.perf_counter``) only feeds ``t_replay`` and
    ``replay_duration``. ``resolve_messages(llm_event)`` may supply a request's full message list when
    the caller already has it (then ``request.context`` may be left out of the events); by default it
    is rebuilt from the delta chain. ``response_message(llm_event)`` may supply the whole answer message
    when the events carry a reduced copy (only ``type``/``text``/tool-call fields of its parts).
    ``serve_llm(llm_event)`` is called as each LLM step in the range is served, after its ``t_replay``
    (``replaykit replay --stream-timing``: a recorded stream is served frame by frame there).
    """
    now = clock or time.perf_counter
    t0 = now()
    step_positions = [i for i, e in enumerate(events) if e.get("kind") in STEP_KINDS]
    first, last = resolve_range(len(step_positions), start, stop)
    full = first == 0 and last == len(step_positions) - 1

    requests: dict[str, dict[str, Any]] = {}
    steps: list[dict[str, Any]] = []
    timing: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []  # the run's events that are not steps and not notes (opaque data)
    usage: dict[str, int] = {}
    cost: float | None = None
    served_llm = served_tool = 0
    last_llm: dict[str, Any] | None = None
    last_llm_pos = -1
    end_pos = step_positions[last] if step_positions else len(events) - 1
    if full:
        end_pos = len(events) - 1  # the whole run: its closing events (turn_end, run_end) count too
    begin_t = 0.0
    end_t = 0.0
    step_no = -1
    for pos in range(end_pos + 1):
        event = events[pos]
        kind = event.get("kind")
        if (kind in ("llm_call", "error") and event.get("request") is not None) or kind == "tool_call":
            requests[event["id"]] = event  # what delta bases and tool message references name
        if kind not in STEP_KINDS:
            upcoming = step_no + 1  # the step this bookkeeping event precedes
            if kind in ("desync", "synthetic") and first <= int(event.get("step", -1)) <= last:
                notes.append({"seq": event.get("seq"), "kind": kind, "step": event.get("step"),
                              "reason": event.get("reason", "")})
            elif kind == "error" and first <= upcoming and (upcoming <= last or full):
                notes.append({"seq": event.get("seq"), "kind": kind, "step": upcoming,
                              "reason": event.get("message", "")})
            elif kind == "opaque" and first <= upcoming and (upcoming <= last or full):
                # data of the run that is not a step (a guardrail check, a score, a span): listed, not dropped
                others.append({"seq": event.get("seq"), "kind": kind, "before_step": upcoming,
                               "source": event.get("source"), "name": event.get("name"),
                               "t_original": float(event.get("t", 0.0)), "summary": opaque_summary(event)})
            if step_no >= first:
                end_t = max(end_t, float(event.get("t", 0.0)) + float(event.get("duration") or 0.0))
            continue
        step_no += 1
        if kind == "llm_call":
            last_llm, last_llm_pos = event, pos
        if step_no < first:
            continue
        t_original = float(event.get("t", 0.0))
        duration = event.get("duration")
        if step_no == first:
            begin_t = 0.0 if first == 0 else t_original
        end_t = max(end_t, t_original + float(duration or 0.0))
        if kind == "llm_call":
            served_llm += 1
            response = event["response"]
            name = event["request"].get("model") or response.get("model") or header.get("model")
            status = response.get("finish_reason") or "ok"
            call_id = None
            _add_usage(usage, response.get("usage"))
            step_cost = _step_cost(event)
            if step_cost is not None:
                cost = (cost or 0.0) + step_cost
        else:
            served_tool += 1
            name = event.get("name")
            status = event.get("status", "ok")
            call_id = event.get("call_id")
        t_replay = round(now() - t0, 6)
        steps.append({
            "step": step_no,
            "kind": "llm" if kind == "llm_call" else "tool",
            "provenance": "served",
            "recorded_provenance": event.get("provenance", "recorded"),
            "name": name,
            "tool_call_id": call_id,
            "status": status,
            "t_original": t_original,
            "duration_original": duration,
            "t_replay": t_replay,
            "summary": step_summary(event),
        })
        timing.append({"step": step_no, "t_original": t_original, "duration_original": duration,
                       "t_replay": t_replay})
        if serve_llm is not None and kind == "llm_call":
            serve_llm(event)

    resolve = resolve_messages or (lambda event: resolve_delta_chain(event, requests))
    answer = response_message or (lambda event: event["response"]["message"])
    messages = _conversation(events, resolve, answer, last_llm, last_llm_pos, end_pos)
    final_answer = _final_answer(events, end_pos, full)
    return {
        "document": "replaykit.replay",
        "document_version": DOCUMENT_VERSION,
        "run_id": header.get("run_id"),
        "session_id": header.get("session_id"),
        "source_framework": (header.get("source") or {}).get("framework", "unknown"),
        "model": header.get("model") or _first_model(events),
        "provider": header.get("provider"),
        "mode": "replay",
        "range": {"from": first, "to": last},
        "step_count": len(step_positions),
        "counters": {
            "provider_calls": 0,
            "tool_executions": 0,
            "served_llm_steps": served_llm,
            "served_tool_steps": served_tool,
            "trace_bytes_changed": trace_bytes_changed,
        },
        "original_duration": round(max(0.0, end_t - begin_t), 6),
        "replay_duration": round(now() - t0, 6),
        "message_count": len(messages),
        "steps": steps,
        "messages": messages,
        "timing": timing,
        "notes": notes,
        "events": others,
        "usage": usage,
        "cost": None if cost is None else round(cost, 10),
        "final_answer": final_answer,
    }


def _first_model(events: Sequence[dict[str, Any]]) -> str | None:
    for event in events:
        if event.get("kind") == "llm_call":
            model = event["request"].get("model") or event["response"].get("model")
            if model:
                return str(model)
    return None


def _conversation(events: Sequence[dict[str, Any]], resolve: Callable[[dict[str, Any]], list[dict[str, Any]]],
                  answer: Callable[[dict[str, Any]], dict[str, Any]], last_llm: dict[str, Any] | None, last_llm_pos: int, end_pos: int) -> list[dict[str, Any]]:
    """The conversation as of the end of the range: the last request, its answer, then later tool
    results and user turns in recorded order."""
    messages: list[dict[str, Any]] = []
    if last_llm is not None:
        messages = list(resolve(last_llm))
        messages.append(answer(last_llm))
    for pos in range(last_llm_pos + 1, end_pos + 1):
        event = events[pos]
        kind = event.get("kind")
        if kind == "tool_call" and event.get("result") is not None:
            messages.append(tool_message(event))
        elif kind == "turn_start":
            messages.append(event["message"])
    return messages


def _final_answer(events: Sequence[dict[str, Any]], end_pos: int, full: bool) -> str | None:
    for pos in range(end_pos, -1, -1):
        event = events[pos]
        kind = event.get("kind")
        if full and kind in ("run_end", "turn_end") and event.get("final_answer") is not None:
            return str(event["final_answer"])
        if kind == "llm_call":
            message = event["response"]["message"]
            return None if _tool_calls(message) else _message_text(message)
    return None
