"""Benchmark: replaying the long-session workload through its real LangGraph StateGraph.

    PYTHONPATH=. python bench/bench_langgraph.py [--steps 250 1000] [--json]

Workload: ``bench/long_session.py`` (a real-shaped Hermes session recorded by replaykit's own plugin:
10 steps per user turn, 6 KB system prompt, 8 tools, tool results of 250-2,000 characters, all history
kept), at N = 250 and N = 1000 steps. Measured, CPU time after imports (``time.process_time``: every
thread: a ToolNode runs live tools in a pool, the SqliteSaver writes in a background thread), steps =
LLM + tool steps, each figure the best of ``REPEATS`` runs taken in turn with its baselines (the machine
is shared: the minimum is the run least disturbed by other work, as ``timeit`` advises):

- ``langgraph_graph.replay(run)``: model node + tools node through ``tools_condition``, one superstep per
  step, no checkpointer;
- the same with a ``SqliteSaver`` checkpoint after every node (``durability="sync"``), and the size of
  the SQLite file;
- baseline, same run, same process: ``replaykit.core.replay.replay.replay_run`` (serves every step without a
  framework) and a bare LangGraph loop of the same number of supersteps doing nothing (the framework's
  own floor).

Targets (issue 13): steps/s at 1000 within 15% of steps/s at 250 (linear), at least 2,000 steps/s;
with a checkpoint per node at least 300 steps/s at 1000 steps.
"""

from __future__ import annotations

import argparse
import json
import operator
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from long_session import write_long_session_run  # noqa: E402

from replaykit.core.replay.replay import replay_run  # noqa: E402
from replaykit.core.trace.run import Run  # noqa: E402
from replaykit.engines.langgraph import graph as langgraph_graph  # noqa: E402

TARGET_STEPS_PER_S = 2000.0
TARGET_SQLITE_STEPS_PER_S = 300.0
TARGET_LINEARITY = 0.15  # steps/s at the largest N at most 15% below steps/s at the smallest
REPEATS = 5  # each figure: the best of this many runs (SQLite: of two)


def _cpu(fn: Any) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


class _FloorState(TypedDict):
    n: Annotated[list[int], operator.add]


def framework_floor(supersteps: int) -> float:
    """CPU seconds of a bare two-node LangGraph loop of ``supersteps`` supersteps (nodes do nothing)."""
    from langgraph.graph import END, START, StateGraph

    graph = StateGraph(_FloorState)
    graph.add_node("a", lambda s: {"n": [1]})
    graph.add_node("b", lambda s: {"n": [2]})
    graph.add_edge(START, "a")
    graph.add_conditional_edges("a", lambda s: END if len(s["n"]) >= supersteps else "b", {"b": "b", END: END})
    graph.add_edge("b", "a")
    app = graph.compile()
    config = {"recursion_limit": supersteps + 10}
    app.invoke({"n": []}, config)
    return _cpu(lambda: app.invoke({"n": []}, config))


def bench(sizes: list[int]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        warm = Run.load(write_long_session_run(Path(tmp) / "warm.jsonl", 20))
        langgraph_graph.replay(warm)  # imports and first-call costs out of the measurement
        for n in sizes:
            run = Run.load(write_long_session_run(Path(tmp) / f"long{n}.jsonl", n))
            steps = len(run.steps)
            base, graph, floor, sqlite = [], [], [], []
            for i in range(REPEATS):
                base.append(_cpu(lambda run=run: replay_run(run)))
                floor.append(framework_floor(steps))
                graph.append(_cpu(lambda run=run: langgraph_graph.replay(run)))
                if i < 2:
                    db = Path(tmp) / f"cp{n}-{i}.sqlite"
                    sqlite.append(_cpu(lambda run=run, db=db: langgraph_graph.replay(run, checkpoint_db=db)))
            rows.append({"steps": steps, "graph_cpu_s": round(min(graph), 4),
                         "graph_steps_per_s": round(steps / min(graph), 1),
                         "sqlite_cpu_s": round(min(sqlite), 4), "sqlite_steps_per_s": round(steps / min(sqlite), 1),
                         "sqlite_mb": round(db.stat().st_size / 1e6, 2),
                         "baseline_replay_run_steps_per_s": round(steps / min(base), 1),
                         "baseline_bare_langgraph_steps_per_s": round(steps / min(floor), 1)})
    small, large = rows[0], rows[-1]
    slowdown = 1 - large["graph_steps_per_s"] / small["graph_steps_per_s"]
    checks = {
        "steps_per_s": {"value": large["graph_steps_per_s"], "target": f">= {TARGET_STEPS_PER_S:g}",
                        "ok": large["graph_steps_per_s"] >= TARGET_STEPS_PER_S},
        "linearity": {"value": round(slowdown, 3), "target": f"<= {TARGET_LINEARITY}",
                      "ok": slowdown <= TARGET_LINEARITY},
        "sqlite_steps_per_s": {"value": large["sqlite_steps_per_s"], "target": f">= {TARGET_SQLITE_STEPS_PER_S:g}",
                               "ok": large["sqlite_steps_per_s"] >= TARGET_SQLITE_STEPS_PER_S},
    }
    return {"benchmark": "langgraph", "workload": "long-session", "rows": rows, "targets": checks}


def contract_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """run_all.py rows (rates: higher is better; ratio = replaykit / baseline)."""
    out: list[dict[str, Any]] = []
    targets = result["targets"]
    largest = result["rows"][-1]["steps"]
    for r in result["rows"]:
        big = r["steps"] == largest
        verdict = (f" (target {targets['steps_per_s']['target']}: {'OK' if targets['steps_per_s']['ok'] else 'MISS'};"
                   f" slowdown vs smallest N {targets['linearity']['value']:.0%}, target <= 15%:"
                   f" {'OK' if targets['linearity']['ok'] else 'MISS'})") if big else ""
        out.append({"bench": f"langgraph replay {r['steps']} steps (steps/s)", "replaykit": r["graph_steps_per_s"],
                    "baseline": r["baseline_bare_langgraph_steps_per_s"],
                    "ratio": r["graph_steps_per_s"] / r["baseline_bare_langgraph_steps_per_s"],
                    "note": "long session, real StateGraph vs a bare LangGraph loop of as many supersteps" + verdict})
        sq = targets["sqlite_steps_per_s"]
        out.append({"bench": f"langgraph replay + sqlite {r['steps']} steps (steps/s)",
                    "replaykit": r["sqlite_steps_per_s"], "baseline": r["graph_steps_per_s"],
                    "ratio": r["sqlite_steps_per_s"] / r["graph_steps_per_s"],
                    "note": f"checkpoint per node vs none; file {r['sqlite_mb']} MB"
                            + (f" (target {sq['target']}: {'OK' if sq['ok'] else 'MISS'})" if big else "")})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[250, 1000])
    parser.add_argument("--json", action="store_true", help="last stdout line: JSON rows for bench/run_all.py")
    args = parser.parse_args()
    result = bench(sorted(args.steps))
    if args.json:
        print(json.dumps(result, indent=2))
        print(json.dumps(contract_rows(result)))
        return 0
    for r in result["rows"]:
        print(f"{r['steps']:5d} steps  graph {r['graph_cpu_s']:.3f}s ({r['graph_steps_per_s']:,.0f} steps/s)  "
              f"graph+sqlite {r['sqlite_cpu_s']:.3f}s ({r['sqlite_steps_per_s']:,.0f} steps/s, {r['sqlite_mb']} MB)  "
              f"baseline replay_run {r['baseline_replay_run_steps_per_s']:,.0f} steps/s, "
              f"bare LangGraph loop {r['baseline_bare_langgraph_steps_per_s']:,.0f} steps/s")
    for name, check in result["targets"].items():
        print(f"{name}: {check['value']} (target {check['target']}) {'ok' if check['ok'] else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
