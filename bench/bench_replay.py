"""Benchmark: in-process replay throughput (events/s) against a naive baseline, in the same run.

    PYTHONPATH=. python bench/bench_replay.py [--steps 1000] [--repeat 5]

The run is the long-session workload (bench/long_session.py): a real-shaped Hermes recording.

Baseline: ``json.loads`` of every trace line plus a dict walk that counts steps (what any tool reading
the file must at least do). Measured: ``replay_run`` on a loaded Run (the in-process replay), and
``replay_path`` end to end (stream, validate into IR models, replay, verify the file is unchanged).
Target (product.md): at least 50,000 events/s for the in-process replay.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from long_session import write_long_session_run

from replaykit.core.replay.replay import replay_path, replay_run
from replaykit.core.trace.run import Run


def _best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def naive_baseline(path: Path) -> int:
    steps = 0
    with open(path, "rb") as handle:
        handle.readline()
        for line in handle:
            event = json.loads(line)
            if event.get("kind") in ("llm_call", "tool_call"):
                steps += 1
                _ = event.get("response", {}).get("message") or event.get("result")
    return steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="last line: JSON rows for bench/run_all.py")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_long_session_run(Path(tmp) / "long.jsonl", args.steps)
        run = Run.load(path)
        events = len(run.events)
        baseline = _best(lambda: naive_baseline(path), args.repeat)
        in_process = _best(lambda: replay_run(run), args.repeat)
        end_to_end = _best(lambda: replay_path(path), args.repeat)
        rows = [
            ("naive baseline (json.loads + dict walk)", baseline),
            ("replay_run (in-process, loaded Run)", in_process),
            ("replay_path (load + validate + replay + sha256 check)", end_to_end),
        ]
        print(f"run: {events} events, {len(run.steps)} steps, {path.stat().st_size / 1e6:.2f} MB")
        for name, seconds in rows:
            print(f"{name:58s} {seconds * 1e3:8.2f} ms  {events / seconds:12,.0f} events/s")
        rate = events / in_process
        print(f"in-process replay: {rate:,.0f} events/s (target >= 50,000): {'OK' if rate >= 50_000 else 'MISS'}")
        if args.json:
            base_rate = events / baseline
            print(json.dumps([
                {"bench": f"replay in-process events/s ({args.steps}-step long session)", "replaykit": round(rate),
                 "baseline": round(base_rate), "ratio": round(rate / base_rate, 3),
                 "note": f"target >= 50,000 events/s: {'OK' if rate >= 50_000 else 'MISS'}"},
                {"bench": f"replay end-to-end events/s ({args.steps}-step long session)", "replaykit": round(events / end_to_end),
                 "baseline": round(base_rate), "ratio": round(baseline / end_to_end, 3),
                 "note": "load + validate + replay + sha256 check"},
            ]))


if __name__ == "__main__":
    main()
