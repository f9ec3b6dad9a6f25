"""Benchmark: replaying a run through its LangGraph graph, against the in-process replay, same run.

    PYTHONPATH=. python bench/bench_langgraph.py [--steps 1000]

Baseline: ``replaykit.core.replay.replay_run`` (serves every step without any framework). Measured:
``langgraph_graph.replay`` (a real compiled StateGraph: model node + ToolNode, one superstep per step),
the same with a SqliteSaver checkpoint after every node, ``export --format langgraph`` (render, compile,
write) and the size of the exported module. The graph is expected to be far slower than the baseline:
LangGraph's per-superstep machinery dominates; the figure to watch is that it stays linear in steps.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from replaykit.core.replay import replay_run
from replaykit.core.store import RunStore
from replaykit.engines.langgraph import graph as langgraph_graph
from replaykit.exporters import export
from replaykit.testing.engine_runs import record_long_run


def _time(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--json", action="store_true", help="last stdout line: JSON rows for bench/run_all.py")
    args = parser.parse_args()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(tmp)
        warm = store.load(record_long_run(store, 10))
        langgraph_graph.replay(warm)  # imports and first-call costs out of the measurement
        for steps in (args.steps // 4, args.steps):
            run = store.load(record_long_run(store, steps))
            n = len(run.steps)
            base = _time(lambda run=run: replay_run(run))
            graph = _time(lambda run=run: langgraph_graph.replay(run))
            db = Path(tmp) / f"cp{steps}.sqlite"
            checkpointed = _time(lambda run=run, db=db: langgraph_graph.replay(run, checkpoint_db=db))
            out = Path(tmp) / f"graph{steps}.py"
            exported = _time(lambda run=run, out=out: export(run, "langgraph", out, force=True))
            print(f"{n:5d} steps  baseline replay_run {base:.4f}s ({n / base:,.0f} steps/s)  "
                  f"graph {graph:.3f}s ({n / graph:,.0f} steps/s)  graph+sqlite {checkpointed:.3f}s  "
                  f"export {exported:.3f}s  module {out.stat().st_size / 1e6:.2f} MB")
            # Rates in steps/s; ratio = the graph's rate over the framework-free replay's (expected << 1).
            rows.append({"bench": f"langgraph replay {n} steps (steps/s)", "replaykit": n / graph,
                         "baseline": n / base, "ratio": base / graph,
                         "note": "real StateGraph vs replay_run; watch linearity in steps"})
            rows.append({"bench": f"langgraph replay + sqlite {n} steps (steps/s)", "replaykit": n / checkpointed,
                         "baseline": n / base, "ratio": base / checkpointed,
                         "note": f"checkpoint after every node; export {export:.3f}s, "
                                 f"module {out.stat().st_size / 1e6:.2f} MB"})
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
