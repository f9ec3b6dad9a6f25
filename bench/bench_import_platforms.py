"""``replaykit import --format langfuse`` of a 10,000-observation export, against ``json.loads`` of the same file.

Workload: one session of 100 traces, each an agent of 33 rounds (a GENERATION whose input is the whole
history so far, as Langfuse's OpenAI integration records it, then a TOOL observation and an EVENT) under
a root AGENT observation: 10,000 observations as pages of the observations API v2 (camelCase, input and
output as the raw JSON strings that API returns), one page a line. A 2 KB system prompt, 4 tools, tool
results of 250-2,000 characters. Baseline: ``json.loads`` of the same file, measured in the same process
(the least any importer must do: read the JSON). Figures: steps (LLM and tool calls) per second of each.

    python bench/bench_import_platforms.py [--json]
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from replaykit.adapters.langfuse import import_langfuse

TRACES = 100
ROUNDS = 33  # 1 root + 3 per round = 100 observations a trace
PAGE = 1000
T0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
TOOLS = [{"type": "function", "function": {"name": f"tool_{i}", "description": f"Tool number {i}.",
                                           "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
         for i in range(4)]


def _stamp(seconds: float) -> str:
    return (T0 + dt.timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def observations(rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    system = {"role": "system", "content": ("You are a careful agent. " * 90)[:2048]}
    clock = 0.0
    for t in range(TRACES):
        trace_id = f"trace-{t:04d}"
        user = {"role": "user", "content": f"Task {t}: gather the facts and report."}
        history: list[dict[str, Any]] = [system, user]
        root = {"id": f"{trace_id}-root", "traceId": trace_id, "type": "AGENT", "name": "agent",
                "startTime": _stamp(clock), "endTime": _stamp(clock + ROUNDS), "projectId": "p", "sessionId": "s-1",
                "input": json.dumps(user["content"]), "output": json.dumps("done")}
        out.append(root)
        for r in range(ROUNDS):
            call_id = f"call_{t}_{r}"
            name = f"tool_{r % 4}"
            asked = {"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps({"q": f"{r}"})}}]}
            last = r == ROUNDS - 1
            answer = {"role": "assistant", "content": f"Report for task {t}."} if last else asked
            start = clock + r
            out.append({"id": f"{trace_id}-g{r}", "traceId": trace_id, "type": "GENERATION", "name": "chat",
                        "parentObservationId": root["id"], "startTime": _stamp(start), "endTime": _stamp(start + 0.4),
                        "projectId": "p", "sessionId": "s-1", "model": "gpt-4o-mini",
                        "modelParameters": {"temperature": 0},
                        "input": json.dumps({"tools": TOOLS, "messages": history}), "output": json.dumps(answer),
                        "usageDetails": {"input": 500 + 300 * r, "output": 20, "total": 520 + 300 * r},
                        "costDetails": {"total": 0.0001}, "totalCost": 0.0001})
            result = "x" * rng.randint(250, 2000)
            out.append({"id": f"{trace_id}-t{r}", "traceId": trace_id, "type": "TOOL", "name": name,
                        "parentObservationId": root["id"], "startTime": _stamp(start + 0.5),
                        "endTime": _stamp(start + 0.7), "projectId": "p", "input": json.dumps({"q": f"{r}"}),
                        "output": json.dumps(result), "metadata": {"tool_call_id": call_id}})
            out.append({"id": f"{trace_id}-e{r}", "traceId": trace_id, "type": "EVENT", "name": "progress",
                        "parentObservationId": root["id"], "startTime": _stamp(start + 0.8), "projectId": "p",
                        "metadata": {"round": r}})
            history = [*history, asked, {"role": "tool", "tool_call_id": call_id, "content": result}]
        clock += ROUNDS + 10
    return out


def best(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def bench() -> list[dict[str, object]]:
    items = observations(random.Random(7))
    assert len(items) == 10_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "langfuse.jsonl"
        with path.open("w") as f:
            for start in range(0, len(items), PAGE):
                f.write(json.dumps({"data": items[start:start + PAGE], "meta": {"cursor": f"c{start}"}}) + "\n")
        runs = import_langfuse(path)
        steps = sum(1 for r in runs for e in r.events if e.kind in ("llm_call", "tool_call"))
        text = path.read_text()
        loads = best(lambda: [json.loads(line) for line in text.splitlines()])
        imported = best(lambda: import_langfuse(path), repeat=2)
        size = path.stat().st_size
    return [{"bench": f"langfuse import, {len(items):,} observations (steps/s)", "replaykit": round(steps / imported),
             "baseline": round(steps / loads), "ratio": round(loads / imported, 3),
             "note": f"baseline: json.loads of the same {size / 1e6:.0f} MB file; {steps} steps, {len(runs)} runs"},
            {"bench": "langfuse import, 10,000 observations (s)", "replaykit": round(imported, 3),
             "baseline": round(loads, 3), "ratio": round(imported / loads, 2), "note": "baseline: json.loads"}]


def main() -> int:
    rows = bench()
    if "--json" in sys.argv:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['bench']:<52} {row['replaykit']:>10} {row['baseline']:>10} x{row['ratio']}  {row['note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
