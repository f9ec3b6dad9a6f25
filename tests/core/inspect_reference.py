"""The model-based ``inspect`` output as it was before the streaming pass (replaykit 0.1, commit c61fbd7):
timeline rows, health and summary computed from a validated ``Run``. Kept verbatim as the reference the
streaming ``core/analysis/inspect_view.py`` must reproduce (tests/core/test_inspect_view.py)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, cast

from replaykit.core.analysis.health import (
    _BUDGET_WORDS,
    _OK_SUBAGENT,
    LOOP_MIN_REPEATS,
    Health,
    HealthLimits,
    Reason,
    _penalty,
)
from replaykit.core.replay.replay_doc import clip_text
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.canonical import canonical_json, parsed_arguments
from replaykit.core.trace.ir import (
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
from replaykit.core.trace.run import Run


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
        data = opaque.data
        label, rest = "", data
        if isinstance(data, dict):
            named = data.get("name") or data.get("event") or data.get("type")
            label = f" {_clip(named, 60)}" if isinstance(named, str) and named != opaque.name else ""
            rest = {k: v for k, v in data.items() if k not in ("name", "event", "type") and v not in (None, "", [], {})}
        shown = rest if isinstance(rest, str) else (json.dumps(_preview(rest), separators=(",", ":"),
                                                               ensure_ascii=False) if rest not in (None, {}, []) else "")
        return f"opaque {opaque.source}/{opaque.name}{label}" + (f": {_clip(shown, 100)}" if shown else "")
    return str(kind)


def _preview(value: Any, depth: int = 0) -> Any:
    """What the timeline shows of an opaque event's data: a few keys and items, short strings, 3 levels."""
    if isinstance(value, str):
        return value[:120]
    if depth >= 3:
        return "…" if isinstance(value, dict | list) else value
    if isinstance(value, dict):
        return {k: _preview(v, depth + 1) for k, v in list(value.items())[:6]}
    if isinstance(value, list):
        return [_preview(v, depth + 1) for v in value[:4]]
    return value


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
    if isinstance(event, OpaqueEvent):
        return {"source": event.source, "name": event.name,
                "source_id": event.corr.api_request_id if event.corr else None}
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
def _args_key(event: ToolCallEvent) -> str:
    """The arguments in canonical form: the same call spelled differently is still the same call."""
    value = event.arguments
    if value is None and event.raw_arguments is not None:
        try:
            value = json.loads(event.raw_arguments)
        except ValueError:
            return event.raw_arguments
    return canonical_json(value if value is not None else {})


def _tokens(event: LLMCallEvent) -> int:
    usage = event.response.usage
    if usage is None:
        return 0
    if usage.total_tokens is not None:
        return usage.total_tokens
    return (usage.input_tokens or 0) + (usage.output_tokens or 0)


def _end_status(run: Run) -> tuple[str, str | None]:
    for event in reversed(run.events):
        if isinstance(event, RunEndEvent | TurnEndEvent):
            return event.status, event.reason
    return "incomplete", None


def run_health(run: Run, *, limits: HealthLimits | None = None, with_cost: bool = True,
               cost_usd: float | None = None) -> Health:
    """Score ``run``. ``cost_usd``: its known cost when the caller already priced it; ``with_cost=False``
    skips pricing (genai-prices) altogether."""
    limits = limits or HealthLimits()
    errors = retries = tool_failures = desyncs = truncated = subagent_failures = 0
    budget = False
    tokens = 0
    unavailable = 0  # issue 28: tool calls answered by the "not available" stand-in
    calls: Counter[tuple[str, str]] = Counter()
    failed_tools: Counter[str] = Counter()
    for event in run.events:
        if isinstance(event, LLMCallEvent):
            tokens += _tokens(event)
            if event.attempt > 1:
                retries += 1
            if event.response.finish_reason == "length":
                truncated += 1
        elif isinstance(event, ToolCallEvent):
            calls[(event.name, _args_key(event))] += 1
            if event.status == "error":
                tool_failures += 1
                failed_tools[event.name] += 1
            elif event.status == "unavailable":
                unavailable += 1
        elif isinstance(event, ErrorEvent):
            errors += 1
        elif isinstance(event, DesyncEvent):
            desyncs += 1
        elif isinstance(event, SubagentEvent):
            if event.phase == "stop" and (event.status or "completed").lower() not in _OK_SUBAGENT:
                subagent_failures += 1
        if isinstance(event, RunEndEvent | TurnEndEvent) and event.reason:
            if any(word in event.reason.lower() for word in _BUDGET_WORDS):
                budget = True

    reasons: list[Reason] = []

    def add(code: str, count: int, detail: str) -> None:
        if count > 0:
            reasons.append(Reason(code, count, _penalty(code, count), detail))

    status, why = _end_status(run)
    branch = run.header.lineage is not None and run.header.lineage.relation == "branch"
    if status != "completed" and not (status == "incomplete" and branch):  # issue 28: a branch ends at its edit
        add("failed", 1, f"run {status}" + (f" ({why})" if why else ""))
    add("errors", errors, f"{errors} error event{'s' * (errors != 1)}")
    add("retries", retries, f"{retries} retried LLM call{'s' * (retries != 1)}")
    loops = sorted(((n, name) for (name, _), n in calls.items() if n >= LOOP_MIN_REPEATS), reverse=True)
    if loops:
        repeats = sum(n - 1 for n, _ in loops)
        shown = ", ".join(f"{name} x{n}" for n, name in loops[:3])
        add("loop", repeats, f"loop: same tool with same arguments ({shown})")
    if tool_failures:
        worst = ", ".join(f"{name} x{n}" for name, n in failed_tools.most_common(3))
        add("tool_failures", tool_failures, f"{tool_failures} tool failure{'s' * (tool_failures != 1)} ({worst})")
    add("desyncs", desyncs, f"{desyncs} desync{'s' * (desyncs != 1)}")
    add("truncated", truncated, f"{truncated} response{'s' * (truncated != 1)} cut at the length limit")
    if budget:
        add("budget_exhausted", 1, "iteration budget exhausted")
    add("unavailable_tools", unavailable,
        f"{unavailable} tool call{'s' * (unavailable != 1)} not executed: answered by the 'tool not available' "
        "stand-in (no recorded result matched, no tool to run)")
    add("subagent_failures", subagent_failures, f"{subagent_failures} subagent{'s' * (subagent_failures != 1)} failed")
    if tokens > limits.tokens:
        add("tokens", 1, f"{tokens} tokens (over {limits.tokens})")
    cost = cost_usd if cost_usd is not None or not with_cost else _known_cost(run)
    if cost is not None and cost > limits.cost_usd:
        add("cost", 1, f"${cost:.2f} (over ${limits.cost_usd:.2f})")
    score = max(0, 100 - sum(r.penalty for r in reasons))
    return Health(score, reasons, tokens, cost)


def _known_cost(run: Run) -> float | None:
    from replaykit.core.analysis.cost import run_cost

    value = run_cost(run).paid.value
    return None if value is None else float(value)
def summary(run: Any) -> dict[str, Any]:
    header = run.header
    return {
        "run_id": run.run_id,
        "created_at": header.created_at,
        "source": header.source.model_dump(exclude_none=True),
        "model": run.model,
        "provider": header.provider,
        "base_url": header.base_url,
        "api_mode": header.api_mode,
        "lineage": jsonsafe.model_data(header.lineage, exclude_none=True) if header.lineage else None,
        "tags": list(header.tags),
        "status": run.status,
        "steps": len(run.steps),
        "events": len(run.events),
        "failing_step": run.failing_step,
        "final_answer": run.final_answer,
        "duration": round(run.duration, 6),
        "not_imported": list(header.metadata.get("not_imported") or []),
    }


