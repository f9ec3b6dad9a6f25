"""``replaykit stats``: per-run facts (the task, run on the workers) and the corpus report (the driver).

Every figure is a sum, a count or a distribution over runs, so the report does not depend on the order
in which partitions finish; the driver still folds the runs in input order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from replaykit.core.trace.ir import ErrorEvent, LLMCallEvent, ToolCallEvent

from ._task import RunResult

WORST = 10
HEALTH_BUCKETS = ("0-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "70-79", "80-89", "90-100")


def stats_task(path: str, options: Mapping[str, Any]) -> RunResult:
    """Facts of one run: size, tokens, cost, duration, health, per model and per tool counts."""
    from replaykit.core.analysis.cost import run_cost
    from replaykit.core.analysis.health import run_health
    from replaykit.core.trace.run import Run

    run = Run.load(path)
    cost = run_cost(run).paid.value if options.get("cost", True) else None
    cost_usd = None if cost is None else float(cost)
    health = run_health(run, cost_usd=cost_usd, with_cost=bool(options.get("cost", True)))
    tools: dict[str, list[int]] = {}
    models: dict[str, list[int]] = {}
    tokens_in = tokens_out = 0
    for event in run.events:
        if isinstance(event, LLMCallEvent):
            model = event.response.model or event.request.model or run.header.model or "unknown"
            counts = models.setdefault(model, [0, 0])
            counts[0] += 1
            counts[1] += event.response.finish_reason in ("error", "content_filter")
            usage = event.response.usage
            if usage is not None:
                tokens_in += usage.input_tokens or 0
                tokens_out += usage.output_tokens or 0
        elif isinstance(event, ToolCallEvent):
            counts = tools.setdefault(event.name, [0, 0])
            counts[0] += 1
            counts[1] += event.status == "error"
        elif isinstance(event, ErrorEvent) and event.where == "llm":
            model = (event.request.model if event.request else None) or run.header.model or "unknown"
            counts = models.setdefault(model, [0, 0])
            counts[0] += 1  # a failed attempt is a call that failed
            counts[1] += 1
    info = {
        "run_id": run.run_id,
        "framework": run.header.source.framework,
        "model": run.model or "unknown",
        "status": run.status,
        "steps": len(run.steps),
        "llm_calls": sum(n for n, _ in models.values()),
        "tool_calls": sum(n for n, _ in tools.values()),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "cost_usd": cost_usd,
        "duration": round(run.duration, 6),
        "health": health.score,
        "reasons": [r.detail for r in health.reasons],
        "tools": tools,
        "models": models,
    }
    return RunResult(source=path, run_id=run.run_id, info=info)


def _quantile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def _rate(failures: int, calls: int) -> float:
    return round(failures / calls, 4) if calls else 0.0


def corpus_report(infos: Iterable[Mapping[str, Any]], damaged: list[dict[str, str]]) -> dict[str, Any]:
    """The ``replaykit stats --json`` document."""
    runs = steps = llm_calls = tool_calls = tokens_in = tokens_out = unknown_cost = 0
    cost = 0.0
    durations: list[float] = []
    healths: list[int] = []
    buckets: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    frameworks: Counter[str] = Counter()
    per_model: dict[str, dict[str, Any]] = {}
    per_tool: dict[str, list[int]] = {}
    worst: list[tuple[int, str, list[str]]] = []
    for info in infos:
        runs += 1
        steps += info["steps"]
        llm_calls += info["llm_calls"]
        tool_calls += info["tool_calls"]
        tokens_in += info["input_tokens"]
        tokens_out += info["output_tokens"]
        if info["cost_usd"] is None:
            unknown_cost += 1
        else:
            cost += info["cost_usd"]
        durations.append(info["duration"])
        healths.append(info["health"])
        buckets[HEALTH_BUCKETS[min(info["health"] // 10, 9)]] += 1
        statuses[info["status"]] += 1
        frameworks[info["framework"]] += 1
        model = per_model.setdefault(info["model"], {"runs": 0, "tokens": 0, "cost_usd": 0.0, "unknown_cost_runs": 0,
                                                     "calls": 0, "failures": 0})
        model["runs"] += 1
        model["tokens"] += info["input_tokens"] + info["output_tokens"]
        if info["cost_usd"] is None:
            model["unknown_cost_runs"] += 1
        else:
            model["cost_usd"] += info["cost_usd"]
        for name, (calls, failures) in info["models"].items():
            m = per_model.setdefault(name, {"runs": 0, "tokens": 0, "cost_usd": 0.0, "unknown_cost_runs": 0,
                                            "calls": 0, "failures": 0})
            m["calls"] += calls
            m["failures"] += failures
        for name, (calls, failures) in info["tools"].items():
            t = per_tool.setdefault(name, [0, 0])
            t[0] += calls
            t[1] += failures
        worst.append((info["health"], info["run_id"], info["reasons"]))
    durations.sort()
    worst.sort(key=lambda w: (w[0], w[1]))
    return {
        "runs": runs,
        "damaged": damaged,
        "steps": steps,
        "llm_calls": llm_calls,
        "tool_calls": tool_calls,
        "tokens": {"input": tokens_in, "output": tokens_out, "total": tokens_in + tokens_out},
        "cost_usd": {"known": round(cost, 6), "runs_with_unknown_cost": unknown_cost},
        "duration_s": {
            "total": round(sum(durations), 3),
            "p50": _quantile(durations, 0.5),
            "p90": _quantile(durations, 0.9),
            "max": durations[-1] if durations else None,
        },
        "status": dict(sorted(statuses.items())),
        "frameworks": dict(sorted(frameworks.items())),
        "health": {
            "mean": round(sum(healths) / len(healths), 2) if healths else None,
            "min": min(healths) if healths else None,
            "histogram": {b: buckets.get(b, 0) for b in HEALTH_BUCKETS},
        },
        "models": [
            {"model": name, **{k: (round(v, 6) if isinstance(v, float) else v) for k, v in m.items()},
             "failure_rate": _rate(m["failures"], m["calls"])}
            for name, m in sorted(per_model.items(), key=lambda kv: (-kv[1]["calls"], kv[0]))
        ],
        "tools": [
            {"tool": name, "calls": c, "failures": f, "failure_rate": _rate(f, c)}
            for name, (c, f) in sorted(per_tool.items(), key=lambda kv: (-kv[1][0], kv[0]))
        ],
        "worst_runs": [{"run_id": rid, "health": score, "reasons": reasons} for score, rid, reasons in worst[:WORST]],
    }
