"""Rebuild IR events from a stored Hermes conversation (importers: state.db, JSON snapshots, hermes-unroll).

These sources hold the conversation, not the calls: each assistant message becomes an ``llm_call`` whose
request is the system prompt plus every message before it, all marked ``reconstructed``. What the source
lacked (request parameters, per-call usage, failed attempts) is listed in the warnings, never invented.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from replaykit.adapters.base import ImportedRun
from replaykit.core.trace.bridge import BRIDGE_TOOL_NAME, underlying_call
from replaykit.core.trace.codecs.openai_chat import decode_message
from replaykit.core.trace.interop import Losses
from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    Provenance,
    RunHeader,
    TextPart,
    ToolSpec,
    UnderlyingCall,
    Usage,
)
from replaykit.core.trace.recorder import Recorder

R = Provenance.RECONSTRUCTED
# Keys Hermes keeps on its internal messages that never reach a provider.
_INTERNAL = {"_db_persisted", "finish_reason", "tool_name", "timestamp", "_pre_verify_synthetic"}


def clean_message(msg: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in msg.items() if k not in _INTERNAL and not k.startswith("_")}
    if out.get("reasoning") is None:
        out.pop("reasoning", None)
    calls = out.get("tool_calls")
    if isinstance(calls, str):
        try:
            calls = json.loads(calls)
        except ValueError:
            calls = None
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [{k: v for k, v in c.items() if k not in ("call_id", "response_item_id")}
                             for c in calls if isinstance(c, Mapping)]
    else:
        out.pop("tool_calls", None)
    return out


def build_run(header: RunHeader, messages: Sequence[Mapping[str, Any]], *, system_prompt: str | None,
              tools: Sequence[ToolSpec] | None = None, times: Sequence[float | None] | None = None,
              finish_reasons: Sequence[str | None] | None = None, usage: Mapping[str, Any] | None = None,
              meta: Mapping[str, Any] | None = None, warnings: list[str] | None = None,
              losses: Losses | None = None, stored_times: bool = False,
              subagents: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
              launched: dict[str, tuple[str, int | None]] | None = None) -> ImportedRun:
    """Events for a chat-format conversation (``messages`` excludes the system prompt). A tool message's
    ``tool_name`` (what Hermes ran) beside a Tool Search ``tool_call`` makes the event's ``underlying``, as
    the live capture records it. ``times`` are when each call happened; with ``stored_times`` they are
    when each message was stored (Hermes's ``timestamp``), so an LLM or tool call spans from the message
    before it to its own. ``subagents``: per tool call id, the sessions that call delegated to (each a
    ``SubagentEvent``'s fields): written as the capture writes them, a ``start`` before the call and a
    ``stop`` after it; ``launched`` is then filled with each child session's (start event id, step of the
    LLM call that asked for it), for the child's lineage."""
    rec = Recorder(header, None)
    warnings = list(warnings or [])
    if meta:
        rec.meta(dict(meta), provenance=R)
    context: list[Message] = []
    if system_prompt:
        context.append(Message(role="system", parts=[TextPart(text=system_prompt)]))
    else:
        warnings.append("no system prompt in the source: requests are reconstructed without it")
    args_of: dict[str, tuple[str, Any, str | None, str]] = {}
    origin: dict[str, str] = {}
    turn = 0
    final: str | None = None
    in_turn = False
    last_t: float | None = None
    steps = 0
    step_of: dict[str, int] = {}
    for i, raw in enumerate(messages):
        t = times[i] if times and i < len(times) else None
        start, took = t, None
        if stored_times and t is not None and last_t is not None and last_t <= t:
            # A call ran from the message before it to its own message (when Hermes stored each).
            start, took = last_t, t - last_t
        last_t = t if t is not None else last_t
        msg = clean_message(raw)
        role = msg.get("role")
        ir = decode_message(msg)
        if role == "user":
            if in_turn:
                rec.turn_end(final, status="completed", sync=False, provenance=R, t=last_t)
            rec.turn_start(ir, turn=turn, provenance=R, t=t)
            turn, in_turn, final = turn + 1, True, None
            context.append(ir)
        elif role == "assistant":
            finish = (finish_reasons[i] if finish_reasons and i < len(finish_reasons) else None) or (
                "tool_calls" if ir.tool_calls else "stop")
            event = rec.llm_call(list(context), LLMResponse(message=ir, finish_reason=finish), model=header.model,
                                 tools=tools, provenance=R, t=start, duration=took)
            step_of[event.id], steps = steps, steps + 1
            for call in ir.tool_calls:
                args_of[call.id] = (call.name, call.arguments, call.raw_arguments, event.id)
                origin[call.id] = event.id
            if not ir.tool_calls:
                final = ir.text
            context.append(ir)
        elif role == "tool":
            call_id = str(msg.get("tool_call_id") or "")
            name, arguments, raw_args, llm_id = args_of.get(call_id, (str(msg.get("name") or raw.get("tool_name") or ""), None, None, ""))
            content = msg.get("content")
            children = (subagents or {}).get(call_id, ())
            for child in children:
                started = rec.subagent("start", launched_by=call_id, provenance=R, t=start,
                                       **{k: child.get(k) for k in ("child_run_id", "child_session_id", "goal")})
                if launched is not None and child.get("child_session_id"):
                    launched[str(child["child_session_id"])] = (started.id, step_of.get(llm_id))
            steps += 1
            rec.tool_call(call_id, name, arguments, raw_arguments=raw_args,
                          result=content if isinstance(content, str) else json.dumps(content),
                          llm_call_id=llm_id or None, provenance=R, t=start, duration=took,
                          underlying=_underlying(name, arguments, raw.get("tool_name")))
            for child in children:
                rec.subagent("stop", provenance=R, t=t,
                             **{k: child.get(k) for k in ("child_run_id", "child_session_id", "status", "summary")})
            context.append(ir)
        else:
            context.append(ir)
    if in_turn:
        rec.turn_end(final, status="completed", sync=False, provenance=R, t=last_t)
    if usage:
        rec.meta({"usage_total": dict(usage)}, provenance=R)
    return ImportedRun(header=header, events=list(rec.events), warnings=warnings, losses=losses)


def _underlying(name: str, arguments: Any, ran: Any) -> UnderlyingCall | None:
    """The tool a bridged call stood for: the tool Hermes names as run (``ran``, a stored tool message's
    ``tool_name``) when it differs from the bridge, else what the bridge's arguments name
    (``core.trace.bridge``); None for a call that is its own tool."""
    target, inner = underlying_call(name, arguments)
    if name == BRIDGE_TOOL_NAME and isinstance(ran, str) and ran and ran != name:
        return UnderlyingCall(name=ran, arguments=inner if target == ran else None)
    if target != name:
        return UnderlyingCall(name=target, arguments=inner)
    return None


def usage_of(data: Mapping[str, Any]) -> Usage | None:
    if not data:
        return None
    return Usage(input_tokens=data.get("input_tokens"), output_tokens=data.get("output_tokens"))
