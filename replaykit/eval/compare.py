"""How one candidate play compares with its original: every figure of a run's eval record.

Nothing here is a new comparison rule: the alignment and the first divergence are ``core.diff``'s, the
money is ``core.cost``'s ledger, the health score is ``core.health``'s. This module only counts them
from the cut on (the part the candidate ran) and names the verdict (rules: docs/eval.md).
"""

from __future__ import annotations

from typing import Any

from replaykit.core.analysis.cost import run_cost
from replaykit.core.analysis.diff import DiffResult
from replaykit.core.analysis.health import run_health
from replaykit.core.analysis.timeline import parsed_arguments
from replaykit.core.trace.ir import LLMCallEvent, ToolCallEvent, TurnEndEvent
from replaykit.core.trace.run import Run

#: A candidate whose health score moved by at least this much (0-100 scale) improved or regressed.
HEALTH_MARGIN = 10
#: Below this score (the scorer's, or 0/1 for a differing/equal answer) a changed run is a regression.
PASS_SCORE = 0.5
#: Worst first: the verdict of a run played once per turn is the worst of its turns.
SEVERITY = ("failed", "regressed", "changed", "improved", "same")


def normalise(text: str | None) -> str:
    """Whitespace collapsed, case folded: the 'normalised' answer comparison."""
    return " ".join((text or "").split()).casefold()


def fidelity(diff: DiffResult, cut: int) -> dict[str, int]:
    """reused: candidate steps before the cut (served from the record); exact: live steps the alignment
    pairs with an equal recorded step; divergent: paired with a recorded step that differs; unmatched:
    candidate steps with no recorded counterpart; missing: recorded steps after the cut the candidate
    never made."""
    counts = {"reused": 0, "exact": 0, "divergent": 0, "unmatched": 0, "missing": 0}
    for row in diff.rows:
        step_b = row["step_b"]
        if step_b is None:
            counts["missing"] += row["step_a"] is not None and row["step_a"] >= cut
        elif step_b < cut:
            counts["reused"] += 1
        elif row["op"] == "equal":
            counts["exact"] += 1
        elif row["op"] == "changed":
            counts["divergent"] += 1
        else:
            counts["unmatched"] += 1
    return counts


def _tool_calls(run: Run, cut: int) -> list[tuple[str, Any]]:
    return [(s.event.name, parsed_arguments(s.event.arguments, s.event.raw_arguments))
            for s in run.steps if s.index >= cut and isinstance(s.event, ToolCallEvent)]


def tool_agreement(original: Run, candidate: Run, cut: int) -> dict[str, Any]:
    """Same tools, same arguments, same order, from the cut on."""
    recorded, played = _tool_calls(original, cut), _tool_calls(candidate, cut)
    prefix = 0
    for a, b in zip(recorded, played, strict=False):
        if a != b:
            break
        prefix += 1
    return {"same": recorded == played, "recorded": len(recorded), "candidate": len(played), "agreeing_prefix": prefix}


def per_tool(diff: DiffResult, candidate: Run, cut: int) -> dict[str, dict[str, int]]:
    """For the breakdown per tool: candidate tool calls after the cut, and how many of them diverged."""
    out: dict[str, dict[str, int]] = {}
    steps = candidate.steps
    for row in diff.rows:
        step_b = row["step_b"]
        if step_b is None or step_b < cut or not isinstance(steps[step_b].event, ToolCallEvent):
            continue
        entry = out.setdefault(steps[step_b].event.name, {"calls": 0, "divergent": 0, "unmatched": 0})
        entry["calls"] += 1
        entry["divergent"] += row["op"] == "changed"
        entry["unmatched"] += row["op"] == "inserted"
    return out


def turn_answer(run: Run, turn: int | None) -> str | None:
    """The run's final answer, or (``turn``) the answer that closed that user turn."""
    if turn is None:
        return run.final_answer
    ends = [e for e in run.events if isinstance(e, TurnEndEvent)]
    return ends[turn].final_answer if turn < len(ends) else None


def answers(original: str | None, candidate: str | None) -> dict[str, Any]:
    return {"exact": original == candidate, "normalised": normalise(original) == normalise(candidate),
            "original": original, "candidate": candidate}


def _after(run: Run, cut: int) -> tuple[int, float]:
    tokens, seconds = 0, 0.0
    for step in run.steps:
        if step.index < cut or not isinstance(step.event, LLMCallEvent):
            continue
        usage = step.event.response.usage
        if usage is not None:
            tokens += (usage.input_tokens or 0) + (usage.output_tokens or 0)
        seconds += step.event.duration or 0.0
    return tokens, seconds


def _delta(a: float | None, b: float | None, digits: int = 6) -> dict[str, float | None]:
    return {"original": None if a is None else round(a, digits), "candidate": None if b is None else round(b, digits),
            "delta": None if a is None or b is None else round(b - a, digits)}


def deltas(original: Run, candidate: Run, cut: int) -> dict[str, Any]:
    """Tokens, cost and latency of the part the candidate ran (from the cut on) next to the record's,
    and the health score of both whole runs."""
    tokens_a, seconds_a = _after(original, cut)
    tokens_b, seconds_b = _after(candidate, cut)
    ledger = run_cost(candidate, parent=original)
    recorded_cost = ledger.branch.original_after_cut.value if ledger.branch is not None else None
    live_cost = ledger.live.value
    health_a = run_health(original, with_cost=False).score
    health_b = run_health(candidate, with_cost=False).score
    return {
        "tokens": _delta(tokens_a, tokens_b, 0),
        "cost_usd": _delta(None if recorded_cost is None else float(recorded_cost),
                           None if live_cost is None else float(live_cost)),
        "latency_s": _delta(seconds_a, seconds_b, 3),
        "health": _delta(health_a, health_b, 0),
    }


def verdict(*, equal: bool, score: float, health_delta: float | None) -> str:
    """same / changed / improved / regressed for a candidate that completed (docs/eval.md)."""
    if equal:
        return "same"
    moved = health_delta or 0
    if score < PASS_SCORE or moved <= -HEALTH_MARGIN:
        return "regressed"
    if moved >= HEALTH_MARGIN:
        return "improved"
    return "changed"


def worst(verdicts: list[str]) -> str:
    return min(verdicts, key=SEVERITY.index) if verdicts else "same"
