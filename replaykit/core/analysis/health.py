"""A run's health score: 0-100 with the reasons a reviewer would look for, listed.

Each signal found in the run costs points, capped per signal so one kind of trouble cannot hide the
others (a run with 40 tool failures and a loop still shows both). The score is 100 minus the sum.

Signals (codes are stable: ``--json`` consumers and ``export --min-health`` rely on them):

- ``failed``: the run (or its last turn) ended failed, interrupted, or never ended.
- ``errors``: error events (provider errors, tool crashes, adapter problems).
- ``retries``: LLM calls made again after a failed attempt (``attempt > 1``).
- ``loop``: the same tool called with the same arguments three or more times in one run.
- ``tool_failures``: tool calls with status ``error``.
- ``desyncs``: replay asked for something the record did not hold.
- ``truncated``: responses cut by the length limit (``finish_reason`` ``length``).
- ``budget_exhausted``: the agent stopped because its iteration budget ran out.
- ``subagent_failures``: subagents that stopped with a status other than completed.
- ``tokens`` / ``cost``: a run far above the usual size (thresholds in ``HealthLimits``).

Cost is only counted when it is known (``core.cost``); an unknown price never costs points.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replaykit.core.trace.canonical import canonical_json

if TYPE_CHECKING:  # the IR is not imported at run time: the streaming ``inspect`` never loads pydantic
    from replaykit.core.trace.run import Run

#: Words in a turn/run end reason that mean the iteration budget ran out (Hermes: max_iterations_reached).
_BUDGET_WORDS = ("max_iterations", "iteration_budget", "iteration budget", "budget_exhausted", "max_turns")
_OK_SUBAGENT = frozenset({"completed", "ok", "success", "succeeded", "done"})
LOOP_MIN_REPEATS = 3


@dataclass(frozen=True)
class HealthLimits:
    """Where a run starts to count as expensive (points are taken above these)."""

    tokens: int = 500_000
    cost_usd: float = 5.0


@dataclass(frozen=True)
class Reason:
    code: str
    count: int
    penalty: int
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "count": self.count, "penalty": self.penalty, "detail": self.detail}


@dataclass(frozen=True)
class Health:
    score: int
    reasons: list[Reason] = field(default_factory=list)
    tokens: int = 0
    cost_usd: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "reasons": [r.to_json() for r in self.reasons],
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
        }

    def summary(self) -> str:
        """``72/100: 3 tool failures; loop: read_file x4`` (one line)."""
        if not self.reasons:
            return f"{self.score}/100: no problems found"
        return f"{self.score}/100: " + "; ".join(r.detail for r in self.reasons)


# (points per occurrence, cap) for each counted signal
_WEIGHTS: dict[str, tuple[int, int]] = {
    "failed": (30, 30),
    "errors": (5, 20),
    "retries": (3, 15),
    "loop": (5, 25),
    "tool_failures": (6, 30),
    "desyncs": (8, 24),
    "truncated": (8, 24),
    "budget_exhausted": (25, 25),
    "subagent_failures": (10, 20),
    "tokens": (10, 10),
    "cost": (10, 10),
}


def _penalty(code: str, count: int) -> int:
    per, cap = _WEIGHTS[code]
    return min(per * count, cap)


def _args_key(event: dict[str, Any]) -> str:
    """The arguments in canonical form: the same call spelled differently is still the same call."""
    value = event.get("arguments")
    raw = event.get("raw_arguments")
    if value is None and raw is not None:
        try:
            value = json.loads(raw)
        except ValueError:
            return str(raw)
    return canonical_json(value if value is not None else {})


def _tokens(usage: dict[str, Any] | None) -> int:
    if usage is None:
        return 0
    if usage.get("total_tokens") is not None:
        return int(usage["total_tokens"])
    return int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)


class HealthTally:
    """The signals of a run, counted one event at a time from the JSON of its trace lines (defaults may
    be absent): the streaming ``inspect`` feeds it raw lines, ``run_health`` a loaded run's events.
    Keeps counters only (and one counter per distinct tool call), never the events."""

    def __init__(self) -> None:
        self.errors = self.retries = self.tool_failures = self.desyncs = self.truncated = 0
        self.subagent_failures = self.tokens = 0
        self.budget = False
        self.calls: Counter[tuple[str, str]] = Counter()
        self.failed_tools: Counter[str] = Counter()
        self.end_status: tuple[str, str | None] = ("incomplete", None)

    def add(self, event: dict[str, Any]) -> None:
        kind = event["kind"]
        if kind == "llm_call":
            response = event["response"]
            self.tokens += _tokens(response.get("usage"))
            if event.get("attempt", 1) > 1:
                self.retries += 1
            if response.get("finish_reason") == "length":
                self.truncated += 1
        elif kind == "tool_call":
            self.calls[(event["name"], _args_key(event))] += 1
            if event.get("status") == "error":
                self.tool_failures += 1
                self.failed_tools[event["name"]] += 1
        elif kind == "error":
            self.errors += 1
        elif kind == "desync":
            self.desyncs += 1
        elif kind == "subagent":
            if event["phase"] == "stop" and (event.get("status") or "completed").lower() not in _OK_SUBAGENT:
                self.subagent_failures += 1
        elif kind in ("run_end", "turn_end"):
            reason = event.get("reason")
            self.end_status = (event.get("status", "completed"), reason)
            if reason and any(word in reason.lower() for word in _BUDGET_WORDS):
                self.budget = True

    def health(self, limits: HealthLimits | None = None, cost: float | None = None) -> Health:
        """The score; ``cost``: the run's known cost in USD (None: unknown, costs no points)."""
        limits = limits or HealthLimits()
        reasons: list[Reason] = []

        def add(code: str, count: int, detail: str) -> None:
            if count > 0:
                reasons.append(Reason(code, count, _penalty(code, count), detail))

        status, why = self.end_status
        if status != "completed":
            add("failed", 1, f"run {status}" + (f" ({why})" if why else ""))
        errors, retries, tool_failures = self.errors, self.retries, self.tool_failures
        add("errors", errors, f"{errors} error event{'s' * (errors != 1)}")
        add("retries", retries, f"{retries} retried LLM call{'s' * (retries != 1)}")
        loops = sorted(((n, name) for (name, _), n in self.calls.items() if n >= LOOP_MIN_REPEATS), reverse=True)
        if loops:
            repeats = sum(n - 1 for n, _ in loops)
            shown = ", ".join(f"{name} x{n}" for n, name in loops[:3])
            add("loop", repeats, f"loop: same tool with same arguments ({shown})")
        if tool_failures:
            worst = ", ".join(f"{name} x{n}" for name, n in self.failed_tools.most_common(3))
            add("tool_failures", tool_failures,
                f"{tool_failures} tool failure{'s' * (tool_failures != 1)} ({worst})")
        desyncs, truncated, subagents = self.desyncs, self.truncated, self.subagent_failures
        add("desyncs", desyncs, f"{desyncs} desync{'s' * (desyncs != 1)}")
        add("truncated", truncated, f"{truncated} response{'s' * (truncated != 1)} cut at the length limit")
        if self.budget:
            add("budget_exhausted", 1, "iteration budget exhausted")
        add("subagent_failures", subagents, f"{subagents} subagent{'s' * (subagents != 1)} failed")
        if self.tokens > limits.tokens:
            add("tokens", 1, f"{self.tokens} tokens (over {limits.tokens})")
        if cost is not None and cost > limits.cost_usd:
            add("cost", 1, f"${cost:.2f} (over ${limits.cost_usd:.2f})")
        score = max(0, 100 - sum(r.penalty for r in reasons))
        return Health(score, reasons, self.tokens, cost)


# What no health signal reads (``run_health`` dumps each event without it: conversation text, ids)
_NOT_COUNTED = {"request": True, "response": {"message"}, "result": True, "result_blocks": True, "corr": True,
                "message": True, "provider_details": True}


def run_health(run: Run, *, limits: HealthLimits | None = None, with_cost: bool = True,
               cost_usd: float | None = None) -> Health:
    """Score ``run``. ``cost_usd``: its known cost when the caller already priced it; ``with_cost=False``
    skips pricing (genai-prices) altogether."""
    from replaykit.core.trace import jsonsafe

    tally = HealthTally()
    for event in run.events:
        tally.add(jsonsafe.model_data(event, exclude_none=True, exclude=_NOT_COUNTED))
    cost = cost_usd if cost_usd is not None or not with_cost else _known_cost(run)
    return tally.health(limits, cost)


def _known_cost(run: Run) -> float | None:
    from replaykit.core.analysis.cost import run_cost

    value = run_cost(run).paid.value
    return None if value is None else float(value)
